#!/usr/bin/env python3
"""OCR of scanned PDFs: how much of a document's text docqa reads back from
a scan of it, how fast, and whether search still finds what it should.

The document is GNU libtasn1's manual (Debian's libtasn1-doc: 36 pages of
prose, code and tables, installed as root when missing). Its pages are
rendered by pdftoppm and written back as picture-only PDFs, as scanners
write them (tests/ingest_read/fixtures/make_pdf.py):
  bw300   black and white at 300 dpi (an office scanner's default)
  gray150 grey at 150 dpi (a phone camera app's "document" mode is often
          about this)
  tif300  bw300's pictures as one multi-page TIFF (a scanner's other
          output), read as an image file, not a PDF
  turned300  bw300 with three pages in four turned as a sheet feeder
          turns them: a quarter turn clockwise, upside down, a quarter
          turn anticlockwise, then one upright (the tesseract program
          reads them as they lie, as it does by default)
The reference is the manual's own text layer, read by poppler's pdftotext:
word recall is the share of its words (case folded, a multiset) that
docqa's chunks hold, precision the share of docqa's words that are in it.
Beside docqa, the tesseract program (Debian's tesseract-ocr, installed as
root when missing) reads the same page images directly (one process, one
page after another, OMP_THREAD_LIMIT=1), as a reference for both the words
and the time a page takes. docqa's time is its ingest with --no-embed
(render, OCR, chunk, store); embedding comes after, not timed. Search: tests/bench/search/manual_eval.py's 41
function questions ("asn1_der_coding", "what does asn1_der_coding do") on
each scan's index and the text PDF's: hit when a result is on the page
that defines the function (by pdftotext's signature line), since OCR may
misread the name itself ("asni_der_coding").

Usage: python3 tests/bench/ingest/ocr_check.py DOCQA [--threads N]
       [--forms bw300,gray150] [--no-tesseract]
"""
import argparse
import collections
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "ingest_read", "fixtures"))
import make_images  # noqa: E402
import make_pdf  # noqa: E402

PDF = "/usr/share/doc/libtasn1-doc/libtasn1.pdf"
FORMS = {"bw300": (300, 1), "gray150": (150, 8), "tif300": (300, 1),
         "turned300": (300, 1)}


def feeder_turns(pages, dpi):
    """Grey pages (pgm_pages') with three in four turned: a quarter turn
    clockwise, a half turn, three quarters, then one upright."""
    out = []
    for k, (w, h, px) in enumerate(pages):
        if k % 4 != 3:
            w, h, _, _, px = make_images.turn((w, h, 8, dpi, px), k % 4 + 1)
        out.append((w, h, px))
    return out


def words(text):
    return collections.Counter(w.lower() for w in re.findall(r"\w+", text))


def score(ref, got):
    common = sum((ref & got).values())
    return (common / max(1, sum(ref.values())),
            common / max(1, sum(got.values())))


def index_text(index):
    """The document's text as its chunks hold it, each byte range once."""
    db = sqlite3.connect(os.path.join(index, "docqa.db"))
    rows = db.execute("SELECT byte_start, byte_end, text FROM chunks "
                      "ORDER BY byte_start").fetchall()
    end, parts = 0, []
    for start, stop, text in rows:
        if start >= end:  # chunks that overlap an earlier one count once
            parts.append(text)
            end = stop
    return "\n".join(parts)


def ingest(docqa, folder, index, threads):
    """Reads folder into index (timed), then embeds it (not timed)."""
    t0 = time.perf_counter()
    out = subprocess.run([docqa, "ingest", folder, "--index", index,
                          "--json", "--threads", str(threads), "-q",
                          "--no-embed"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 3):
        sys.exit("ingest failed: " + out.stderr)
    subprocess.run([docqa, "ingest", "--embed-only", "--index", index,
                    "-q"], check=True)
    return json.loads(out.stdout), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docqa")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--forms", default="bw300,gray150,tif300")
    ap.add_argument("--no-tesseract", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(PDF):
        subprocess.run(["apt-get", "install", "-y", "-q", "libtasn1-doc"],
                       check=True, stdout=subprocess.DEVNULL)
    use_tess = not a.no_tesseract
    if use_tess and not shutil.which("tesseract"):
        subprocess.run(["apt-get", "install", "-y", "-q",
                        "--no-install-recommends", "tesseract-ocr"],
                       check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp()
    try:
        ref_txt = os.path.join(work, "manual.txt")
        subprocess.run(["pdftotext", PDF, ref_txt], check=True)
        ref = words(open(ref_txt, encoding="utf-8").read())
        print(f"reference: {PDF}, pdftotext: {sum(ref.values())} words")
        rows = []
        os.makedirs(os.path.join(work, "text"))
        shutil.copy(PDF, os.path.join(work, "text"))
        j, wall = ingest(a.docqa, os.path.join(work, "text"),
                         os.path.join(work, "idx-text"), a.threads)
        r, p = score(ref, words(index_text(os.path.join(work, "idx-text"))))
        rows.append(("text PDF", "docqa", r, p, wall, 0))
        evals = [("text PDF", os.path.join(work, "idx-text"))]
        for form in a.forms.split(","):
            dpi, bits = FORMS[form]
            pages = make_pdf.pgm_pages(PDF, dpi)
            folder = os.path.join(work, form)
            os.makedirs(folder)
            if form.startswith("turned"):
                pages = feeder_turns(pages, dpi)
            images = [make_pdf.scan_image(pg, bits, dpi) for pg in pages]
            if form.startswith("tif"):
                make_images.tiff(os.path.join(folder, "libtasn1-scan.tif"),
                                 images)
            else:
                make_pdf.write_scan_pdf(
                    os.path.join(folder, "libtasn1-scan.pdf"), None, images)
            index = os.path.join(work, "idx-" + form)
            j, wall = ingest(a.docqa, folder, index, a.threads)
            got = words(index_text(index))
            r, p = score(ref, got)
            rows.append((form, "docqa", r, p, wall, j.get("ocr_pages", 0)))
            evals.append((form, index))
            if use_tess:
                # the scanner's own images, read by tesseract directly
                imgs = os.path.join(work, form + "-img")
                os.makedirs(imgs)
                text = []
                t_tess = 0.0
                for k, pg in enumerate(pages):
                    w, h, b, d, px = make_pdf.scan_image(pg, bits, dpi)
                    path = os.path.join(imgs, f"p{k:03d}.pgm")
                    with open(path, "wb") as f:
                        if bits == 8:
                            f.write(b"P5 %d %d 255\n" % (w, h) + px)
                        else:
                            f.write(b"P4 %d %d\n" % (w, h) +
                                    bytes(255 - v for v in px))
                    t0 = time.perf_counter()
                    out = subprocess.run(
                        ["tesseract", path, "-", "--dpi", str(dpi)],
                        capture_output=True, text=True,
                        env=dict(os.environ, OMP_THREAD_LIMIT="1"))
                    t_tess += time.perf_counter() - t0
                    text.append(out.stdout)
                r, p = score(ref, words("\n".join(text)))
                rows.append((form, "tesseract", r, p, t_tess, len(pages)))
        print(f"{'form':<9} {'reader':<10} {'recall':>7} {'precision':>9} "
              f"{'wall s':>7} {'pages':>5} {'s/page':>7}")
        for form, who, r, p, wall, n in rows:
            per = f"{wall / n:7.2f}" if n else "      -"
            print(f"{form:<9} {who:<10} {100 * r:6.1f}% {100 * p:8.1f}% "
                  f"{wall:7.1f} {n:5d} {per}")
        # search: the page that defines each function (where pdftotext
        # finds its signature "asn1_NAME (") at hit@1 and hit@3; a page,
        # not the signature's text, since OCR may misread the name itself
        # ("asni_der_coding")
        pages_txt = open(ref_txt, encoding="utf-8").read().split("\f")
        defs = {}
        for no, text in enumerate(pages_txt, 1):
            for fn in re.findall(r"^[A-Za-z_][\w ]*?\**\s*\b(asn1_\w+) \(",
                                 text, re.M):
                defs.setdefault(fn, no)
        print(f"search: {len(defs)} functions, the page defining each")
        for form, index in evals:
            line = f"  {form:<9}"
            for q in ("{}", "what does {} do"):
                hit1 = hit3 = 0
                for fn, page in sorted(defs.items()):
                    out = subprocess.run(
                        [a.docqa, "search", q.format(fn), "--index", index,
                         "--k", "3", "--json"], capture_output=True,
                        text=True)
                    res = json.loads(out.stdout)["results"] \
                        if out.returncode == 0 else []
                    ok = [r.get("page") == page for r in res]
                    hit1 += bool(ok) and ok[0]
                    hit3 += any(ok[:3])
                line += (f"  {q.format('F')!r}: hit@1 {hit1}/{len(defs)}"
                         f" hit@3 {hit3}/{len(defs)}")
            print(line)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
