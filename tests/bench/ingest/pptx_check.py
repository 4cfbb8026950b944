#!/usr/bin/env python3
"""PowerPoint decks read by docqa against python-pptx, another reader.

The decks are Apache POI's test decks (Debian's libapache-poi-java source,
fetched with `apt-get source --download-only`, which needs deb-src lines
in the apt sources; or --files DIR): 51 .pptx/.pptm files from PowerPoint,
Keynote, LibreOffice and generators, collected from POI's bug reports.
python-pptx (pip) reads each: every slide's shapes' paragraphs (groups
too; a table's cells once, not the cells a merge covers), leaving out the
date, footer and slide-number placeholders, and the notes page's body.
Both texts are case-folded word multisets; docqa's "Slide N:" heading
words and "[notes]" marks are taken out of its. Recall is the share of
python-pptx's words docqa has, precision the share of docqa's that
python-pptx has; a file either reader refuses is listed apart.

Usage: python3 tests/bench/ingest/pptx_check.py DOCQA [--files DIR]
"""
import argparse
import glob
import os
import re
import shutil

import benchlib
import tempfile


def fetch(work):
    return benchlib.fetch_source(work, "libapache-poi-java",
                                 ["*/test-data/slideshow/*.ppt[xm]"], "*/test-data/slideshow")


def docqa_text(docqa, path, work):
    rows, err = benchlib.docqa_chunks(docqa, path, work)
    if rows is None:
        return None, err
    text = "\n".join(r[0] for r in rows)
    text = re.sub(r"^Slide \d+( \(hidden\))?(: |$)", "", text, flags=re.M)
    text = re.sub(r"^\[notes\] ", "", text, flags=re.M)
    return text, None


def pptx_text(path):
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER
    skip = {PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER,
            PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.HEADER,
            PP_PLACEHOLDER.SLIDE_IMAGE}
    out = []

    def shapes(coll):
        for sh in coll:
            if sh.shape_type is not None and sh.shape_type == 6:  # GROUP
                shapes(sh.shapes)
                continue
            if sh.is_placeholder:
                try:
                    if sh.placeholder_format.type in skip:
                        continue
                except ValueError:
                    pass
            if getattr(sh, "has_text_frame", False) and sh.has_text_frame:
                out.extend(p.text for p in sh.text_frame.paragraphs)
            if getattr(sh, "has_table", False) and sh.has_table:
                for row in sh.table.rows:
                    for c in row.cells:
                        if not c.is_spanned:
                            out.append(c.text)

    prs = Presentation(path)
    for s in prs.slides:
        shapes(s.shapes)
        if s.has_notes_slide:
            tf = s.notes_slide.notes_text_frame
            if tf is not None:
                out.extend(p.text for p in tf.paragraphs)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa")
    ap.add_argument("--files")
    a = ap.parse_args()
    work = tempfile.mkdtemp()
    try:
        files = a.files or fetch(work)
        decks = sorted(glob.glob(os.path.join(files, "*.ppt[xm]")))
        hit = ref_n = ours_n = 0
        both = 0
        apart = []
        worst = []
        for path in decks:
            name = os.path.basename(path)
            try:
                ref = benchlib.words(pptx_text(path))
            except Exception as e:  # python-pptx refuses the file
                ref = None
                ref_err = f"{type(e).__name__}: {str(e)[:80]}"
            text, err = docqa_text(a.docqa, path, work)
            if ref is None or text is None:
                apart.append(f"{name}: python-pptx "
                             f"{'ok' if ref is not None else ref_err}; docqa "
                             f"{'ok' if text is not None else err[:120]}")
                continue
            ours = benchlib.words(text)
            h = sum((ours & ref).values())
            both += 1
            hit += h
            ref_n += sum(ref.values())
            ours_n += sum(ours.values())
            if not ref and not ours:  # pictures and charts only
                print(f"{name[:60]:<60} no words in either")
                continue
            r = h / max(1, sum(ref.values()))
            p = h / max(1, sum(ours.values()))
            worst.append((min(r, p), name, r, p, sum(ref.values()),
                          sum(ours.values())))
            print(f"{name[:60]:<60} recall {r:6.1%} precision {p:6.1%} "
                  f"({sum(ref.values())} / {sum(ours.values())} words)")
        print(f"\n{both} decks both read ({len(worst)} with words): word "
              f"recall {hit / max(1, ref_n):.1%}"
              f", precision {hit / max(1, ours_n):.1%} ({ref_n} words by "
              f"python-pptx, {ours_n} by docqa)")
        for line in apart:
            print("  apart:", line)
        for _, name, r, p, nr, no in sorted(worst)[:5]:
            print(f"  lowest: {name} recall {r:.1%} precision {p:.1%} "
                  f"({nr} / {no} words)")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
