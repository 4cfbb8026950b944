#!/usr/bin/env python3
"""Threads in a mailbox: do quotes of earlier messages crowd search out?

The corpus is real mail: notmuch's test corpora "lkml" (210 messages of
Linux kernel mailing list threads, 130 of them quoting) and "default" (53
of the notmuch list), from Debian's notmuch source package
(`apt-get source --download-only notmuch`, which needs deb-src lines in
the apt sources; or --corpus DIR, a folder of messages). The messages are
written, oldest first, into one mbox with Python's own `mailbox` package.

Questions: a sentence a message wrote (a line of 40 or more characters,
not a quote) that a later message quotes, searched for with `docqa
search SENTENCE --k 3`. A hit at rank r is a result that holds the
sentence as its own line, unquoted: the message that wrote it, not a
reply quoting it. Also: the index's chunks and their bytes.

Usage: python3 tests/bench/ingest/mail_thread_check.py DOCQA [OLD_DOCQA]
       [--corpus DIR] [--max-questions N]
"""
import argparse
import email
import email.policy
import email.utils
import glob
import json
import mailbox
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def fetch_corpus(work):
    """notmuch's test corpora from Debian's source package."""
    src = os.path.join(work, "src")
    os.makedirs(src)
    r = subprocess.run(["apt-get", "source", "--download-only", "notmuch"],
                       cwd=src, capture_output=True, text=True)
    tars = glob.glob(os.path.join(src, "notmuch_*.orig.tar.*"))
    if r.returncode != 0 or not tars:
        sys.exit("cannot fetch notmuch's source (apt-get source needs "
                 "deb-src lines in the apt sources); give --corpus DIR\n" +
                 r.stderr[-400:])
    subprocess.run(["tar", "xf", tars[0], "-C", src, "--wildcards",
                    "*/test/corpora/lkml", "*/test/corpora/default"],
                   check=True)
    return glob.glob(os.path.join(src, "notmuch-*", "test", "corpora"))[0]


def messages(corpus):
    msgs = []
    for sub in ("lkml", "default"):
        for path in sorted(glob.glob(os.path.join(corpus, sub, "**", "*"),
                                     recursive=True)):
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                m = email.message_from_binary_file(f,
                                                   policy=email.policy.compat32)
            try:
                when = email.utils.parsedate_to_datetime(m["Date"])
                key = when.timestamp()
            except (TypeError, ValueError):
                key = 0
            msgs.append((key, path, m))
    msgs.sort(key=lambda x: (x[0], x[1]))
    return [m for _, _, m in msgs]


def body_text(m):
    part = m
    if m.is_multipart():
        part = next((p for p in m.walk()
                     if p.get_content_type() == "text/plain"), None)
    if part is None:
        return ""
    raw = part.get_payload(decode=True) or b""
    return raw.decode(part.get_content_charset() or "utf-8", "replace")


def questions(msgs, limit):
    """Own lines (40+ characters, no quote) that a later message quotes."""
    own = []
    for k, m in enumerate(msgs):
        for line in body_text(m).split("\n"):
            s = " ".join(line.split())
            if len(s) >= 40 and not line.lstrip().startswith(">") and \
                    not re.match(r"^[\w-]+: ", s):
                own.append((k, s))
    quoted = set()
    for m in msgs:
        for line in body_text(m).split("\n"):
            if line.lstrip().startswith(">"):
                quoted.add(" ".join(line.lstrip("> \t").split()))
    seen, out = set(), []
    for k, s in own:
        if s in quoted and s not in seen:
            seen.add(s)
            out.append(s)
    return out[:limit]


def run(docqa, mbox_dir, index, qs):
    subprocess.run([docqa, "ingest", mbox_dir, "--index", index,
                    "--no-embed", "-q", "--threads", "1"], check=True)
    db = sqlite3.connect(os.path.join(index, "docqa.db"))
    n, size = db.execute(
        "SELECT count(*), sum(length(text)) FROM chunks").fetchone()
    db.close()
    hits = [0, 0, 0]
    for q in qs:
        out = subprocess.run([docqa, "search", q, "--index", index, "--k",
                              "3", "--json"], capture_output=True, text=True)
        res = json.loads(out.stdout)["results"] if out.returncode == 0 else []
        for r, res_one in enumerate(res[:3]):
            lines = {" ".join(x.split()) for x in res_one["text"].split("\n")}
            if q in lines:
                for k in range(r, 3):
                    hits[k] += 1
                break
    return n, size, hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa", nargs="+")
    ap.add_argument("--corpus")
    ap.add_argument("--max-questions", type=int, default=200)
    a = ap.parse_args()
    work = tempfile.mkdtemp()
    try:
        corpus = a.corpus or fetch_corpus(work)
        msgs = messages(corpus)
        mdir = os.path.join(work, "mail")
        os.makedirs(mdir)
        box = mailbox.mbox(os.path.join(mdir, "threads.mbox"), create=True)
        for m in msgs:
            box.add(mailbox.mboxMessage(m))
        box.flush()
        box.close()
        qs = questions(msgs, a.max_questions)
        print(f"{len(msgs)} messages in one mbox "
              f"({os.path.getsize(os.path.join(mdir, 'threads.mbox'))} "
              f"bytes); {len(qs)} questions: a sentence a message wrote "
              f"and a later one quotes")
        print(f"{'build':<40} {'chunks':>6} {'bytes':>8} "
              f"{'hit@1':>6} {'hit@2':>6} {'hit@3':>6}")
        for k, docqa in enumerate(a.docqa):
            n, size, hits = run(docqa, mdir, os.path.join(work, f"idx{k}"),
                                qs)
            print(f"{docqa[-40:]:<40} {n:6d} {size:8d} " + " ".join(
                f"{100 * h / max(1, len(qs)):5.1f}%" for h in hits))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
