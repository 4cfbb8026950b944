#!/usr/bin/env python3
"""Excel workbooks read by docqa against openpyxl, another reader.

The workbooks are Apache POI's test workbooks (Debian's libapache-poi-java
source, fetched with `apt-get source --download-only`, which needs deb-src
lines in the apt sources; or --files DIR): 269 .xlsx files from Excel,
LibreOffice and generators, collected from POI's bug reports. openpyxl
(pip) reads each with data_only=True (a formula's cached value, as docqa
reads it): every worksheet's cells that hold a value, shown as docqa shows
them (numbers to 15 significant digits, a cell in a date format as its
date, a percent format's as a percentage, TRUE / FALSE). Both sides are
multisets of (sheet number, row, cell text), docqa's taken from its
chunks' lines: the row is the line's number, its cells the " | " pieces.
Recall is the share of openpyxl's cells docqa has, precision the share of
docqa's that openpyxl has; a file either reader refuses is listed apart.

With --format xls, the same for Excel 97-2003 workbooks: POI's .xls test
files against xlrd (pip; formatting_info=True for each cell's number
format), its sheets numbered as it lists them.

Usage: python3 tests/bench/ingest/xlsx_check.py DOCQA [--files DIR]
       [--format xls]
"""
import argparse
import collections
import datetime
import glob
import os
import re
import shutil

import benchlib
import tempfile


def fetch(work, ext="xlsx"):
    return benchlib.fetch_source(work, "libapache-poi-java",
                                 ["*/test-data/spreadsheet/*." + ext],
                                 "*/test-data/spreadsheet")


def norm(s):
    return " ".join(s.split())


def docqa_cells(docqa, path, work):
    rows, err = benchlib.docqa_chunks(docqa, path, work,
                                      "text, line_start, page_start")
    if rows is None:
        return None, err
    cells = collections.Counter()
    for text, line, page in rows:
        for i, ln in enumerate(text.split("\n")):
            if ln.startswith("Sheet: ") or ln.startswith("[comment, "):
                continue  # a sheet's heading, a cell's comment: no cells
            if ln.startswith("|"):  # a chunk's first line loses its blank
                ln = " " + ln
            for piece in ln.split(" | "):
                if piece.strip():
                    cells[(page, norm(piece))] += 1
    return cells, None


def shown(v, fmt):
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, datetime.datetime):
        if v.time() == datetime.time(0):
            return v.strftime("%Y-%m-%d")
        return v.strftime("%Y-%m-%d %H:%M" if not v.second else
                          "%Y-%m-%d %H:%M:%S")
    if isinstance(v, datetime.date):
        return v.strftime("%Y-%m-%d")
    if isinstance(v, datetime.time):
        return v.strftime("%H:%M" if not v.second else "%H:%M:%S")
    if isinstance(v, datetime.timedelta):
        return None  # elapsed-time formats: not compared
    if isinstance(v, (int, float)):
        if fmt and "%" in re.sub(r'"[^"]*"', "", fmt.split(";")[0]):
            return "%.15g%%" % (v * 100)
        return "%.15g" % v
    return norm(str(v))


def openpyxl_cells(path):
    import openpyxl
    wb = openpyxl.load_workbook(path, data_only=True, read_only=False)
    cells = collections.Counter()
    for ws in wb.worksheets:
        # the sheet's place among all sheets, chart sheets too, as docqa
        # numbers them (its tab)
        page = wb.sheetnames.index(ws.title) + 1
        for row in ws.iter_rows():
            for c in row:
                if c.value is None or c.value == "":
                    continue
                s = shown(c.value, c.number_format)
                if s:
                    cells[(page, s)] += 1
    return cells


def xlrd_cells(path):
    """Excel 97-2003 (.xls) cells as xlrd reads them (formatting_info for
    each cell's number format), shown as docqa shows them."""
    import xlrd
    wb = xlrd.open_workbook(path, formatting_info=True)
    cells = collections.Counter()
    for page, ws in enumerate(wb.sheets(), 1):
        for r in range(ws.nrows):
            for c in ws.row(r):
                if c.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                    continue
                fmt = wb.format_map.get(wb.xf_list[c.xf_index].format_key) \
                    if c.xf_index is not None and c.xf_index < len(
                        wb.xf_list) else None
                fmt = fmt.format_str if fmt else ""
                v = c.value
                if c.ctype == xlrd.XL_CELL_TEXT and not v.strip():
                    continue
                if c.ctype == xlrd.XL_CELL_BOOLEAN:
                    v = bool(v)
                elif c.ctype == xlrd.XL_CELL_ERROR:
                    v = xlrd.error_text_from_code.get(v, "#ERROR!")
                elif c.ctype == xlrd.XL_CELL_DATE:
                    try:
                        d = xlrd.xldate.xldate_as_datetime(v, wb.datemode)
                    except Exception:
                        d = None
                    # as its format shows it: a date alone, a time of day
                    # alone, or both
                    f = re.sub(r'"[^"]*"|\[[^]]*\]|\\.', "",
                               fmt.split(";")[0].lower())
                    has_time = bool(re.search("[hs]", f))
                    has_date = bool(re.search("[yd]", f)) or (
                        "m" in f and not has_time)
                    if d and has_time and not has_date:
                        v = d.time()
                    elif d and has_date and not has_time:
                        v = d.date()
                    elif d:
                        v = d
                s = shown(v, fmt)
                if s:
                    cells[(page, s)] += 1
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa")
    ap.add_argument("--files")
    ap.add_argument("--format", choices=("xlsx", "xls"), default="xlsx",
                    help="xls: Excel 97-2003 workbooks against xlrd")
    a = ap.parse_args()
    work = tempfile.mkdtemp()
    reader = openpyxl_cells if a.format == "xlsx" else xlrd_cells
    ref_name = "openpyxl" if a.format == "xlsx" else "xlrd"
    try:
        files = a.files or fetch(work, a.format)
        books = sorted(glob.glob(os.path.join(files, "*." + a.format)))
        hit = ref_n = ours_n = both = 0
        apart, rows = [], []
        for path in books:
            name = os.path.basename(path)
            try:
                ref, ref_err = reader(path), None
            except Exception as e:
                ref, ref_err = None, f"{type(e).__name__}: {str(e)[:80]}"
            ours, err = docqa_cells(a.docqa, path, work)
            if ref is None or ours is None:
                apart.append(f"{name}: {ref_name} {ref_err or 'ok'}; docqa "
                             f"{(err or 'ok')[:140]}")
                continue
            both += 1
            if not ref and not ours:
                continue
            h = sum((ours & ref).values())
            hit += h
            ref_n += sum(ref.values())
            ours_n += sum(ours.values())
            r = h / max(1, sum(ref.values()))
            p = h / max(1, sum(ours.values()))
            rows.append((min(r, p), name, r, p, ref, ours))
        for _, name, r, p, ref, ours in sorted(rows, key=lambda x: x[1]):
            print(f"{name[:56]:<56} recall {r:6.1%} precision {p:6.1%} "
                  f"({sum(ref.values())} / {sum(ours.values())} cells)")
        print(f"\n{both} workbooks both read ({len(rows)} with values): cell "
              f"recall {hit / max(1, ref_n):.1%}, precision "
              f"{hit / max(1, ours_n):.1%} ({ref_n} cells by {ref_name}, "
              f"{ours_n} by docqa)")
        for line in apart:
            print("  apart:", line)
        for _, name, r, p, ref, ours in sorted(rows, key=lambda x: x[0])[:20]:
            if r == 1 and p == 1:
                break
            miss = list((ref - ours).elements())[:4]
            extra = list((ours - ref).elements())[:4]
            print(f"  lowest: {name} recall {r:.1%} precision {p:.1%}; "
                  f"{ref_name} only {miss}; docqa only {extra}")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
