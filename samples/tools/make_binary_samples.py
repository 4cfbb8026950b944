#!/usr/bin/env python3
"""Generate the binary sample contracts for docqa from plain-text sources.

    python3 samples/tools/make_binary_samples.py [--out DIR]

Writes, by default into samples/contracts/:

  software_licence_agreement.docx  from tools/software_licence_agreement.txt
  commercial_lease.pdf             from tools/commercial_lease.txt

Only the Python standard library is used. The output is deterministic: zip
entries carry a fixed timestamp and the PDF has no creation date, so running
the script twice gives byte-identical files.

DOCX source markup: "# " Heading1, "## " Heading2, "+ " numbered list item,
lines starting with "|" are table rows (the first row is the header), a blank
line ends a paragraph (consecutive lines are joined), "%" starts a comment.

PDF source markup: "# " bold heading line, "%" comment, a line holding only
"<<PAGEBREAK>>" starts a new page; other lines are kept as they are (wrapped
at WRAP_COLUMNS), LINES_PER_PAGE lines per page (a heading near the
bottom moves to the next page), "Page N of M" in the footer.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
import zipfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, "..", "contracts"))

DOCX_SOURCE = "software_licence_agreement.txt"
DOCX_NAME = "software_licence_agreement.docx"
PDF_SOURCE = "commercial_lease.txt"
PDF_NAME = "commercial_lease.pdf"

ZIP_DATE = (2025, 9, 1, 12, 0, 0)

# ---------------------------------------------------------------------------
# DOCX
# ---------------------------------------------------------------------------

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
REL_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
REL_STYLES = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
REL_NUMBERING = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering"
REL_CORE = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"

XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

CONTENT_TYPES = XML_DECL + (
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    '<Override PartName="/word/styles.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
    '<Override PartName="/word/numbering.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>'
    '<Override PartName="/docProps/core.xml" ContentType="application/'
    'vnd.openxmlformats-package.core-properties+xml"/>'
    '</Types>'
)

PACKAGE_RELS = XML_DECL + (
    f'<Relationships xmlns="{PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{REL_DOC}" Target="word/document.xml"/>'
    f'<Relationship Id="rId2" Type="{REL_CORE}" Target="docProps/core.xml"/>'
    '</Relationships>'
)

DOCUMENT_RELS = XML_DECL + (
    f'<Relationships xmlns="{PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{REL_STYLES}" Target="styles.xml"/>'
    f'<Relationship Id="rId2" Type="{REL_NUMBERING}" Target="numbering.xml"/>'
    '</Relationships>'
)

CORE_PROPS = XML_DECL + (
    '<cp:coreProperties '
    'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    '<dc:title>Software Licence Agreement</dc:title>'
    '<dc:creator>docqa samples</dc:creator>'
    '<dcterms:created xsi:type="dcterms:W3CDTF">2025-09-01T12:00:00Z</dcterms:created>'
    '</cp:coreProperties>'
)


def _style(style_id: str, name: str, ppr: str = "", rpr: str = "",
           kind: str = "paragraph") -> str:
    return (f'<w:style w:type="{kind}" w:styleId="{style_id}">'
            f'<w:name w:val="{name}"/><w:basedOn w:val="Normal"/>'
            f'<w:qFormat/><w:pPr>{ppr}</w:pPr><w:rPr>{rpr}</w:rPr></w:style>')


STYLES = XML_DECL + (
    f'<w:styles xmlns:w="{W_NS}">'
    '<w:docDefaults><w:rPrDefault><w:rPr>'
    '<w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Calibri"/>'
    '<w:sz w:val="22"/><w:lang w:val="en-IE"/></w:rPr></w:rPrDefault>'
    '<w:pPrDefault><w:pPr><w:spacing w:after="120" w:line="264" w:lineRule="auto"/>'
    '</w:pPr></w:pPrDefault></w:docDefaults>'
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal">'
    '<w:name w:val="Normal"/><w:qFormat/></w:style>'
    + _style("Heading1", "heading 1",
             '<w:keepNext/><w:spacing w:before="360" w:after="120"/><w:outlineLvl w:val="0"/>',
             '<w:b/><w:sz w:val="32"/>')
    + _style("Heading2", "heading 2",
             '<w:keepNext/><w:spacing w:before="240" w:after="80"/><w:outlineLvl w:val="1"/>',
             '<w:b/><w:sz w:val="26"/>')
    + _style("ListParagraph", "List Paragraph", '<w:ind w:left="720"/>')
    + '<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/>'
    '<w:tblPr><w:tblBorders>'
    + "".join(f'<w:{side} w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
              for side in ("top", "left", "bottom", "right", "insideH", "insideV"))
    + '</w:tblBorders></w:tblPr></w:style>'
    '</w:styles>'
)

NUMBERING = XML_DECL + (
    f'<w:numbering xmlns:w="{W_NS}">'
    '<w:abstractNum w:abstractNumId="0">'
    '<w:multiLevelType w:val="singleLevel"/>'
    '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/>'
    '<w:lvlText w:val="(%1)"/><w:lvlJc w:val="left"/>'
    '<w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl>'
    '</w:abstractNum>'
    '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
    '</w:numbering>'
)


def _run(text: str, bold: bool = False) -> str:
    rpr = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return f'<w:r>{rpr}<w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _paragraph(text: str, style: str = "", numbered: bool = False,
               bold: bool = False) -> str:
    ppr = ""
    if style or numbered:
        ppr = "<w:pPr>"
        if style:
            ppr += f'<w:pStyle w:val="{style}"/>'
        if numbered:
            ppr += '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
        ppr += "</w:pPr>"
    return f"<w:p>{ppr}{_run(text, bold)}</w:p>"


def _table(rows: list) -> str:
    ncols = max(len(r) for r in rows)
    width = 9000 // ncols
    out = ['<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/>'
           '<w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid>']
    out.append(f'<w:gridCol w:w="{width}"/>' * ncols)
    out.append("</w:tblGrid>")
    for index, row in enumerate(rows):
        out.append("<w:tr>")
        for cell in row + [""] * (ncols - len(row)):
            out.append(f'<w:tc><w:tcPr><w:tcW w:w="{width}" w:type="dxa"/></w:tcPr>'
                       f"{_paragraph(cell, bold=(index == 0))}</w:tc>")
        out.append("</w:tr>")
    out.append("</w:tbl>")
    return "".join(out)


def docx_blocks(source: str) -> list:
    """Parse the DOCX source markup into (kind, payload) blocks."""
    blocks = []
    para: list = []
    table: list = []

    def flush():
        if para:
            text = " ".join(para)
            if text.startswith("+ "):
                blocks.append(("item", text[2:]))
            else:
                blocks.append(("para", text))
            para.clear()
        if table:
            blocks.append(("table", list(table)))
            table.clear()

    for raw in source.splitlines():
        line = raw.rstrip()
        if line.startswith("%"):
            continue
        if not line:
            flush()
        elif line.startswith("|"):
            if para:
                flush()
            table.append([c.strip() for c in line.strip("|").split("|")])
        elif line.startswith("## "):
            flush()
            blocks.append(("h2", line[3:]))
        elif line.startswith("# "):
            flush()
            blocks.append(("h1", line[2:]))
        elif line.startswith("+ "):
            flush()          # each list item is its own paragraph
            para.append(line)
        else:
            if table:
                flush()
            para.append(line.strip())
    flush()
    return blocks


def build_document_xml(source: str) -> str:
    body = []
    for kind, payload in docx_blocks(source):
        if kind == "h1":
            body.append(_paragraph(payload, style="Heading1"))
        elif kind == "h2":
            body.append(_paragraph(payload, style="Heading2"))
        elif kind == "item":
            body.append(_paragraph(payload, style="ListParagraph", numbered=True))
        elif kind == "table":
            body.append(_table(payload))
            body.append("<w:p/>")   # Word requires a paragraph after a table
        else:
            body.append(_paragraph(payload))
    body.append('<w:sectPr><w:pgSz w:w="11906" w:h="16838"/>'
                '<w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" '
                'w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>')
    return XML_DECL + (f'<w:document xmlns:w="{W_NS}" xmlns:r="{R_NS}"><w:body>'
                       + "".join(body) + "</w:body></w:document>")


def write_docx(source: str, path: str) -> None:
    parts = [
        ("[Content_Types].xml", CONTENT_TYPES),
        ("_rels/.rels", PACKAGE_RELS),
        ("docProps/core.xml", CORE_PROPS),
        ("word/_rels/document.xml.rels", DOCUMENT_RELS),
        ("word/document.xml", build_document_xml(source)),
        ("word/styles.xml", STYLES),
        ("word/numbering.xml", NUMBERING),
    ]
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in parts:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            archive.writestr(info, text.encode("utf-8"))


# ---------------------------------------------------------------------------
# PDF 1.4
# ---------------------------------------------------------------------------

PAGE_WIDTH, PAGE_HEIGHT = 595, 842     # A4 in points
MARGIN_LEFT = 56
TOP_Y = 786
LEADING = 14
LINES_PER_PAGE = 52
COLUMN_WIDTH = 5.6                      # points per source column (aligned blocks)
FONT_SIZE = 10
HEADING_SIZE = 11
WRAP_COLUMNS = 92
PAGE_BREAK = "<<PAGEBREAK>>"


def pdf_escape(text: str) -> str:
    """Escape a string for a PDF literal string: backslash and parentheses."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_pages(source: str) -> list:
    """Split the source into pages of (is_heading, text) lines."""
    lines = []
    for raw in source.splitlines():
        line = raw.rstrip()
        if line.startswith("%"):
            continue
        if line == PAGE_BREAK:
            lines.append(None)
            continue
        if line.startswith("# "):
            lines.append((True, line[2:]))
            continue
        if len(line) <= WRAP_COLUMNS:
            lines.append((False, line))
            continue
        indent = len(line) - len(line.lstrip())
        for piece in textwrap.wrap(line.strip(), WRAP_COLUMNS - indent - 4):
            lines.append((False, " " * indent + piece))
            indent = max(indent, 4)
    pages, page = [], []
    for entry in lines:
        full = len(page) == LINES_PER_PAGE
        # keep a heading with the lines that follow it
        orphan = entry is not None and entry[0] and len(page) >= LINES_PER_PAGE - 3
        if entry is None or full or orphan:
            if page:
                pages.append(page)
            page = []
            if entry is None:
                continue
        if not page and not entry[1]:
            continue                    # no blank line at the top of a page
        page.append(entry)
    if page:
        pages.append(page)
    return pages


def page_stream(page: list, number: int, total: int) -> bytes:
    ops = []
    y = TOP_Y
    for heading, text in page:
        font, size = ("F2", HEADING_SIZE) if heading else ("F1", FONT_SIZE)
        # Runs of two or more spaces align text in columns (the Particulars);
        # each segment is placed at the x position of its source column.
        for match in re.finditer(r"\S+(?: \S+)*", text):
            x = MARGIN_LEFT + match.start() * COLUMN_WIDTH
            ops.append(f"BT /{font} {size} Tf {x:.1f} {y} Td "
                       f"({pdf_escape(match.group())}) Tj ET")
        y -= LEADING
    footer = f"Page {number} of {total}"
    ops.append(f"BT /F1 9 Tf {PAGE_WIDTH / 2 - 24:.1f} 40 Td ({footer}) Tj ET")
    return ("\n".join(ops) + "\n").encode("latin-1")


def write_pdf(source: str, path: str, title: str) -> None:
    pages = pdf_pages(source)
    n = len(pages)
    # Object numbers: 1 catalog, 2 pages, 3 F1, 4 F2, 5 info,
    # then for page i: 6 + 2i page object, 7 + 2i content stream.
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: ("<< /Type /Pages /Kids [" + " ".join(f"{6 + 2 * i} 0 R" for i in range(n))
            + f"] /Count {n} >>").encode("ascii"),
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
           b"/Encoding /WinAnsiEncoding >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold "
           b"/Encoding /WinAnsiEncoding >>",
        5: (f"<< /Title ({pdf_escape(title)}) /Producer (docqa samples "
            f"make_binary_samples.py) >>").encode("latin-1"),
    }
    for i, page in enumerate(pages):
        stream = page_stream(page, i + 1, n)
        objects[6 + 2 * i] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] "
            f"/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> "
            f"/Contents {7 + 2 * i} 0 R >>").encode("ascii")
        objects[7 + 2 * i] = (f"<< /Length {len(stream)} >>\nstream\n".encode("ascii")
                              + stream + b"endstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode("ascii") + objects[number] + b"\nendobj\n"
    xref_at = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n".encode("ascii")
    out += b"0000000000 65535 f \n"
    for number in range(1, size):
        out += f"{offsets[number]:010d} 00000 n \n".encode("ascii")
    out += (f"trailer\n<< /Size {size} /Root 1 0 R /Info 5 0 R >>\n"
            f"startxref\n{xref_at}\n%%EOF\n").encode("ascii")
    with open(path, "wb") as handle:
        handle.write(out)


# ---------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="output folder (default: samples/contracts)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    with open(os.path.join(HERE, DOCX_SOURCE), encoding="utf-8") as handle:
        docx_source = handle.read()
    with open(os.path.join(HERE, PDF_SOURCE), encoding="utf-8") as handle:
        pdf_source = handle.read()

    docx_path = os.path.join(args.out, DOCX_NAME)
    pdf_path = os.path.join(args.out, PDF_NAME)
    write_docx(docx_source, docx_path)
    write_pdf(pdf_source, pdf_path, "Lease of Commercial Premises - Unit 4, Wharfside")
    for path in (docx_path, pdf_path):
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
