#!/usr/bin/env python3
"""Qualified xref (`docqa xref Record.member`) against clang's own answer
(C), with --go against go/types' (owner_go.go beside this script), with
--java against javac's (OwnerJava.java: field uses, `x.f` and a bare `f`
in a method alike, and the class that declares each field), with --ts
against the TypeScript checker's (owner_ts.js: `x.f` that reaches a
class's field).

For C trees: clang parses each .c file (-ast-dump=json); every MemberExpr
in the tree's files (not in a macro expansion) names its member and, through
referencedMemberDecl, the struct/union that declares it. That is the
reference: for each member name declared in two or more named records, and
each such record R, the sites where clang says `x.m`/`x->m` is R's member.

docqa: the tree ingested with --no-embed, then `docqa xref R.m --json` per
(R, m). Its references are "known" (the site showed the owner: owner_known
true) or "not known" (kept, marked); the member's other uses are left out.
Per site of the reference:
  known right   - docqa's known reference where clang says R;
  known wrong   - docqa's known reference where clang says another record;
  marked        - a site of R that docqa kept but marked as not known;
  left out      - a site of R that docqa left out (wrongly).
Baseline: the plain `docqa xref m`, every use of the name, i.e. precision
|R's sites| / |sites of any record| over the same pairs.

Usage: tests/bench/xref/owner_cmp.py --src DIR --docqa BIN [--go | --java |
       --ts [--ts-roots A,B]]
       [--cflags "-Iinclude ..."] [--files src/a.c,src/b.c] [--min-records 2]
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict


def walk_ast(node, st, out_fields, out_members, record=None):
    """Walks clang's JSON AST in document order; st tracks the file and
    line that the JSON leaves out when they repeat."""

    def upd(loc):
        if not loc:
            return None
        if "spellingLoc" in loc or "expansionLoc" in loc:
            upd(loc.get("spellingLoc"))
            upd(loc.get("expansionLoc"))
            return "macro"
        if "file" in loc:
            st["file"] = loc["file"]
        if "line" in loc:
            st["line"] = loc["line"]
        if "col" in loc:
            return (st["file"], st["line"], loc["col"])
        return None

    upd(node.get("loc"))
    rng = node.get("range") or {}
    upd(rng.get("begin"))
    here = upd(rng.get("end"))  # a MemberExpr ends with the member's name
    kind = node.get("kind")
    if kind == "RecordDecl":
        record = node.get("name") or None
    elif kind == "FieldDecl" and record:
        out_fields[node["id"]] = (record, node.get("name"))
    elif kind == "MemberExpr" and here and here != "macro":
        out_members.append((node.get("name"), node.get("referencedMemberDecl"),
                            here))
    for ch in node.get("inner", []) or []:
        walk_ast(ch, st, out_fields, out_members,
                 record if kind != "TranslationUnitDecl" else None)


def clang_sites(src, files, cflags):
    """(record, member) -> {(path, line, col)} of member accesses in the
    tree, and every (record, member) declared. Declaration ids are memory
    addresses, so each translation unit's are resolved on their own."""
    sites, declared = defaultdict(set), set()
    for f in files:
        p = subprocess.run(["clang", "-fsyntax-only", "-w"] + cflags +
                           ["-Xclang", "-ast-dump=json", f], cwd=src,
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"owner_cmp: clang failed on {f}:\n{p.stderr[-2000:]}")
        fields, members = {}, []
        st = {"file": None, "line": None}
        walk_ast(json.loads(p.stdout), st, fields, members)
        declared.update(fields.values())
        for name, decl, (path, line, col) in members:
            rec = fields.get(decl, (None, None))[0]
            if not rec or not path:
                continue
            path = os.path.normpath(path)
            if path.startswith("/") or path.startswith(".."):
                continue  # system headers
            sites[(rec, name)].add((path, line, col))
    return sites, declared


def go_sites(src):
    """The same from go/types (owner_go.go): struct field accesses and the
    named struct that declares each field."""
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "owner_go.go")
    env = dict(os.environ, GO111MODULE="off")
    p = subprocess.run(["go", "run", helper, src], capture_output=True,
                       text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"owner_cmp: owner_go.go failed:\n{p.stderr[-2000:]}")
    j = json.loads(p.stdout)
    sites = defaultdict(set)
    for x in j["sites"] or []:
        sites[(x["owner"], x["name"])].add((x["path"], x["line"], x["col"]))
    return sites, {tuple(d) for d in j["declared"] or []}


def helper_sites(src, cmd, what, env=None):
    """The sites a helper program prints as JSON ({"sites": [{path, line,
    col, owner, name}], "declared": [[owner, name]]}, columns in characters
    from 1), with byte columns."""
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"owner_cmp: {what} failed:\n{p.stderr[-2000:]}")
    j = json.loads(p.stdout)
    lines = {}
    sites = defaultdict(set)
    for x in j["sites"]:
        if x["path"] not in lines:
            with open(os.path.join(src, x["path"]), encoding="utf-8") as fh:
                lines[x["path"]] = fh.read().split("\n")
        text = lines[x["path"]][x["line"] - 1]
        col = len(text[:x["col"] - 1].encode("utf-8")) + 1
        sites[(x["owner"], x["name"])].add((x["path"], x["line"], col))
    return sites, {tuple(d) for d in j["declared"]}


def java_sites(src):
    """The same from javac's compiler API (OwnerJava.java): field uses and
    the class that declares each field."""
    here = os.path.dirname(os.path.abspath(__file__))
    return helper_sites(src, ["java", os.path.join(here, "OwnerJava.java"),
                              src], "OwnerJava.java")


def ts_sites(src, roots):
    """The same from the TypeScript compiler's checker (owner_ts.js):
    property accesses that reach a class's field."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, NODE_PATH="/usr/share/nodejs")
    return helper_sites(src, ["node", os.path.join(here, "owner_ts.js"), src]
                        + roots, "owner_ts.js", env)


def docqa_json(docqa, index, symbol):
    p = subprocess.run([docqa, "xref", symbol, "--index", index, "--json",
                        "-q"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"owner_cmp: docqa xref {symbol}: {p.stderr}")
    return json.loads(p.stdout)


def compare(docqa, index, pairs, truth, others, show, drop_defs=False):
    """Asks docqa `xref OWNER.MEMBER --json` for each pair and counts its
    references against the reference's: truth[pair] the sites it gives the
    pair, others[pair] the sites of the same name it gives other owners.
    drop_defs: docqa's own definitions are no references (Python's
    `self.x = ...`). Prints up to show sites of each of wrong, left out and
    marked; returns the counts (keys as in the module's docstring) and the
    query times, qualified and plain."""
    tot = defaultdict(int)
    shown = defaultdict(int)
    ms_q, ms_plain = [], {}
    for rec, name in pairs:
        ts, other = truth[(rec, name)], others[(rec, name)]
        j = docqa_json(docqa, index, f"{rec}.{name}")
        ms_q.append(j.get("time_ms", 0.0))
        if name not in ms_plain:
            ms_plain[name] = docqa_json(docqa, index, name).get("time_ms", 0.0)
        if not j.get("definitions"):
            # docqa has no definition of R.m (e.g. fields a macro declares)
            tot["undefined_pairs"] += 1
            tot["undefined_sites"] += len(ts)
            continue
        if drop_defs:
            ts = ts - {(d["path"], d["line"], d["col"])
                       for d in j["definitions"]}
        tot["pairs"] += 1
        tot["sites"] += len(ts)
        known, marked = set(), set()
        for r in j.get("references", []):
            s = (r["path"], r["line"], r["col"])
            (known if r.get("owner_known", True) else marked).add(s)
        tot["other"] += len(other)
        tot["known_right"] += len(known & ts)
        tot["known_wrong"] += len(known & other)
        tot["marked_right"] += len(marked & ts)
        tot["marked_other"] += len(marked & other)
        lo = ts - known - marked
        tot["left_out"] += len(lo)
        tot["other_left_out"] += len(other - known - marked)
        for tag, ss in (("wrong", known & other), ("left out", lo),
                        ("marked", marked & ts)):
            for s in sorted(ss):
                if shown[tag] < show:
                    shown[tag] += 1
                    print(f"  {tag}: {rec}.{name} at {s[0]}:{s[1]}:{s[2]}")
    return tot, ms_q, list(ms_plain.values())


def pct(x, d):
    return f"{100.0 * x / d:.1f}%" if d else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True)
    ap.add_argument("--docqa", required=True)
    ap.add_argument("--cflags", default="")
    ap.add_argument("--files", default="", help="comma-separated .c files "
                    "(default: every *.c under --src)")
    ap.add_argument("--min-records", type=int, default=2)
    ap.add_argument("--go", action="store_true",
                    help="a Go package: go/types is the reference")
    ap.add_argument("--java", action="store_true",
                    help="a Java source tree: javac is the reference")
    ap.add_argument("--ts", action="store_true",
                    help="a TypeScript tree: tsc's checker is the reference")
    ap.add_argument("--ts-roots", default="",
                    help="comma-separated folders the TypeScript program "
                    "also needs (--src's files extend their namespaces)")
    ap.add_argument("--show", type=int, default=8,
                    help="wrong and left-out sites to print")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    files = a.files.split(",") if a.files else sorted(
        os.path.relpath(f, src) for f in glob.glob(f"{src}/**/*.c",
                                                   recursive=True))
    if a.go or a.java or a.ts:
        sites, declared = (go_sites(src) if a.go else java_sites(src)
                           if a.java else
                           ts_sites(src, [r for r in a.ts_roots.split(",") if r]))
        files = sorted({p for ss in sites.values() for p, _, _ in ss})
    else:
        sites, declared = clang_sites(src, files, shlex.split(a.cflags))
    records_of = defaultdict(set)  # member name -> records declaring it
    for rec, name in declared:
        records_of[name].add(rec)
    pairs = sorted(p for p in sites if len(records_of[p[1]]) >= a.min_records)
    index = tempfile.mkdtemp(prefix="dq-ownercmp-")
    subprocess.run([a.docqa, "ingest", src, "--no-embed", "--index", index,
                    "-q"], check=True)
    others = {}
    for rec, name in pairs:
        others[(rec, name)] = set()
        for r2 in records_of[name]:
            if r2 != rec:
                others[(rec, name)] |= sites[(r2, name)]
    # a reference's site that docqa lists as the owner's definition (TS's
    # `this.x = ...` in a constructor) is shown, not left out
    t, ms_q, ms_plain = compare(a.docqa, index, pairs, sites, others, a.show,
                                drop_defs=True)
    n = t["sites"]
    judged = t["known_right"] + t["known_wrong"]
    what = ("files with field accesses (go/types)" if a.go else
            "files with field uses (javac)" if a.java else
            "files with field accesses (tsc)" if a.ts else
            ".c files parsed by clang")
    print(f"tree: {src} ({len(files)} {what})")
    print(f"pairs (record, member) whose member is declared in >= "
          f"{a.min_records} records and used: "
          f"{t['pairs'] + t['undefined_pairs']}; their sites: "
          f"{n + t['undefined_sites']}, the same names' sites of other "
          f"records: {t['other']}")
    print(f"pairs docqa has no definition for (left out of what follows): "
          f"{t['undefined_pairs']} ({t['undefined_sites']} sites)")
    print(f"known right {t['known_right']}/{n} ({pct(t['known_right'], n)}), "
          f"marked {t['marked_right']} ({pct(t['marked_right'], n)}), "
          f"left out {t['left_out']} ({pct(t['left_out'], n)})")
    print(f"known wrong {t['known_wrong']}: precision of known "
          f"{pct(t['known_right'], judged)}; other records' sites left out "
          f"{t['other_left_out']}/{t['other']} "
          f"({pct(t['other_left_out'], t['other'])}), marked "
          f"{t['marked_other']}")
    print(f"baseline (plain `xref member`, every use): precision "
          f"{pct(n, n + t['other'])}")
    def pcts(v):
        v = sorted(v)
        return (f"p50 {v[len(v) // 2]:.1f} / p90 {v[int(len(v) * 0.9)]:.1f} / "
                f"max {v[-1]:.1f} ms" if v else "-")
    print(f"query time (docqa's time_ms, without process start): qualified "
          f"{pcts(ms_q)}; plain lookups of the same names {pcts(ms_plain)}")
    shutil.rmtree(index, ignore_errors=True)


if __name__ == "__main__":
    main()
