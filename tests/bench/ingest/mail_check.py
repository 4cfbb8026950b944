#!/usr/bin/env python3
"""Checks docqa's e-mail reader against Python's own parser (the standard
library's `email`, an independent MIME implementation) on Python's e-mail
test corpus (test/test_email/data/msg_*.txt: digests, nested multiparts,
base64 and quoted-printable parts, RFC 2047 subjects in several charsets,
broken messages).

For each message, the reference is every non-blank line of every text/plain
part (Python decodes its transfer encoding and charset) and the decoded
Subject. docqa ingests the messages (as .eml files, --no-embed); a line
counts as found when the document's chunks hold it (blanks collapsed), the
subject when a chunk holds "Subject: " and it.

Usage: python3 tests/bench/ingest/mail_check.py DOCQA [CORPUS_DIR]
"""
import email
import email.header
import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def corpus_dir():
    import test.test_email  # noqa: the stdlib's test package
    return os.path.join(os.path.dirname(test.test_email.__file__), "data")


def squash(s):
    return re.sub(r"\s+", " ", s).strip()


def reference(raw):
    msg = email.message_from_bytes(raw)
    lines, subjects = [], []
    for part in msg.walk():
        subj = part.get("Subject")
        if subj is not None:
            try:
                subjects.append(squash(str(email.header.make_header(
                    email.header.decode_header(subj)))))
            except Exception:
                pass
        if part.is_multipart() or part.get_content_type() != "text/plain":
            continue
        payload = part.get_payload(decode=True) or b""
        cs = part.get_content_charset() or "us-ascii"
        try:
            text = payload.decode(cs, errors="replace")
        except LookupError:
            text = payload.decode("latin-1")
        lines += [squash(l) for l in text.splitlines() if squash(l)]
    return lines, subjects


def main():
    docqa = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) > 2 else corpus_dir()
    work = tempfile.mkdtemp()
    try:
        os.mkdir(os.path.join(work, "mail"))
        names = sorted(glob.glob(os.path.join(src, "msg_*.txt")))
        for f in names:
            shutil.copy(f, os.path.join(work, "mail",
                                        os.path.basename(f)[:-4] + ".eml"))
        out = subprocess.run([docqa, "ingest", os.path.join(work, "mail"),
                              "--index", os.path.join(work, "idx"),
                              "--no-embed", "--json"],
                             capture_output=True, text=True)
        summary = json.loads(out.stdout)
        db = sqlite3.connect(os.path.join(work, "idx", "docqa.db"))
        texts = {}
        for path, text in db.execute(
                "select d.path, c.text from chunks c join documents d "
                "on d.id = c.doc order by d.path, c.ordinal"):
            texts.setdefault(path, []).append(squash(text))
        n_lines = n_found = n_subj = n_subj_found = 0
        worst = []
        for f in names:
            ref_lines, ref_subj = reference(open(f, "rb").read())
            doc = " \n ".join(texts.get(os.path.basename(f)[:-4] + ".eml",
                                        []))
            found = sum(1 for l in ref_lines if l in doc)
            sfound = sum(1 for s in ref_subj if "Subject: " + s in doc)
            n_lines += len(ref_lines)
            n_found += found
            n_subj += len(ref_subj)
            n_subj_found += sfound
            if found < len(ref_lines) or sfound < len(ref_subj):
                worst.append((os.path.basename(f), found, len(ref_lines),
                              sfound, len(ref_subj)))
        print(f"{len(names)} messages, docqa read {summary.get('added')} "
              f"(failed {summary.get('failed')})")
        print(f"text/plain lines found: {n_found}/{n_lines} "
              f"({100.0 * n_found / max(n_lines, 1):.1f}%)")
        print(f"subjects found: {n_subj_found}/{n_subj} "
              f"({100.0 * n_subj_found / max(n_subj, 1):.1f}%)")
        for w in worst:
            print("  %s: lines %d/%d, subjects %d/%d" % w)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
