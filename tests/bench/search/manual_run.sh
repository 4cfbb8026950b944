#!/usr/bin/env bash
# Search in a book-like PDF manual: GNU libtasn1's reference manual
# (Debian's libtasn1-doc, installed here as root when missing), a texinfo
# PDF with numbered chapters, a function per unnumbered font heading, a
# contents page and two index pages whose dot-leader entries name every
# function.
#
# The reference is the PDF itself read by poppler's pdftotext (not by
# docqa): every function signature line "TYPE asn1_NAME (" gives a
# function. For each, two queries, its name ("asn1_der_coding") and
# "what does asn1_der_coding do"; a result hits when its text holds the
# signature "asn1_der_coding (", the function's own definition. hit@1 and
# hit@3 of `docqa search --k 3` (hybrid: BM25, vectors, symbols).
#
# The same manual as an e-book: its gtk-doc HTML (the same package),
# made into an EPUB 3 by pandoc (installed as root when missing), scored
# against the same signatures from the PDF; and the HTML pages themselves,
# the reading the EPUB should match.
#
# Usage: tests/bench/search/manual_run.sh BUILD_DIR [DOCQA...]
#   runs BUILD_DIR/cli/docqa and any further docqa binaries (an older
#   build, for a side-by-side run), each with its own index in a temp dir.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
BUILD=${1:?usage: manual_run.sh BUILD_DIR [DOCQA...]}
shift
PDF=/usr/share/doc/libtasn1-doc/libtasn1.pdf
if [ ! -f "$PDF" ]; then
  apt-get install -y -q libtasn1-doc >/dev/null
fi
command -v pdftotext >/dev/null || apt-get install -y -q poppler-utils >/dev/null
command -v pandoc >/dev/null || apt-get install -y -q pandoc >/dev/null
HTML=/usr/share/gtk-doc/html/libtasn1
PAGES="index.html ch01.html libtasn1-libtasn1.html api-index-full.html"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/doc"
cp "$PDF" "$WORK/doc/"
pdftotext "$PDF" "$WORK/manual.txt"
mkdir -p "$WORK/epub" "$WORK/html"
(cd "$HTML" && cp $PAGES "$WORK/html/" &&
  pandoc $PAGES -o "$WORK/epub/libtasn1.epub")
i=0
for bin in "$BUILD/cli/docqa" "$@"; do
  for form in doc epub html; do
    i=$((i + 1))
    echo "== $form"
    "$bin" ingest "$WORK/$form" --index "$WORK/idx$i" -q || true
    python3 "$ROOT/tests/bench/search/manual_eval.py" "$bin" "$WORK/idx$i" \
      "$WORK/manual.txt"
  done
done
