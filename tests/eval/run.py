#!/usr/bin/env python3
"""Retrieval and answer evaluation of docqa over samples/ and licence texts.

What it measures (python3 standard library only; it drives the docqa binary
with --json and never imports docqa code):

  * retrieval: `docqa search QUESTION --k 5` against (a) an index built with
    --no-embed (BM25 only) and (b) an index with embeddings (hybrid: a
    convex combination of BM25's and the vectors' scores); with --recall A:B
    also (c) hybrid + GSM recall: a pool of hybrid candidates re-ranked by
    the attention the model's final question pays to each (layers A:B of
    the depth), fused at several weights. hit@1/@3/@5: a result among the
    first k overlaps the gold line range (same root and path; PDF: same
    page; DOCX: paragraph numbers).
  * answers: `docqa ask QUESTION` on the hybrid index with the default
    decoder and with each --model given: the rate of answers that contain the
    gold answer (case-insensitive, number words and "thirty (30)" doubles
    normalised to digits, thousands separators removed), the rate at which a
    cited passage overlaps the gold range, the rate at which the gold passage
    was read at all, the rate at which ask's quote (the best matching
    sentence, extractive) contains the gold answer, per-stage latency p50 from the JSON timings_ms, wall
    time and user CPU time of the process (p50 and p90, also per question
    file).

Questions: samples/questions.txt (10 gold questions), tests/eval/questions.tsv
(more over samples/) and tests/eval/licenses.tsv (over the licence texts
Debian installs in /usr/share/common-licenses; a copy is made at run time,
never committed). Gold ranges were written by hand, not taken from docqa.

Usage:
  tests/eval/run.py [--docqa build/cli/docqa] [--work .deps/eval]
                    [--model PATH]... [--no-default-model] [--skip-ask]
                    [--max-tokens N] [--k N] [--passage-tokens N]
                    [--effort high|max] [--threads N] [--limit N]
                    [--out results.json]
                    [--recall 0.5:1]... [--pool 15] [--calib]
                    [--recall-model PATH] [--set KEY=VALUE]...

The work folder keeps the corpus copy and both indexes; a rerun re-ingests
incrementally (nothing changed: no work), so the embedding pass (1-2 min on a
loaded 2-core machine) is paid once.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LICENSES = ("Apache-2.0", "GPL-3", "MPL-2.0")
LICENSE_DIR = "/usr/share/common-licenses"


# ---- questions -------------------------------------------------------------

def tsv_rows(path, header, n_fields):
    """The fields of each data row of a tab-separated file: blank lines,
    comment lines (from "#") and the header line (first field `header`)
    skipped; every row must have n_fields fields."""
    header_seen = False
    with open(path, encoding="utf-8") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if not ln or ln.startswith("#"):
                continue
            cols = ln.split("\t")
            if not header_seen and cols[0] == header:
                header_seen = True
                continue
            if len(cols) != n_fields:
                sys.exit(f"{path}: expected {n_fields} tab-separated fields: "
                         f"{ln[:80]}")
            yield cols


def read_tsv(path, corpus):
    """Rows of a gold-question file: question, answer, path, start, end."""
    return [{"question": c[0], "answer": c[1], "corpus": corpus,
             "path": c[2], "start": int(c[3]), "end": int(c[4]),
             "source": os.path.relpath(path, ROOT)}
            for c in tsv_rows(path, "question", 5)]


def check_gold(q, corpus_dir):
    """The gold answer must appear in the gold lines (text formats only)."""
    if q["path"].endswith((".pdf", ".docx")):
        return True
    with open(os.path.join(corpus_dir, q["corpus"], q["path"]),
              encoding="utf-8") as f:
        lines = f.read().split("\n")
    span = " ".join(lines[q["start"] - 1:q["end"]])
    span = re.sub(r"\s+", " ", span)
    return q["answer"].lower() in span.lower()


# ---- answer normalisation ----------------------------------------------------

UNITS = ("zero one two three four five six seven eight nine ten eleven twelve "
         "thirteen fourteen fifteen sixteen seventeen eighteen nineteen").split()
TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}
ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth "
            "eleventh twelfth").split()
NUMWORD = r"(?:%s)" % "|".join(UNITS + TENS + list(SCALES))
NUMSEQ = re.compile(r"\b%s(?:(?:\s+and\s+|[\s-]+)%s)*\b" % (NUMWORD, NUMWORD))


def words_to_int(s):
    total, cur = 0, 0
    for w in re.split(r"[\s-]+", s):
        if w == "and":
            continue
        if w in UNITS:
            cur += UNITS.index(w)
        elif w in TENS:
            cur += 20 + 10 * TENS.index(w)
        elif w == "hundred":
            cur = max(cur, 1) * 100
        else:
            total += max(cur, 1) * SCALES[w]
            cur = 0
    return total + cur


def normalise(text):
    """Lower case; number words, ordinals and "thirty (30)" become digits."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    t = t.replace("\u201c", '"').replace("\u201d", '"')
    t = re.sub(r"(?<=\d),(?=\d{3}\b)", "", t)  # 2,000,000 -> 2000000
    t = re.sub(r"\b(%s)\b" % "|".join(ORDINALS),
               lambda m: "%dth" % (ORDINALS.index(m.group(1)) + 1), t)
    t = re.sub(r"\b1th\b", "1st", t)
    t = re.sub(r"\b2th\b", "2nd", t)
    t = re.sub(r"\b3th\b", "3rd", t)
    t = NUMSEQ.sub(lambda m: str(words_to_int(m.group(0))), t)
    t = re.sub(r"\b(\d+(?:st|nd|rd|th)?)\s*\(\s*\1\s*\)", r"\1", t)
    t = re.sub(r"\s+", " ", t)
    return t.strip()


def contains_gold(answer, gold):
    return normalise(gold) in normalise(answer)


COPY_CHARS = 100


def copies_passage(answer, passages):
    """Whether the answer repeats COPY_CHARS or more characters of one of
    the passages it was given word for word (blanks collapsed): a model
    that copies the passage out "contains" the gold without answering."""
    ans = re.sub(r"\s+", " ", answer)
    for psg in passages:
        text = re.sub(r"\s+", " ", psg.get("text") or "")
        for i in range(0, max(0, len(ans) - COPY_CHARS) + 1, 20):
            if ans[i:i + COPY_CHARS] in text and \
                    len(ans[i:i + COPY_CHARS]) == COPY_CHARS:
                return True
    return False


# ---- matching passages to gold -----------------------------------------------

def overlaps(hit, q):
    # search results name their root; ask/chat passages do not (then the
    # path alone decides: the two corpora share no path)
    if hit.get("root") and \
            os.path.basename(os.path.normpath(hit["root"])) != q["corpus"]:
        return False
    if hit["path"] != q["path"]:
        return False
    if q["path"].endswith(".pdf"):
        page = hit.get("page")
        return page is not None and q["start"] <= page <= q["end"]
    return hit["line_start"] <= q["end"] and hit["line_end"] >= q["start"]


def first_hit_rank(results, q):
    for i, r in enumerate(results, 1):
        if overlaps(r, q):
            return i
    return None


# ---- running docqa -------------------------------------------------------------

def run_docqa(docqa, args, timeout=600):
    """Runs docqa; returns (parsed JSON or None, stderr, wall s, user CPU s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([docqa] + args, capture_output=True, text=True,
                       timeout=timeout)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime
    data = None
    if p.returncode == 0:
        try:
            data = json.loads(p.stdout)
        except ValueError:
            data = None
    return data, p.stderr, wall, cpu, p.returncode


def ingest(docqa, index, paths, no_embed):
    args = ["ingest"] + paths + ["--index", index, "--json"]
    if no_embed:
        args.append("--no-embed")
    data, err, wall, cpu, rc = run_docqa(docqa, args, timeout=1800)
    if data is None:
        sys.exit(f"ingest into {index} failed (exit {rc}): {err[-800:]}")
    if data.get("failed"):
        sys.exit(f"ingest into {index}: {data['failed']} files failed")
    return data, wall, cpu


def p50(xs):
    return statistics.median(xs) if xs else float("nan")


def p90(xs):
    """Nearest-rank 90th percentile (of 10 values: the 9th smallest)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[max(0, -(-9 * len(s) // 10) - 1)]


def pct(n, d):
    return f"{n}/{d} ({100.0 * n / d:.0f}%)" if d else "0/0"


# ---- (c) hybrid + GSM recall ---------------------------------------------------

WEIGHTS = (0, 0.5, 1, 2, 4, 1000)


def fused_order(results, w, key="recall_rank"):
    """Pool order under fusion weight w (as pipeline/rerank.c fuses) of the
    retrieval rank and the recall rank held in `key`."""
    def score(r):
        return 1.0 / (60 + r["retrieval_rank"]) + w / (60 + r[key])
    return sorted(results, key=lambda r: (-score(r), r["retrieval_rank"]))


def robust_z(xs):
    """(x - median) / median absolute deviation (the mean deviation where
    that is 0, 1 where both are), as engine/recall.c's robust_z."""
    def median(v):
        v = sorted(v)
        h = len(v) // 2
        return v[h] if len(v) % 2 else 0.5 * (v[h - 1] + v[h])
    m = median(xs)
    dev = [abs(x - m) for x in xs]
    d = median(dev) or sum(dev) / len(dev) or 1.0
    return [(x - m) / d for x in xs]


def add_score_ranks(res):
    """toq_rank: rank by the passages' attention to the pinned question
    (recall_toq); both_rank: by dq_recall_combine's sum, toq's robust z-score
    + 0.25 (DQ_RECALL_PROBE_WEIGHT) x the probe's; ties in retrieval order.
    recall_rank is docqa's, by the probe (recall_score)."""
    if not res:
        return
    zt = robust_z([r.get("recall_toq", 0.0) for r in res])
    zp = robust_z([r.get("recall_score", 0.0) for r in res])
    for r, t, p in zip(res, zt, zp):
        r["both"] = t + 0.25 * p
    for key, field in (("toq_rank", "recall_toq"), ("both_rank", "both")):
        order = sorted(res, key=lambda r: (-r.get(field, 0.0),
                                           r["retrieval_rank"]))
        for i, r in enumerate(order, 1):
            r[key] = i


def recall_eval(a, docqa, idx, qs, layers, thr, results):
    print(f"\n== hybrid + GSM recall (pool {a.pool}, layers {layers}, "
          f"{'calibrated' if a.calib else 'raw'}"
          f"{', model ' + a.recall_model if a.recall_model else ''}) ==")
    pools, times = [], []
    for q in qs:
        data, err, wall, cpu, rc = run_docqa(
            docqa, ["search", q["question"], "--index", idx, "--k",
                    str(a.pool), "--pool", str(a.pool), "--recall",
                    "--recall-layers", layers, "--json"] + thr +
            (["--recall-calib"] if a.calib else []) +
            (["--model", a.recall_model] if a.recall_model else []))
        if data is None:
            sys.exit(f"search --recall failed (exit {rc}): {err[-500:]}")
        res = data["results"]
        if res and "recall_rank" not in res[0]:  # fewer than 2 candidates
            for i, r in enumerate(res, 1):
                r["retrieval_rank"] = r["recall_rank"] = i
        add_score_ranks(res)
        pools.append(res)
        times.append(data.get("recall", {}).get("time_ms", 0.0))
    n = len(qs)
    print(f"{'weight':>8} {'hit@1':>12} {'hit@3':>12} {'hit@5':>12}"
          f"   (weight 0 = hybrid order; 1000 = recall order)")
    out = {}
    for key, what in (("recall_rank", "the probe's attention (docqa's "
                       "recall_rank)"),
                      ("toq_rank", "the passages' attention to the "
                       "question (recall_toq)"),
                      ("both_rank", "both (dq_recall_combine)")):
        print(f"   recall rank by {what}:")
        for w in WEIGHTS:
            ranks = [first_hit_rank(fused_order(p, w, key), q) for p, q in
                     zip(pools, qs)]
            hk = {k: sum(1 for r in ranks if r and r <= k) for k in (1, 3, 5)}
            print(f"{w:>8} {pct(hk[1], n):>12} {pct(hk[3], n):>12} "
                  f"{pct(hk[5], n):>12}")
            out[("" if key == "recall_rank" else key[:-5] + ":") +
                str(w)] = ranks
    print(f"   recall pass p50 {p50(times):.0f} ms per question")
    results.setdefault("recall", {})[layers] = {"ranks": out,
                                                "recall_ms": times,
                                                "pools": pools}


# ---- main ---------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docqa", default=os.environ.get(
        "DOCQA", os.path.join(ROOT, "build", "cli", "docqa")))
    ap.add_argument("--work", default=os.path.join(ROOT, ".deps", "eval"))
    ap.add_argument("--model", action="append", default=[],
                    help="another decoder for ask (repeatable)")
    ap.add_argument("--no-default-model", action="store_true")
    ap.add_argument("--skip-ask", action="store_true")
    ap.add_argument("--max-tokens", type=int, default=0,
                    help="ask --max-tokens (0: docqa's default)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a docqa config key for search and ask (repeatable),"
                         " e.g. search.lexical_weight=0.5")
    ap.add_argument("--k", type=int, default=0,
                    help="ask --k (0: docqa's default)")
    ap.add_argument("--passage-tokens", type=int, default=0,
                    help="ask --passage-tokens (0: docqa's default)")
    ap.add_argument("--effort", choices=("high", "max"),
                    help="ask --effort (default: docqa's, high)")
    ap.add_argument("--limit", type=int, default=0,
                    help="only the first N questions (quick runs)")
    ap.add_argument("--ask-limit", type=int, default=0,
                    help="ask only the first N questions (retrieval: all)")
    ap.add_argument("--ask-stride", type=int, default=1,
                    help="ask every Nth question (spread a small budget over "
                         "all three question files)")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="stop asking new questions after this many "
                         "seconds (rates are then over the questions asked)")
    ap.add_argument("--recall", action="append", default=[],
                    metavar="A:B",
                    help="(c) hybrid + GSM recall: re-rank a pool of "
                         "--pool hybrid candidates with `docqa search "
                         "--recall --recall-layers A:B` and report hit@k "
                         "for several fusion weights (repeatable)")
    ap.add_argument("--calib", action="store_true",
                    help="(c) calibrated recall (minus a content-free "
                         "probe's scores)")
    ap.add_argument("--recall-model", metavar="PATH",
                    help="(c) the decoder of the recall pass (search "
                         "--model; default: docqa's)")
    ap.add_argument("--pool", type=int, default=15,
                    help="candidates the recall pass reads (default 15)")
    ap.add_argument("--out", help="write every per-question result here")
    a = ap.parse_args()
    docqa = os.path.abspath(a.docqa)
    if not os.access(docqa, os.X_OK):
        sys.exit(f"{docqa}: not an executable docqa (build it, or --docqa)")

    qs = (read_tsv(os.path.join(ROOT, "samples", "questions.txt"), "samples") +
          read_tsv(os.path.join(ROOT, "tests", "eval", "questions.tsv"),
                   "samples") +
          read_tsv(os.path.join(ROOT, "tests", "eval", "licenses.tsv"),
                   "common-licenses"))
    if a.limit:
        qs = qs[:a.limit]

    # Corpus: a copy of samples/ and of three licence texts; copy2 keeps the
    # mtimes, so re-ingesting an unchanged copy does no work.
    corpus = os.path.join(a.work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    shutil.copytree(os.path.join(ROOT, "samples"),
                    os.path.join(corpus, "samples"), dirs_exist_ok=True)
    os.makedirs(os.path.join(corpus, "common-licenses"), exist_ok=True)
    for lic in LICENSES:
        shutil.copy2(os.path.join(LICENSE_DIR, lic),
                     os.path.join(corpus, "common-licenses", lic))
    bad = [q for q in qs if not check_gold(q, corpus)]
    for q in bad:
        print(f"gold answer not in its lines: {q['source']}: {q['question']}")
    if bad:
        sys.exit(1)
    roots = [os.path.join(corpus, "samples"),
             os.path.join(corpus, "common-licenses")]
    idx_bm25 = os.path.join(a.work, "bm25")
    idx_hybrid = os.path.join(a.work, "hybrid")
    thr = ["--threads", str(a.threads)] if a.threads else []
    sets = [x for kv in a.set for x in ("--set", kv)]

    print(f"docqa: {docqa}")
    print(f"questions: {len(qs)} ({sum(q['corpus'] == 'samples' for q in qs)} "
          f"over samples/, {sum(q['corpus'] != 'samples' for q in qs)} over "
          f"licence texts)")
    d, wall, cpu = ingest(docqa, idx_bm25, roots, True)
    print(f"ingest --no-embed: {d['files_seen']} files, chunks written "
          f"{d['chunks']}, wall {wall:.1f} s, user CPU {cpu:.1f} s")
    d, wall, cpu = ingest(docqa, idx_hybrid, roots, False)
    print(f"ingest (embed):    {d['files_seen']} files, embedded "
          f"{d['embedded']} chunks, wall {wall:.1f} s, user CPU {cpu:.1f} s")

    results = {"questions": qs, "retrieval": {}, "ask": {}}

    # Retrieval.
    print("\n== retrieval (docqa search --k 5) ==")
    print(f"{'index':<8} {'mode':<7} {'hit@1':>12} {'hit@3':>12} "
          f"{'hit@5':>12} {'p50 ms':>8}")
    for name, idx in (("bm25", idx_bm25), ("hybrid", idx_hybrid)):
        ranks, times, modes = [], [], set()
        for q in qs:
            data, err, wall, cpu, rc = run_docqa(
                docqa, ["search", q["question"], "--index", idx, "--k", "5",
                        "--json"] + thr + sets)
            if data is None:
                sys.exit(f"search failed (exit {rc}): {err[-500:]}")
            modes.add(data.get("mode"))
            ranks.append(first_hit_rank(data["results"], q))
            times.append(wall * 1000)
        n = len(qs)
        hk = {k: sum(1 for r in ranks if r and r <= k) for k in (1, 3, 5)}
        print(f"{name:<8} {'/'.join(sorted(map(str, modes))):<7} "
              f"{pct(hk[1], n):>12} {pct(hk[3], n):>12} {pct(hk[5], n):>12} "
              f"{p50(times):>8.0f}")
        for part in ("samples", "common-licenses"):
            pr = [r for q, r in zip(qs, ranks) if q["corpus"] == part]
            if pr:
                print(f"   {part}: " + "  ".join(
                    f"hit@{k} {pct(sum(1 for r in pr if r and r <= k), len(pr))}"
                    for k in (1, 3, 5)))
        misses = [q["question"][:70] for q, r in zip(qs, ranks) if not r]
        for m in misses:
            print(f"   miss@5: {m}")
        results["retrieval"][name] = {"ranks": ranks, "modes": sorted(
            map(str, modes)), "wall_ms": times}

    for layers in a.recall:
        recall_eval(a, docqa, idx_hybrid, qs, layers, thr, results)

    if a.skip_ask:
        finish(a, results)
        return

    # Answers: question by question, every model on each, so that a time
    # budget leaves the models compared on the same questions.
    models = [] if a.no_default_model else [None]
    models += a.model
    labels = [os.path.basename(m) if m else "default" for m in models]
    rows = {lb: [] for lb in labels}
    aqs = qs[::max(1, a.ask_stride)]
    aqs = aqs[:a.ask_limit] if a.ask_limit else aqs
    print(f"\n== ask on the hybrid index: {', '.join(labels)} ==")
    print("   flags: Y answer contains gold, C a cited passage overlaps gold, "
          "R the gold passage was read, P the answer copies a passage")
    t_ask = time.monotonic()
    n_asked = 0
    for i, q in enumerate(aqs, 1):
        if a.budget_s and time.monotonic() - t_ask > a.budget_s:
            print(f"  time budget spent: {n_asked} of {len(aqs)} questions asked")
            break
        n_asked = i
        for model, label in zip(models, labels):
            args = (["ask", q["question"], "--index", idx_hybrid, "--json"] +
                    thr + sets)
            if model:
                args += ["--model", model]
            if a.max_tokens:
                args += ["--max-tokens", str(a.max_tokens)]
            if a.k:
                args += ["--k", str(a.k)]
            if a.passage_tokens:
                args += ["--passage-tokens", str(a.passage_tokens)]
            if a.effort:
                args += ["--effort", a.effort]
            data, err, wall, cpu, rc = run_docqa(docqa, args)
            if data is None:
                print(f"  [{i}] {label}: ask failed (exit {rc}): "
                      f"{err.strip()[-300:]}")
                rows[label].append({"ok": False, "wall": wall, "cpu": cpu})
                continue
            row = {"ok": True, "wall": wall, "cpu": cpu,
                   "answer": data["answer"],
                   "contains": contains_gold(data["answer"], q["answer"]),
                   "quote": (data.get("quote") or {}).get("text"),
                   "quote_contains": contains_gold(
                       (data.get("quote") or {}).get("text") or "",
                       q["answer"]),
                   "copied": copies_passage(data["answer"],
                                            data.get("passages", [])),
                   "cited_gold": any(overlaps(c, q)
                                     for c in data.get("citations", [])),
                   "read_gold": any(overlaps(c, q)
                                    for c in data.get("passages", [])),
                   "citations": data.get("citations", []),
                   "passages": data.get("passages", []),
                   "timings": data.get("timings_ms", {}),
                   "tokens": data.get("tokens", {}),
                   "retrieval": data.get("retrieval")}
            rows[label].append(row)
            print(f"  [{i:2}] {label[:12]:<12} "
                  f"{'Y' if row['contains'] else '-'}"
                  f"{'C' if row['cited_gold'] else '-'}"
                  f"{'R' if row['read_gold'] else '-'}"
                  f"{'P' if row['copied'] else '-'}"
                  f"{'Q' if row['quote_contains'] else '-'} "
                  f"{wall:5.1f}s cpu {cpu:5.1f}s  "
                  f"{q['answer'][:24]!r:<26} <- "
                  f"{data['answer'][:80]!r}", flush=True)
    aqs = aqs[:n_asked]
    for label in labels:
        summarise(label, rows[label], aqs)
    results["ask"] = rows
    finish(a, results)


def summarise(label, rows, aqs):
    ok = [r for r in rows if r["ok"]]
    n = len(aqs)
    print(f"\n-- {label}: {n} questions")
    print(f"answer contains gold: {pct(sum(r['contains'] for r in ok), n)}"
          f"   cited passage overlaps gold: "
          f"{pct(sum(r['cited_gold'] for r in ok), n)}"
          f"   gold passage read: {pct(sum(r['read_gold'] for r in ok), n)}"
          f"   failures: {n - len(ok)}")
    print(f"the quote (the best matching sentence) contains gold: "
          f"{pct(sum(r.get('quote_contains', False) for r in ok), n)}   "
          f"answer or quote: "
          f"{pct(sum(r['contains'] or r.get('quote_contains', False) for r in ok), n)}")
    print(f"answer copies {COPY_CHARS}+ characters of a passage: "
          f"{pct(sum(r['copied'] for r in ok), n)}   contains gold without "
          f"copying: {pct(sum(r['contains'] and not r['copied'] for r in ok), n)}")
    for part in ("samples", "common-licenses"):
        sub = [r for r, q in zip(rows, aqs) if r["ok"] and q["corpus"] == part]
        nq = sum(1 for q in aqs if q["corpus"] == part)
        if nq:
            print(f"  {part}: contains {pct(sum(r['contains'] for r in sub), nq)}"
                  f", cited gold {pct(sum(r['cited_gold'] for r in sub), nq)}")
    stages = sorted({k for r in ok for k in r["timings"]})
    print("p50 ms per stage: " + ", ".join(
        f"{s} {p50([r['timings'][s] for r in ok if s in r['timings']]):.0f}"
        for s in stages))
    for src in sorted({q["source"] for q in aqs}):
        sub = [r for r, q in zip(rows, aqs) if r["ok"] and q["source"] == src]
        if sub:
            print(f"  {src}: wall p50 {p50([r['wall'] for r in sub]):.2f} s "
                  f"p90 {p90([r['wall'] for r in sub]):.2f} s, user CPU p50 "
                  f"{p50([r['cpu'] for r in sub]):.2f} s p90 "
                  f"{p90([r['cpu'] for r in sub]):.2f} s ({len(sub)} asked)")
    print(f"p50 wall {p50([r['wall'] for r in ok]):.2f} s (p90 "
          f"{p90([r['wall'] for r in ok]):.2f}), p50 user CPU "
          f"{p50([r['cpu'] for r in ok]):.2f} s (p90 "
          f"{p90([r['cpu'] for r in ok]):.2f}), p50 prompt tokens "
          f"{p50([r['tokens'].get('prompt', 0) for r in ok]):.0f}, p50 "
          f"answer tokens {p50([r['tokens'].get('answer', 0) for r in ok]):.0f}"
          f"; under 5 s wall: {pct(sum(r['wall'] < 5 for r in ok), n)}")


def finish(a, results):
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
