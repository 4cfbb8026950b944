#!/usr/bin/env python3
"""Word 97-2003 documents read by docqa against antiword, another reader.

The documents are Apache POI's test documents (Debian's libapache-poi-java
source, fetched with `apt-get source --download-only`, which needs deb-src
lines in the apt sources; or --files DIR): 137 .doc files from Word 97 to
2016, LibreOffice and others, collected from POI's bug reports (Word 6/95
files, encrypted ones and damaged ones among them). antiword (Debian's
`antiword`; `-w 0`, no wrapping) reads each. Both texts are case-folded
word multisets; docqa's "[footnotes]"-style block labels are taken out,
and antiword's "[pic]" marks. Recall is the share of antiword's words
docqa has, precision the share of docqa's that antiword has; a file either
refuses is listed apart.

Usage: python3 tests/bench/ingest/doc_check.py DOCQA [--files DIR]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess

import benchlib
import sys
import tempfile


def fetch(work):
    return benchlib.fetch_source(work, "libapache-poi-java",
                                 ["*/test-data/document/*.doc"], "*/test-data/document")


def docqa_text(docqa, path, work):
    rows, err = benchlib.docqa_chunks(docqa, path, work)
    if rows is None:
        return None, err
    text = "\n".join(r[0] for r in rows)
    text = re.sub(r"^\[(footnotes|comments|endnotes|text boxes)\]$", "",
                  text, flags=re.M)
    return text, None


def antiword_text(path):
    r = subprocess.run(["antiword", "-w", "0", path], capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode("utf-8", "replace").strip()[:100]
    t = r.stdout.decode("utf-8", "replace").replace("[pic]", " ")
    return t, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa")
    ap.add_argument("--files")
    a = ap.parse_args()
    if not shutil.which("antiword"):
        sys.exit("needs antiword (Debian: apt-get install antiword)")
    work = tempfile.mkdtemp()
    try:
        files = a.files or fetch(work)
        docs = sorted(glob.glob(os.path.join(files, "*.doc")))
        hit = ref_n = ours_n = 0
        apart, rows = [], []
        for path in docs:
            name = os.path.basename(path)
            ref, ref_err = antiword_text(path)
            text, err = docqa_text(a.docqa, path, work)
            if ref is None or text is None:
                apart.append(f"{name}: antiword {ref_err or 'ok'}; docqa "
                             f"{(err or 'ok')[:150]}")
                continue
            r_w, o_w = benchlib.words(ref), benchlib.words(text)
            if not r_w and not o_w:
                continue
            h = sum((r_w & o_w).values())
            hit += h
            ref_n += sum(r_w.values())
            ours_n += sum(o_w.values())
            rows.append((name, h / max(1, sum(r_w.values())),
                         h / max(1, sum(o_w.values())), r_w, o_w))
        for name, r, p, r_w, o_w in rows:
            print(f"{name[:56]:<56} recall {r:6.1%} precision {p:6.1%} "
                  f"({sum(r_w.values())} / {sum(o_w.values())} words)")
        print(f"\n{len(rows)} documents read by both: word recall "
              f"{hit / max(1, ref_n):.1%}, precision {hit / max(1, ours_n):.1%}"
              f" ({ref_n} words by antiword, {ours_n} by docqa)")
        for line in apart:
            print("  apart:", line)
        for name, r, p, r_w, o_w in sorted(rows, key=lambda x: min(x[1],
                                                                   x[2]))[:8]:
            if min(r, p) >= 0.99:
                break
            print(f"  lowest: {name} recall {r:.1%} precision {p:.1%}; "
                  f"antiword only {list((r_w - o_w).elements())[:6]}; docqa "
                  f"only {list((o_w - r_w).elements())[:6]}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
