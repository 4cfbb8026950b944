#!/usr/bin/env python3
"""Qualified xref on Python (`docqa xref Class.attr`) against jedi.

jedi (a Python static analyser, run in its own virtualenv) resolves each
attribute access `x.attr` in the tree (Python's own ast finds them) to the
definition it infers: a class-level assignment or a `self.attr = ...` in a
method. Its class is the reference owner, or rather the most basic class
among it and its ancestors that defines the attribute (jedi gives a
subclass that assigns an inherited attribute again as its owner; it is the
base's attribute). Sites that are docqa's own definitions are dropped. For each attribute that two or
more classes of the tree define (class body or self.x in a method), and
each such class C, docqa is asked `docqa xref C.attr --json`; counts as in
owner_cmp.py: sites jedi gives C that docqa tells (known right), keeps
marked, leaves out; sites jedi gives another class that docqa claims for C
(known wrong). Sites jedi cannot resolve are not counted.

Usage: owner_py.py --src DIR --docqa BIN --jedi-python .deps/jedi-venv/bin/python
"""
import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

from owner_cmp import compare, pct  # the same counting as for C and Go

JEDI = r'''
import json, sys, jedi
root, items = sys.argv[1], json.load(sys.stdin)
proj = jedi.Project(root)
out = []
for path, sites in items.items():
    full = root + "/" + path
    src = open(full, encoding="utf-8").read()
    s = jedi.Script(src, path=full, project=proj)
    for line, col, byte_col in sites:
        owner = None
        try:
            names = s.goto(line, col, follow_imports=True)
        except Exception:
            names = []
        for n in names:
            if not n.module_path or not str(n.module_path).startswith(root):
                continue
            p = n.parent()
            while p is not None and p.type not in ("class", "module"):
                p = p.parent()
            if p is not None and p.type == "class":
                owner = p.name
                break
        out.append([path, line, byte_col, owner])
json.dump(out, sys.stdout)
'''


def class_bases(tree):
    """class name -> names of its bases (plain names and a.B's last part)."""
    out = {}
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            out[cls.name] = [b.id if isinstance(b, ast.Name) else b.attr
                             for b in cls.bases
                             if isinstance(b, (ast.Name, ast.Attribute))]
    return out


def introducer(cls, attr, bases, classes_of, seen=None):
    """The most basic class among cls and its ancestors in the tree that
    defines attr (an inherited attribute is the one its base introduces,
    even where a subclass assigns it again)."""
    seen = seen or set()
    if cls in seen:
        return None
    seen.add(cls)
    for b in bases.get(cls, []):
        got = introducer(b, attr, bases, classes_of, seen)
        if got:
            return got
    return cls if cls in classes_of.get(attr, ()) else None


def defining_classes(tree):
    """attr -> {class names} from class bodies and self.x in methods."""
    out = defaultdict(set)
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for st in cls.body:
            tgts = []
            if isinstance(st, ast.Assign):
                tgts = st.targets
            elif isinstance(st, ast.AnnAssign):
                tgts = [st.target]
            for t in tgts:
                if isinstance(t, ast.Name):
                    out[t.id].add(cls.name)
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    st.args.args and st.args.args[0].arg == "self":
                for n in ast.walk(st):
                    if isinstance(n, ast.Attribute) and \
                            isinstance(n.ctx, ast.Store) and \
                            isinstance(n.value, ast.Name) and \
                            n.value.id == "self":
                        out[n.attr].add(cls.name)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--docqa", required=True)
    ap.add_argument("--jedi-python", required=True)
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    files = sorted(os.path.relpath(os.path.join(d, f), src)
                   for d, _, fs in os.walk(src) for f in fs
                   if f.endswith(".py") and "__pycache__" not in d)
    classes_of = defaultdict(set)
    bases = {}
    sites = defaultdict(list)  # path -> [(line, char col, byte col)] of x.attr
    trees = {}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            text = fh.read()
        try:
            trees[f] = ast.parse(text)
        except SyntaxError:
            continue
        for k, v in defining_classes(trees[f]).items():
            classes_of[k] |= v
        bases.update(class_bases(trees[f]))
    for f, t in trees.items():
        with open(os.path.join(src, f), "rb") as fh:
            lines = fh.read().split(b"\n")
        for n in ast.walk(t):
            if isinstance(n, ast.Attribute) and len(classes_of.get(n.attr, ())) >= 2:
                # the name ends the node; ast counts UTF-8 bytes, jedi
                # characters (both from 0)
                b = n.end_col_offset - len(n.attr.encode("utf-8"))
                ch = len(lines[n.end_lineno - 1][:b].decode("utf-8", "replace"))
                sites[f].append((n.end_lineno, ch, b))
    p = subprocess.run([a.jedi_python, "-c", JEDI, src], input=json.dumps(sites),
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"owner_py: jedi failed: {p.stderr[-2000:]}")
    truth = defaultdict(set)  # (class, attr) -> {(path, line, col1)}
    unresolved = 0
    names = {}
    for f, t in trees.items():
        for n in ast.walk(t):
            if isinstance(n, ast.Attribute):
                b = n.end_col_offset - len(n.attr.encode("utf-8"))
                names[(f, n.end_lineno, b)] = n.attr
    for path, line, b, owner in json.loads(p.stdout):
        name = names[(path, line, b)]
        if owner is None or owner not in classes_of.get(name, ()):
            unresolved += 1
            continue
        owner = introducer(owner, name, bases, classes_of) or owner
        truth[(owner, name)].add((path, line, b + 1))  # docqa: 1-based bytes
    index = tempfile.mkdtemp(prefix="dq-ownerpy-")
    subprocess.run([a.docqa, "ingest", src, "--no-embed", "--index", index,
                    "-q"], check=True)
    pairs = sorted(truth)
    others = {}
    for cls, name in pairs:
        others[(cls, name)] = set()
        for (c2, n2), s2 in truth.items():
            if n2 == name and c2 != cls:
                others[(cls, name)] |= s2
    t, _, _ = compare(a.docqa, index, pairs, truth, others, a.show,
                      drop_defs=True)
    shutil.rmtree(index, ignore_errors=True)
    n = t["sites"]
    print(f"tree: {src} ({len(trees)} files); attribute sites jedi could not "
          f"resolve to a class of the tree: {unresolved} (not counted)")
    print(f"pairs (class, attribute) defined by >= 2 classes, used: {t['pairs']};"
          f" jedi's sites: {n} (+{t['undefined_sites']} of pairs docqa has no "
          f"definition for)")
    print(f"known right {t['known_right']}/{n} ({pct(t['known_right'], n)}), "
          f"marked {t['marked_right']} ({pct(t['marked_right'], n)}), left out "
          f"{t['left_out']} ({pct(t['left_out'], n)})")
    print(f"known wrong {t['known_wrong']}: precision of known "
          f"{pct(t['known_right'], t['known_right'] + t['known_wrong'])}; "
          f"other classes' sites left out {t['other_left_out']}/{t['other']} "
          f"({pct(t['other_left_out'], t['other'])})")
    print(f"baseline (plain `xref attr`): precision {pct(n, n + t['other'])}")


if __name__ == "__main__":
    main()
