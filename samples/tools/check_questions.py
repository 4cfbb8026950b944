#!/usr/bin/env python3
"""Check samples/questions.txt: every gold answer must appear in its cited span.

    python3 samples/tools/check_questions.py

Text files are checked on the cited lines (whitespace-normalised); the DOCX on
the cited w:p paragraphs; the PDF on the cited pages, extracted with
`pdftotext` (poppler-utils). Exits non-zero if any answer is missing.
"""

import csv
import os
import shutil
import subprocess
import sys
import xml.dom.minidom
import zipfile

SAMPLES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def span_text(path: str, start: int, end: int) -> str:
    if path.endswith(".pdf"):
        if shutil.which("pdftotext") is None:
            raise RuntimeError("pdftotext not installed")
        text = subprocess.run(["pdftotext", "-f", str(start), "-l", str(end), "-layout", path, "-"],
                              capture_output=True, text=True, check=True).stdout
    elif path.endswith(".docx"):
        with zipfile.ZipFile(path) as archive:
            dom = xml.dom.minidom.parseString(archive.read("word/document.xml"))
        paragraphs = dom.getElementsByTagName("w:p")[start - 1:end]
        text = " ".join("".join(t.firstChild.data for t in p.getElementsByTagName("w:t")
                                if t.firstChild) for p in paragraphs)
    else:
        with open(path, encoding="utf-8") as handle:
            text = " ".join(handle.read().splitlines()[start - 1:end])
    return " ".join(text.split())


def main() -> int:
    with open(os.path.join(SAMPLES, "questions.txt"), encoding="utf-8") as handle:
        rows = list(csv.DictReader((l for l in handle if not l.startswith("#")), delimiter="\t"))
    failures = 0
    for row in rows:
        path = os.path.join(SAMPLES, row["path"])
        text = span_text(path, int(row["line_start"]), int(row["line_end"]))
        ok = row["answer"] in text
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {row['path']}:{row['line_start']}-{row['line_end']}"
              f"  {row['answer']!r}")
    print(f"{len(rows)} questions, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
