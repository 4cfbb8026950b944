#!/usr/bin/env python3
"""Evaluate docqa chat on two-turn conversations (tests/eval/chat.tsv).

Each conversation runs in a fresh session of one `docqa chat --json`
process, its questions one per line on standard input, over the hybrid
index tests/eval/run.py builds (samples/ and the licence texts; run.py
makes it when it is missing). Every turn is scored as run.py scores an
answer: Y the answer contains the gold (numbers normalised), C a cited
passage overlaps the gold lines, R the gold passage was read, Q the quote
contains the gold; and E when the answer repeats the session's previous
answer word for word (the model copying its own last turn instead of
answering). First turns and follow-ups are counted apart: a follow-up
("Which law governs it?") needs the conversation to be understood.

Usage:
  tests/eval/chat.py [--docqa build/cli/docqa] [--work .deps/eval]
                     [--threads N] [--model PATH] [--set KEY=VALUE]...
                     [--out results.json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as ev  # noqa: E402  (the answer scoring and the index)

HERE = os.path.dirname(os.path.abspath(__file__))


def read_conversations(path):
    """(name, turns) in file order; each turn a question as run.py's."""
    convs = {}
    for c in ev.tsv_rows(path, "conversation", 6):
        convs.setdefault(c[0], []).append(
            {"question": c[1], "answer": c[2], "corpus": "samples",
             "path": c[3], "start": int(c[4]), "end": int(c[5])})
    return list(convs.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docqa", default=os.path.join(ev.ROOT, "build", "cli",
                                                    "docqa"))
    ap.add_argument("--work", default=os.path.join(ev.ROOT, ".deps", "eval"))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--model")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out")
    a = ap.parse_args()
    docqa = os.path.abspath(a.docqa)
    idx = os.path.join(a.work, "hybrid")
    if not os.path.exists(os.path.join(idx, "docqa.db")):
        sys.exit(f"{idx}: no index; run tests/eval/run.py --skip-ask first")
    convs = read_conversations(os.path.join(HERE, "chat.tsv"))
    for _, turns in convs:
        for q in turns:
            if not ev.check_gold(q, os.path.join(a.work, "corpus")):
                sys.exit(f"gold answer {q['answer']!r} not in "
                         f"{q['path']}:{q['start']}-{q['end']}")
    extra = []
    if a.threads:
        extra += ["--threads", str(a.threads)]
    if a.model:
        extra += ["--model", a.model]
    for kv in a.set:
        extra += ["--set", kv]
    print("flags: Y answer contains gold, C a cited passage overlaps gold, "
          "R the gold passage was read, Q the quote contains gold, "
          "E the answer repeats the previous one")
    rows = []
    stamp = f"{os.getpid()}-{int(time.time())}"
    for name, turns in convs:
        session = f"eval-{name}-{stamp}"
        stdin = "\n".join([q["question"] for q in turns] + ["/reset"]) + "\n"
        t0 = time.monotonic()
        p = subprocess.run([docqa, "chat", "--session", session, "--index",
                            idx, "--json"] + extra, input=stdin,
                           capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - t0
        out = []
        for ln in p.stdout.splitlines():
            try:
                d = json.loads(ln)
            except ValueError:
                continue
            if isinstance(d, dict) and "answer" in d:
                out.append(d)
        if p.returncode != 0 or len(out) != len(turns):
            sys.exit(f"{name}: chat failed (exit {p.returncode}, "
                     f"{len(out)} answers): {p.stderr.strip()[-400:]}")
        prev = None
        for i, (q, d) in enumerate(zip(turns, out)):
            ans = d["answer"] or ""
            quote = (d.get("quote") or {}).get("text") or ""
            psg = d.get("passages", [])
            row = {"conversation": name, "turn": i + 1,
                   "question": q["question"], "gold": q["answer"],
                   "answer": ans, "quote": quote,
                   "contains": ev.contains_gold(ans, q["answer"]),
                   "quote_contains": ev.contains_gold(quote, q["answer"]),
                   "cited_gold": any(ev.overlaps(c, q) for c in psg
                                     if c.get("cited")),
                   "read_gold": any(ev.overlaps(c, q) for c in psg),
                   "repeats": bool(prev and ans.strip() and
                                   ans.strip() == prev.strip()),
                   "wall": wall / len(turns)}
            prev = ans
            rows.append(row)
            flags = "".join(f if row[k] else "-" for f, k in (
                ("Y", "contains"), ("C", "cited_gold"), ("R", "read_gold"),
                ("Q", "quote_contains"), ("E", "repeats")))
            print(f"  {name:<12} {i + 1} {flags}  {q['answer'][:22]!r:<24} "
                  f"<- {ans[:80]!r}", flush=True)
    for turn, label in ((1, "first turns"), (2, "follow-ups")):
        sub = [r for r in rows if r["turn"] == turn]
        n = len(sub)
        if not n:
            continue
        print(f"{label} ({n}): answer contains gold "
              f"{ev.pct(sum(r['contains'] for r in sub), n)}, cited "
              f"{ev.pct(sum(r['cited_gold'] for r in sub), n)}, read "
              f"{ev.pct(sum(r['read_gold'] for r in sub), n)}, quote "
              f"{ev.pct(sum(r['quote_contains'] for r in sub), n)}, "
              f"answer or quote "
              f"{ev.pct(sum(r['contains'] or r['quote_contains'] for r in sub), n)}"
              f", repeats the previous answer "
              f"{ev.pct(sum(r['repeats'] for r in sub), n)}")
    print(f"wall per turn p50 {ev.p50([r['wall'] for r in rows]):.2f} s")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
