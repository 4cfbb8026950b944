#!/usr/bin/env python3
"""Scores `docqa search` on a manual's functions (manual_run.sh says how):
python3 manual_eval.py DOCQA INDEX MANUAL_TXT. An index that read nothing
(an older docqa skips an EPUB as binary) scores nothing."""
import json
import re
import subprocess
import sys


def main():
    docqa, index, txt = sys.argv[1:4]
    text = open(txt, encoding="utf-8", errors="replace").read()
    names = sorted(set(re.findall(r"^[A-Za-z_][\w ]*?\**\s*\b(asn1_\w+) \(",
                                  text, re.M)))
    print(f"{docqa}: {len(names)} functions")
    for form in ("{}", "what does {} do"):
        hit1 = hit3 = 0
        ms = []
        for fn in names:
            out = subprocess.run([docqa, "search", form.format(fn), "--index",
                                  index, "--k", "3", "--json"],
                                 capture_output=True, text=True)
            if out.returncode != 0:  # an index that read nothing
                print("  search failed: " + out.stderr.strip())
                return
            j = json.loads(out.stdout)
            sig = re.compile(r"\b" + re.escape(fn) + r" \(")
            ok = [bool(sig.search(r.get("text", ""))) for r in j["results"]]
            hit1 += bool(ok) and ok[0]
            hit3 += any(ok[:3])
            ms.append(j.get("time_ms", 0))
        ms.sort()
        print(f"  {form.format('F'):<18} hit@1 {hit1}/{len(names)}"
              f"  hit@3 {hit3}/{len(names)}  p50 {ms[len(ms) // 2]:.1f} ms")


if __name__ == "__main__":
    main()
