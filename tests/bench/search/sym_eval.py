#!/usr/bin/env python3
"""Questions for tests/bench/search/sym_run.sh (see there): docqa search with
and without its symbol signal, GNU Global (C) or Python's own ast module
(Python) as the reference.

Usage: sym_eval.py DOCQA WORK [--python] [--dump RANKS.json]
                   [--set KEY=VALUE]...
(C: GTAGSROOT and GTAGSDBPATH set, WORK holds tree/, index/ and
global_defs.txt; Python: WORK holds tree/ and index/; --set: a docqa config
key for every search)
"""
import ast
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys

N_FUNCS = 60
SEED = 20261205


def parse_global(text):
    out = collections.defaultdict(set)
    for ln in text.splitlines():
        m = re.match(r'(\S+)\s+(\d+)\s+(\S+)\s(.*)$', ln)
        if m:
            out[m.group(1)].add((m.group(3), int(m.group(2)), m.group(4)))
    return out


def functions(work):
    """gtags' function definitions (as tests/bench/xref/run.sh filters)."""
    text = open(os.path.join(work, "global_defs.txt"), encoding="utf-8",
                errors="replace").read()
    out = {}
    for name, hits in parse_global(text).items():
        lines = set()
        for path, line, img in hits:
            img = img.strip()
            if (re.search(r'\b' + re.escape(name) + r'\s*\(', img)
                    and not img.startswith('#') and 'typedef' not in img
                    and not img.rstrip().endswith(';')):
                lines.add((path, line))
        if lines:
            out[name] = lines
    return out


def calls(tree, name, defs):
    """Lines that call name (global -rx, the name followed by '('), outside
    its definitions' first lines."""
    p = subprocess.run(["global", "-rx", name], capture_output=True,
                       text=True, cwd=tree)
    out = set()
    for path, line, img in parse_global(p.stdout).get(name, ()):
        if (path, line) in defs:
            continue
        if re.search(r'\b' + re.escape(name) + r'\s*\(', img):
            out.add((path, line))
    return out


def leading_comment(tree, path, line):
    """The first sentence of the comment block right above a definition
    (a return-type line may sit between), at most 25 words, or None."""
    with open(os.path.join(tree, path), encoding="utf-8",
              errors="replace") as f:
        src = f.read().split("\n")
    i = line - 2
    while i >= 0 and src[i].strip() and "*/" not in src[i] and i > line - 4:
        i -= 1
    if i < 0 or "*/" not in src[i]:
        return None
    body = []
    while i >= 0:
        body.insert(0, src[i])
        if "/*" in src[i]:
            break
        i -= 1
    text = " ".join(body)
    text = re.sub(r'/\*+|\*+/|^\s*\*+|\s\*+\s', ' ', text)
    return first_sentence(" ".join(text.split()).strip(" *"))


def first_sentence(text):
    """A description's first sentence, at most 25 words; None when shorter
    than 5 words or naming an identifier (what the other questions test)."""
    text = re.split(r'(?<=[.;:])\s', " ".join(text.split()))[0]
    words = text.rstrip(".;:").split()
    if len(words) < 5 or any('_' in w or re.search(r'[a-z][A-Z]', w)
                             for w in words):
        return None
    return " ".join(words[:25])


def search(docqa, work, q, symbols):
    cmd = [docqa, "search", q, "--index", os.path.join(work, "index"),
           "--k", "5", "--json", "-q"]
    if not symbols:
        cmd.append("--no-symbols")
    args = sys.argv[3:]  # --set KEY=VALUE: a docqa config key, passed on
    cmd += [x for i, a in enumerate(args) if a == "--set" and i + 1 < len(args)
            for x in ("--set", args[i + 1])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"docqa search failed: {p.stderr.strip()}")
    return json.loads(p.stdout)


def rank(res, gold):
    for i, r in enumerate(res["results"]):
        for path, line in gold:
            if r["path"] == path and r["line_start"] <= line <= r["line_end"]:
                return i + 1
    return None


class PyRef:
    """Python's ast as the reference: each function or method (not dunder)
    defined once in the tree, its def line; calls by name (f(...) or
    x.f(...)); a docstring's first sentence as its description; and each
    method Class.m whose name m other functions or methods share, its def
    line (one class of that name in the tree)."""

    def __init__(self, tree):
        self.defs = collections.defaultdict(set)
        self.methods = collections.defaultdict(set)  # (class, m) -> lines
        self.calls = collections.defaultdict(set)
        self.doc = {}
        for root, _, files in os.walk(tree):
            for f in sorted(files):
                if not f.endswith(".py"):
                    continue
                path = os.path.join(root, f)
                rel = os.path.relpath(path, tree)
                mod = ast.parse(open(path, encoding="utf-8").read())
                for n in ast.walk(mod):
                    if isinstance(n, ast.ClassDef):
                        for m in n.body:
                            if (isinstance(m, (ast.FunctionDef,
                                               ast.AsyncFunctionDef))
                                    and not m.name.startswith("__")):
                                self.methods[(n.name, m.name)].add(
                                    (rel, m.lineno))
                    if (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and not n.name.startswith("__")):
                        self.defs[n.name].add((rel, n.lineno))
                        d = ast.get_docstring(n)
                        if d:
                            self.doc[n.name] = d
                    elif isinstance(n, ast.Call):
                        fn = n.func
                        name = (fn.attr if isinstance(fn, ast.Attribute)
                                else fn.id if isinstance(fn, ast.Name)
                                else None)
                        if name:
                            self.calls[name].add((rel, n.lineno))
        self.shared = {(c, m): v for (c, m), v in self.methods.items()
                       if len(v) == 1 and len(self.defs[m]) >= 2}
        self.defs = {k: v for k, v in self.defs.items() if len(v) == 1}

    def comment(self, name):
        return first_sentence(self.doc.get(name, ""))


def main():
    docqa, work = sys.argv[1], sys.argv[2]
    tree = os.path.join(work, "tree")
    py = PyRef(tree) if "--python" in sys.argv[3:] else None
    funcs = py.defs if py else functions(work)
    rnd = random.Random(SEED)
    names = sorted(funcs)
    rnd.shuffle(names)
    qs = []  # (category, name, question, gold)
    n_f = 0
    for name in names:
        if n_f == N_FUNCS:
            break
        c = (py.calls.get(name, set()) - funcs[name] if py
             else calls(tree, name, funcs[name]))
        if not c:
            continue
        n_f += 1
        qs.append(("def", name, f"Where is {name} defined?", funcs[name]))
        qs.append(("what", name, f"What does {name} do?", funcs[name]))
        qs.append(("callers", name, f"Which functions call {name}?", c))
        path, line = sorted(funcs[name])[0]
        com = py.comment(name) if py else leading_comment(tree, path, line)
        if com:
            qs.append(("comment", name, f"Which function {com[0].lower()}"
                       f"{com[1:]}?", funcs[name]))
    if py:  # "Where is StreamWriter.close defined?": a name many define
        shared = sorted(py.shared)
        random.Random(SEED + 1).shuffle(shared)
        for c, m in shared[:N_FUNCS]:
            qs.append(("qualified", f"{c}.{m}",
                       f"Where is {c}.{m} defined?", py.shared[(c, m)]))
    stats = collections.defaultdict(lambda: {"ranks": [], "ms": []})
    mode = "?"
    changed, every = [], []
    for cat, name, q, gold in qs:
        rs = {}
        for sym in (False, True):
            res = search(docqa, work, q, sym)
            rs[sym] = rank(res, gold)
            s = stats[(cat, sym)]
            s["ranks"].append(rs[sym])
            s["ms"].append(res.get("time_ms", 0.0))
            mode = res.get("mode", "?")
        if rs[False] != rs[True]:
            changed.append((cat, q, rs[False], rs[True]))
        every.append({"category": cat, "question": q,
                      "rank": rs[True], "rank_no_symbols": rs[False]})
    print(f"{n_f} functions, {len(qs)} questions (seed {SEED})")
    print(f"{'question':10} {'signals':16} {'n':>3} {'hit@1':>13} {'hit@3':>13}"
          f" {'hit@5':>13} {'p50 ms':>7}")
    for cat in ("def", "what", "callers", "comment", "qualified"):
        for sym in (False, True):
            s = stats[(cat, sym)]
            n = len(s["ranks"])
            if not n:
                continue
            cells = []
            for k in (1, 3, 5):
                h = sum(1 for r in s["ranks"] if r and r <= k)
                cells.append(f"{h:3}/{n} ({100.0 * h / n:3.0f}%)")
            label = mode + ("+symbols" if sym else "")
            print(f"{cat:10} {label:16} {n:3} {cells[0]:>13} {cells[1]:>13}"
                  f" {cells[2]:>13} {statistics.median(s['ms']):7.1f}")
    worse = [c for c in changed if (c[3] or 99) > (c[2] or 99)]
    print(f"changed rank: {len(changed)} questions, worse with symbols: "
          f"{len(worse)}")
    for cat, q, a, b in worse + [c for c in changed if c not in worse][:6]:
        print(f"  {cat}: {q[:70]}: {a} -> {b}")
    if "--dump" in sys.argv[3:]:  # every question's ranks, to compare builds
        with open(sys.argv[sys.argv.index("--dump") + 1], "w") as f:
            json.dump(every, f, indent=1)


if __name__ == "__main__":
    main()
