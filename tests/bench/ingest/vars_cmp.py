#!/usr/bin/env python3
"""Variables, constants, fields, properties and enumerators found by docqa's
symbol pass (dq_bench_sym defs) against an independent reference on any tree:

  - universal-ctags (--ctags-lang, --ctags-kinds: its kind letters), or
  - with --python-ast, Python's own parser: the first Name target of every
    assignment at module level or in a class body (also under if/try/for/
    with/while), and the first assignment of each self.NAME in a class's
    __init__ or __post_init__ (not in a nested function), which is what
    docqa calls "variable" and "field".

Prints the share of the reference's (name, path, line) that docqa has (any
kind) and of docqa's symbols of --kinds that the reference has, then a sample
of each difference to read. Examples (trees fetched with apt-get download /
apt-get source, see tests/bench/ingest/run.sh):

  vars_cmp.py --dir keepass2-2.47+dfsg --exts cs --ctags-lang C# \\
      --ctags-kinds feE --kinds field,enumerator,event
  vars_cmp.py --dir /usr/lib/python3.11 --exts py --python-ast \\
      --kinds variable,field
  vars_cmp.py --dir gocode --exts go --ctags-lang Go --ctags-kinds cvm \\
      --kinds variable,constant,field
"""
import argparse
import ast
import os
import random
import subprocess
import sys


def tree_files(root, exts):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith('.'))
        for f in sorted(files):
            if not f.startswith('.') and f.rsplit('.', 1)[-1] in exts:
                out.append(os.path.relpath(os.path.join(d, f), root))
    return out


def ctags_ref(root, files, lang, kinds):
    r = subprocess.run(
        ['ctags', '-x', '--_xformat=%N\t%K\t%n\t%F', '--languages=' + lang,
         '--kinds-' + lang + '=' + kinds, '-L', '-', '-f', '-'],
        cwd=root, input='\n'.join(files), capture_output=True, text=True,
        check=True)
    ref = set()
    for ln in r.stdout.splitlines():
        name, _, line, path = ln.split('\t')
        ref.add((name, path, int(line)))
    return ref


def ast_ref(root, files):
    ref = set()

    def walk(body, path):
        for n in body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                t = n.targets[0] if isinstance(n, ast.Assign) else n.target
                if isinstance(t, ast.Name):
                    ref.add((t.id, path, t.lineno))
            elif isinstance(n, ast.ClassDef):
                walk(n.body, path)
                for f in n.body:
                    if (isinstance(f, ast.FunctionDef)
                            and f.name in ('__init__', '__post_init__')):
                        self_attrs(f, path)
            elif isinstance(n, (ast.If, ast.Try, ast.For, ast.While, ast.With)):
                for attr in ('body', 'orelse', 'finalbody'):
                    walk(getattr(n, attr, None) or [], path)
                for h in getattr(n, 'handlers', []):
                    walk(h.body, path)

    def self_attrs(func, path):
        found = []
        todo = list(func.body)
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                t = n.targets[0] if isinstance(n, ast.Assign) else n.target
                if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                        and t.value.id == 'self'):
                    found.append((t.lineno, t.col_offset, t.attr))
            todo.extend(ast.iter_child_nodes(n))
        seen = set()
        for line, _, name in sorted(found):
            if name not in seen:
                seen.add(name)
                ref.add((name, path, line))

    for f in files:
        try:
            with open(os.path.join(root, f), encoding='utf-8') as fh:
                walk(ast.parse(fh.read()).body, f)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            pass
    return ref


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dir', required=True)
    ap.add_argument('--exts', required=True, help='comma list: cs or c,h')
    ap.add_argument('--kinds', required=True, help="docqa's kinds to check")
    ap.add_argument('--ctags-lang')
    ap.add_argument('--ctags-kinds')
    ap.add_argument('--python-ast', action='store_true')
    ap.add_argument('--bin', default=os.path.join(
        os.path.dirname(__file__), '../../../build/tests/bench/ingest/dq_bench_sym'))
    ap.add_argument('--show', type=int, default=10)
    a = ap.parse_args()
    exts = set(a.exts.split(','))
    files = tree_files(a.dir, exts)
    if a.python_ast:
        ref = ast_ref(a.dir, files)
    elif a.ctags_lang and a.ctags_kinds:
        ref = ctags_ref(a.dir, files, a.ctags_lang, a.ctags_kinds)
    else:
        sys.exit('vars_cmp.py: --python-ast or --ctags-lang with --ctags-kinds')
    r = subprocess.run([a.bin, 'defs', a.dir, a.exts], capture_output=True,
                       text=True, errors='replace', check=True)
    kinds = set(a.kinds.split(','))
    ours, anyours = set(), set()
    for ln in r.stdout.splitlines():
        name, line, path, kind = ln.split('\t')
        anyours.add((name, path, int(line)))
        if kind in kinds:
            ours.add((name, path, int(line)))
    print(f"{len(files)} files; reference {len(ref)}, docqa {len(ours)} "
          f"({', '.join(sorted(kinds))})")
    print(f"reference's found by docqa: {len(ref & anyours)}/{len(ref)} "
          f"({100.0 * len(ref & anyours) / max(1, len(ref)):.1f}%)")
    print(f"docqa's in the reference:   {len(ours & ref)}/{len(ours)} "
          f"({100.0 * len(ours & ref) / max(1, len(ours)):.1f}%)")
    rnd = random.Random(1)
    for title, diff in (('missed', ref - anyours), ('extra', ours - ref)):
        d = sorted(diff)
        for name, path, line in rnd.sample(d, min(a.show, len(d))):
            print(f"  {title}: {name} {path}:{line}")


if __name__ == '__main__':
    main()
