#!/usr/bin/env python3
"""Outlook .msg files read by docqa against two other readers of them.

The files are the test messages of Email::Outlook::Message (Debian's
libemail-outlook-message-perl source, fetched with `apt-get source
--download-only`, which needs deb-src lines in the apt sources; or
--files DIR): real Outlook messages (received, unsent, signed, with a
picture attached, in code page 1252), each with the .eml its msgconvert
program wrote. For each message: the subject, the sender's and the
recipients' addresses, the text lines of the plain body and the
attachments' names, as docqa's chunks hold them, against msgconvert's
.eml read by Python's `email` package and, where installed (pip), against
extract_msg (a Python reader of .msg).

Usage: python3 tests/bench/ingest/msg_check.py DOCQA [--files DIR]
"""
import argparse
import email
import email.policy
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def fetch(work):
    src = os.path.join(work, "src")
    os.makedirs(src)
    r = subprocess.run(["apt-get", "source", "--download-only",
                        "libemail-outlook-message-perl"], cwd=src,
                       capture_output=True, text=True)
    tars = glob.glob(os.path.join(src, "*.orig.tar.*"))
    if not tars:
        sys.exit("cannot fetch libemail-outlook-message-perl's source "
                 "(apt-get source needs deb-src lines); give --files DIR\n" +
                 r.stderr[-400:])
    subprocess.run(["tar", "xf", tars[0], "-C", src], check=True)
    return glob.glob(os.path.join(src, "*", "t", "files"))[0]


def docqa_text(docqa, path, work):
    index = os.path.join(work, "idx-" + os.path.basename(path))
    subprocess.run([docqa, "ingest", path, "--index", index, "--no-embed",
                    "-q"], check=True)
    db = sqlite3.connect(os.path.join(index, "docqa.db"))
    text = "\n".join(r[0] for r in db.execute(
        "SELECT text FROM chunks ORDER BY ordinal"))
    db.close()
    return text


def addresses(v):
    return sorted(a.lower() for _, a in email.utils.getaddresses([v or ""])
                  if "@" in a)


def eml_facts(path):
    with open(path, "rb") as f:
        m = email.message_from_binary_file(f, policy=email.policy.default)
    body = m.get_body(preferencelist=("plain",))
    lines = []
    if body is not None:
        lines = [" ".join(x.split()) for x in body.get_content().split("\n")]
    atts = sorted(p.get_filename() for p in m.iter_attachments()
                  if p.get_filename())
    return {"subject": str(m["subject"] or ""),
            "from": addresses(str(m["from"] or "")),
            "to": addresses(str(m["to"] or "")),
            "lines": [x for x in lines if x],
            "attachments": atts}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa")
    ap.add_argument("--files")
    a = ap.parse_args()
    work = tempfile.mkdtemp()
    try:
        files = a.files or fetch(work)
        try:
            import extract_msg
        except ImportError:
            extract_msg = None
        totals = {"subject": 0, "from": 0, "to": 0, "lines": [0, 0],
                  "attachments": [0, 0], "extract_msg": [0, 0]}
        msgs = sorted(glob.glob(os.path.join(files, "*.msg")))
        for path in msgs:
            ref = eml_facts(path[:-4] + ".eml")
            text = docqa_text(a.docqa, path, work)
            head = dict(re.findall(r"^(Subject|From|To): (.*)$", text, re.M))
            flat = {" ".join(x.split()) for x in text.split("\n")}
            ok_sub = head.get("Subject", "") == ref["subject"]
            ok_from = addresses(head.get("From")) == ref["from"]
            ok_to = addresses(head.get("To")) == ref["to"]
            got = sum(x in flat for x in ref["lines"])
            att = sum(f"[attachment: {n}" in text for n in ref["attachments"])
            totals["subject"] += ok_sub
            totals["from"] += ok_from
            totals["to"] += ok_to
            totals["lines"][0] += got
            totals["lines"][1] += len(ref["lines"])
            totals["attachments"][0] += att
            totals["attachments"][1] += len(ref["attachments"])
            agree = ""
            if extract_msg:
                m = extract_msg.openMsg(path)
                body = [" ".join(x.split())
                        for x in (m.body or "").split("\n")]
                body = [x for x in body if x.strip("\0")]
                hit = sum(x in flat for x in body)
                totals["extract_msg"][0] += hit
                totals["extract_msg"][1] += len(body)
                agree = f" extract_msg body lines {hit}/{len(body)}"
                m.close()
            print(f"{os.path.basename(path):<24} subject {'ok' if ok_sub else 'NO'}"
                  f" from {'ok' if ok_from else 'NO'} to "
                  f"{'ok' if ok_to else 'NO'} body lines {got}/"
                  f"{len(ref['lines'])} attachments {att}/"
                  f"{len(ref['attachments'])}{agree}")
        n = len(msgs)
        print(f"{n} messages: subjects {totals['subject']}/{n}, senders "
              f"{totals['from']}/{n}, recipients {totals['to']}/{n}, "
              f"msgconvert's body lines {totals['lines'][0]}/"
              f"{totals['lines'][1]}, attachments "
              f"{totals['attachments'][0]}/{totals['attachments'][1]}" +
              (f", extract_msg's body lines {totals['extract_msg'][0]}/"
               f"{totals['extract_msg'][1]}" if extract_msg else ""))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
