#!/usr/bin/env python3
"""Questions about a table's rows, asked of two docqa builds side by side.

Generates (seeded, so every run asks the same) a workbook of 2,000
customer rows (XlsxWriter: Customer | Region | Account manager | Year |
Revenue, the header on row 3 under a title row) and a CSV of 2,000
supplier rows (Supplier,Country,Category,Contract value), ingests them
with each build (embeddings on: the default models), and asks each build
QUESTIONS questions whose answer is one cell of one row far below its
header ("What was the revenue of Quillmoor Holdings?", "In which country
is Brackenridge Freight based?"). Per build: the gold row among the
passages read (retrieval), the quote (docqa's best matching sentence, or
row) holding the gold cell, the answer holding it, and the p50 wall time
of an ask.

The reference is another build of docqa (--ref), e.g. the commit before
a change, built in a worktree; the two run in one session on the same
files and questions.

Usage: python3 tests/bench/ingest/table_qa.py DOCQA [--ref DOCQA_BEFORE]
       [--questions N] [--threads N]
"""
import argparse
import csv
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

import xlsxwriter

FIRST = ["Quill", "Bracken", "Ash", "Hollow", "Marl", "Fen", "Kestrel",
         "Thorn", "Wick", "Harrow", "Lark", "Copper", "Sedge", "Alder",
         "Birch", "Cinder", "Dun", "Elm", "Gorse", "Heron"]
SECOND = ["moor", "ridge", "field", "combe", "wick", "stead", "ford",
          "bury", "mere", "dale", "holt", "hurst", "ley", "wood", "by",
          "thorpe", "gate", "well", "brook", "shaw"]
KIND = ["Holdings", "Freight", "Analytics", "Foods", "Textiles", "Dental",
        "Marine", "Robotics", "Print", "Optics"]
REGIONS = ["North", "South", "East", "West", "Central"]
COUNTRIES = ["Ireland", "Portugal", "Norway", "Estonia", "Chile", "Kenya",
             "Canada", "Japan", "Austria", "Peru"]
CATEGORIES = ["Logistics", "Cleaning", "Catering", "Security", "Software"]
MANAGERS = ["Ana Duarte", "Tomas Berg", "Mei Lin", "Ravi Shah",
            "Olu Adeyemi"]


def names(rng, n):
    """n distinct company names, "Quillmoor Holdings"."""
    out, seen = [], set()
    while len(out) < n:
        s = rng.choice(FIRST) + rng.choice(SECOND) + " " + rng.choice(KIND)
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def make(folder, n_rows, n_questions, rng):
    """Writes sales.xlsx and suppliers.csv; returns [(question, gold cell,
    gold row's distinctive text)]."""
    customers = names(rng, n_rows)
    rows = [(c, rng.choice(REGIONS), rng.choice(MANAGERS),
             rng.choice([2022, 2023, 2024]), rng.randrange(10000, 990000))
            for c in customers]
    wb = xlsxwriter.Workbook(os.path.join(folder, "sales.xlsx"))
    ws = wb.add_worksheet("Accounts")
    ws.write(0, 0, "Customer accounts, revenue by year")
    ws.write_row(2, 0, ["Customer", "Region", "Account manager", "Year",
                        "Revenue"])
    for i, r in enumerate(rows):
        ws.write_row(3 + i, 0, list(r))
    wb.close()
    suppliers = names(random.Random(rng.random()), n_rows)
    srows = [(s, rng.choice(COUNTRIES), rng.choice(CATEGORIES),
              rng.randrange(1000, 99000)) for s in suppliers]
    with open(os.path.join(folder, "suppliers.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Supplier", "Country", "Category", "Contract value"])
        w.writerows(srows)
    qs = []
    # rows past the first chunk: their header is far above them
    for r in rng.sample(rows[200:], n_questions // 2):
        qs.append((f"What was the revenue of {r[0]}?", str(r[4]), r[0]))
    for r in rng.sample(srows[200:], n_questions - n_questions // 2):
        qs.append((f"In which country is {r[0]} based?", r[1], r[0]))
    return qs


def run(docqa, folder, work, qs, threads):
    idx = os.path.join(work, "idx-%d" % abs(hash(docqa)))
    r = subprocess.run([docqa, "ingest", folder, "--index", idx, "-q"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{docqa}: ingest failed: {r.stderr[-400:]}")
    res = {"read": 0, "quote": 0, "answer": 0, "walls": []}
    for q, gold, key in qs:
        t0 = time.time()
        r = subprocess.run([docqa, "ask", q, "--index", idx, "--json",
                            "--threads", str(threads)],
                           capture_output=True, text=True)
        res["walls"].append(time.time() - t0)
        try:
            d = json.loads(r.stdout)
        except ValueError:
            print(f"  {q}: no JSON ({r.stderr[-200:]})")
            continue
        read = any(key in p["text"] and gold in p["text"]
                   for p in d.get("passages", []))
        quote = d.get("quote") or {}
        in_quote = gold in (quote.get("text") or "") and key in (
            quote.get("text") or "")
        # a number may come back grouped ("469,900" for 469900)
        answer = d.get("answer") or ""
        in_answer = gold in answer or (gold.isdigit() and gold in re.sub(
            r"(?<=\d)[, ](?=\d{3}\b)", "", answer))
        res["read"] += read
        res["quote"] += in_quote
        res["answer"] += in_answer
        print("  %s%s%s %-55s %s" % ("R" if read else "-",
                                     "Q" if in_quote else "-",
                                     "Y" if in_answer else "-", q[:55],
                                     (d.get("answer") or "")[:70]
                                     .replace("\n", " ")))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docqa")
    ap.add_argument("--ref", help="another docqa build to compare with")
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        folder = os.path.join(work, "tables")
        os.makedirs(folder)
        qs = make(folder, a.rows, a.questions, random.Random(7))
        builds = [("this build", a.docqa)]
        if a.ref:
            builds.append(("reference", a.ref))
        table = []
        for label, exe in builds:
            print(f"== {label}: {exe}")
            r = run(exe, folder, work, qs, a.threads)
            table.append((label, r))
        n = len(qs)
        print(f"\n{n} questions, each about one row of {a.rows} (R: the row "
              "read, Q: the quote holds the cell, Y: the answer does)")
        print("%-11s %10s %10s %10s %10s" % ("build", "row read", "quote",
                                             "answer", "p50 wall"))
        for label, r in table:
            print("%-11s %5d/%-4d %5d/%-4d %5d/%-4d %9.2fs" % (
                label, r["read"], n, r["quote"], n, r["answer"], n,
                statistics.median(r["walls"])))


if __name__ == "__main__":
    main()
