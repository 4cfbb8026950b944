/*
 * read_odt.c - OpenDocument text reader (.odt, LibreOffice's own format),
 * and its presentations (.odp, LibreOffice Impress: dq_read_odp, at the
 * end), which hold the same paragraphs, lists and tables in their shapes:
 * the zip container through read_zip.c, content.xml and styles.xml through
 * libxml2 (read_xml.c's safe parse).
 *
 * On-disk layout used here (OASIS OpenDocument 1.2/1.3): a zip archive
 * holding
 *   content.xml  office:document-content/office:body/office:text with
 *                text:h headings (text:outline-level, 1-based) and text:p
 *                paragraphs; text:list of text:list-item / text:list-header
 *                (text:list@text:style-name names its list style, a nested
 *                list keeps its parent's; text:continue-numbering="true" or
 *                text:continue-list continue the numbers of the list
 *                before); table:table of table:table-row (also inside
 *                table:table-header-rows, table:table-rows,
 *                table:table-row-group) of table:table-cell; text:section
 *                and a table of contents' text:index-body holding more
 *                blocks. Inline: text:span, text:a, text:s (text:c spaces),
 *                text:tab, text:line-break, text:note (text:note-citation,
 *                text:note-body), draw:frame/draw:text-box holding
 *                paragraphs, office:annotation (a comment: dc:creator,
 *                dc:date and text:p; office:name when it marks text up to
 *                the office:annotation-end of that name;
 *                loext:parent-name naming the comment it answers,
 *                loext:resolved="true"). office:automatic-styles holds
 *                text:list-style.
 *   styles.xml   office:master-styles/style:master-page's style:header,
 *                style:header-first, style:header-left and the footers
 *                alike: paragraphs and tables, text:page-number and
 *                text:page-count inline;
 *                office:styles/text:outline-style (the headings' numbers) and
 *                text:list-style; their levels, text:outline-level-style and
 *                text:list-level-style-number (text:level, 1-based), have
 *                style:num-format ("1", "a", "A", "i", "I"; empty: none),
 *                style:num-prefix, style:num-suffix, text:display-levels
 *                and text:start-value; text:list-level-style-bullet is a
 *                bullet.
 * Left out: text:tracked-changes (deleted text), text:sequence-decls,
 * draw:image, svg:title and svg:desc.
 *
 * Output as read_docx.c's: one line per paragraph, heading or list item; a
 * table row is one line with its cells joined by " | "; marks carry `line`
 * = the 1-based paragraph number in document order (paragraphs in tables
 * count too). text:h are headings, with their outline number written
 * before them ("2.1 Grant"), list items with theirs ("(a)", "•"). A note's
 * citation reads "[1]" and its text follows as "[1] text" on a line of its
 * own after the paragraph (a table's row), at that paragraph's number. A
 * comment follows in the same way, with no mark in the text, as
 * "[comment, Jane Doe, 2026-03-01, on "30 days"] text" (read_docx.c's
 * form: the quote when it marks part of a paragraph; "[reply, ..." for an
 * answer). The master pages' headers and footers follow the body as in
 * read_docx.c: "Headers and footers", then "[header] ..." lines, each once,
 * page numbers left out.
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ODT_LEVELS 10 /* outline and list levels */
#define MAX_LIST_STYLES 1024
#define ODP_MAX_SLIDES 10000u
#define MAX_PENDING 64 /* notes cited by one paragraph or row */
#define MAX_SPACES 64  /* text:s text:c honoured up to this */
#define AFFIX_BYTES 16 /* a number's prefix or suffix */
#define STYLE_NAME_BYTES 64

typedef struct lvl_fmt {
  dq_num_fmt fmt; /* DQ_FMT_NONE: no number */
  char prefix[AFFIX_BYTES], suffix[AFFIX_BYTES];
  int display; /* levels shown, this one and those above */
  int start;
} lvl_fmt;

typedef struct list_style {
  char name[STYLE_NAME_BYTES];
  lvl_fmt lv[ODT_LEVELS];
} list_style;

typedef struct odt {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  dq_zip z;
  uint32_t para_no;   /* in a presentation: the line within its slide */
  uint32_t page;      /* a presentation's slide, 1-based; 0 in a text */
  const char *prefix; /* written before the next paragraph with text
                         ("[notes] "), then cleared */
  int n_bodies;       /* notes frames a notes page's pass met */
  int in_hf;          /* writing the page headers and footers */
  dq_hf hf;           /* their lines written so far */
  lvl_fmt outline[ODT_LEVELS];
  int outline_count[ODT_LEVELS];
  list_style *styles;
  size_t n_styles;
  /* the list being read: its style, nesting depth, counters */
  const list_style *list;
  int list_depth;
  int list_count[ODT_LEVELS];
  const list_style *last_list; /* of the last top-level list, to continue */
  int last_count[ODT_LEVELS];
  struct {
    xmlNodePtr n;         /* a text:note, or an office:annotation */
    char cite[16];        /* a note's citation */
    size_t q_off, q_end;  /* the text a comment marks in b, if q_off < q_end */
    size_t p_start;       /* where its paragraph's text starts in b */
    int p_cell;           /* that paragraph is in a table's cell */
  } pending[MAX_PENDING]; /* notes cited, comments met, not yet written */
  size_t n_pending;
  int in_note;
  size_t p_start; /* where the current paragraph's text starts in b */
  int p_cell;     /* the current paragraph is in a table's cell */
} odt;

/* ---- styles ---- */

/* A level's format from text:outline-level-style or
 * text:list-level-style-*. */
static void level_of(xmlNodePtr l, lvl_fmt *f) {
  memset(f, 0, sizeof *f);
  f->display = 1;
  f->start = attr_int(l, "start-value", 1);
  if (is(l, "list-level-style-bullet")) {
    f->fmt = DQ_FMT_BULLET;
    return;
  }
  const char *v = attr(l, "num-format");
  f->fmt = !v || !v[0]   ? DQ_FMT_NONE
           : v[0] == 'a' ? DQ_FMT_LLETTER
           : v[0] == 'A' ? DQ_FMT_ULETTER
           : v[0] == 'i' ? DQ_FMT_LROMAN
           : v[0] == 'I' ? DQ_FMT_UROMAN
                         : DQ_FMT_DECIMAL;
  const char *p = attr(l, "num-prefix"), *s = attr(l, "num-suffix");
  snprintf(f->prefix, sizeof f->prefix, "%s", p ? p : "");
  snprintf(f->suffix, sizeof f->suffix, "%s", s ? s : "");
  int d = attr_int(l, "display-levels", 1);
  f->display = d < 1 ? 1 : d > ODT_LEVELS ? ODT_LEVELS : d;
}

/* Reads the text:outline-style and text:list-style children of `styles`
 * (office:styles or office:automatic-styles). */
static dq_status load_styles(odt *d, xmlNodePtr styles) {
  for (xmlNodePtr s = styles ? styles->children : NULL; s; s = s->next) {
    int outline = is(s, "outline-style");
    if (!outline && !is(s, "list-style"))
      continue;
    lvl_fmt *lv = d->outline;
    if (!outline) {
      const char *name = attr(s, "name");
      if (!name || strlen(name) >= STYLE_NAME_BYTES ||
          d->n_styles == MAX_LIST_STYLES)
        continue;
      if (d->n_styles % 16 == 0) {
        list_style *p =
            realloc(d->styles, (d->n_styles + 16) * sizeof *d->styles);
        if (!p)
          return dq_error_set(d->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                              d->c->name);
        d->styles = p;
      }
      list_style *ls = &d->styles[d->n_styles++];
      memset(ls, 0, sizeof *ls);
      snprintf(ls->name, sizeof ls->name, "%s", name);
      for (int i = 0; i < ODT_LEVELS; i++)
        ls->lv[i].fmt = DQ_FMT_NONE;
      lv = ls->lv;
    }
    for (xmlNodePtr l = s->children; l; l = l->next) {
      int k = attr_int(l, "level", 0) - 1;
      if (l->type == XML_ELEMENT_NODE && k >= 0 && k < ODT_LEVELS)
        level_of(l, &lv[k]);
    }
  }
  return DQ_OK;
}

static const list_style *list_style_of(const odt *d, const char *name) {
  for (size_t i = 0; name && i < d->n_styles; i++)
    if (!strcmp(d->styles[i].name, name))
      return &d->styles[i];
  return NULL;
}

/* The number of level k (0-based) of a list or the outline into out:
 * prefix, the displayed levels' counters joined by '.', suffix. */
static void number_label(const lvl_fmt *lv, const int *count, int k, char *out,
                         size_t cap) {
  out[0] = '\0';
  const lvl_fmt *f = &lv[k];
  if (f->fmt == DQ_FMT_NONE)
    return;
  if (f->fmt == DQ_FMT_BULLET) {
    snprintf(out, cap, "\xE2\x80\xA2");
    return;
  }
  size_t n = (size_t)snprintf(out, cap, "%s", f->prefix);
  int from = k - f->display + 1 < 0 ? 0 : k - f->display + 1;
  for (int i = from; i <= k && n < cap; i++) {
    char num[40];
    dq_format_counter(num, sizeof num,
                      lv[i].fmt == DQ_FMT_NONE || lv[i].fmt == DQ_FMT_BULLET
                          ? DQ_FMT_DECIMAL
                          : lv[i].fmt,
                      count[i]);
    n += (size_t)snprintf(out + n, cap - n, "%s%s", i > from ? "." : "", num);
  }
  if (n < cap)
    snprintf(out + n, cap - n, "%s", f->suffix);
}

/* ---- text ---- */

/* The error of elements nested deeper than DQ_XML_MAX_DEPTH. */
static dq_status too_deep(const odt *d) {
  return dq_error_set(d->c->err, DQ_ERR_LIMIT,
                      "%s: content.xml nested deeper than %u", d->c->name,
                      DQ_XML_MAX_DEPTH);
}

static dq_status inline_text(odt *d, xmlNodePtr n, unsigned depth);

/* The text content of n's first child element `local`, or NULL (the
 * caller frees it with xmlFree). */
static char *child_text(xmlNodePtr n, const char *local) {
  xmlNodePtr c = child(n, local);
  return c ? (char *)xmlNodeGetContent(c) : NULL;
}

/* Pending comment i's head, "[comment, author, date, on "quote"] ". */
static void comment_head(odt *d, size_t i) {
  xmlNodePtr n = d->pending[i].n;
  char *author = child_text(n, "creator"), *date = child_text(n, "date");
  const char *resolved = attr(n, "resolved");
  dq_comment h = {0};
  h.author = author;
  h.date = date;
  h.reply = attr(n, "parent-name") != NULL;
  h.resolved = resolved && strcmp(resolved, "true") == 0;
  if (!h.reply) /* a reply is on its thread's text */
    dq_comment_quote(d->b, d->pending[i].q_off, d->pending[i].q_end,
                     d->pending[i].p_start, d->pending[i].p_cell, &h);
  dq_tbuf_comment(d->b, &h);
  xmlFree(author);
  xmlFree(date);
}

/* A comment's text: its paragraphs, words apart. */
static dq_status comment_text(odt *d, xmlNodePtr n) {
  dq_status st = DQ_OK;
  for (xmlNodePtr p = n->children; p && st == DQ_OK; p = p->next) {
    if (!is(p, "p") && !is(p, "list"))
      continue;
    dq_tbuf_space(d->b);
    st = inline_text(d, p, 1);
  }
  return st;
}

/* Writes the notes cited and the comments met so far, each "[1] its text"
 * or "[comment, ...] its text" on a line of its own at the current
 * paragraph's number. */
static dq_status flush_notes(odt *d) {
  dq_status st = DQ_OK;
  d->in_note = 1;
  for (size_t i = 0; i < d->n_pending && st == DQ_OK; i++) {
    xmlNodePtr n = d->pending[i].n;
    int comment = is(n, "annotation");
    xmlNodePtr body = comment ? n : child(n, "note-body");
    if (!body)
      continue;
    dq_tbuf_newline(d->b);
    dq_tbuf_pos(d->b, d->para_no, d->page);
    if (comment) {
      comment_head(d, i);
    } else {
      char label[24];
      snprintf(label, sizeof label, "[%s] ", d->pending[i].cite);
      dq_tbuf_put_utf8(d->b, label, strlen(label));
    }
    st = comment ? comment_text(d, n) : inline_text(d, body, 0);
    dq_tbuf_trim_spaces(d->b, 0);
    dq_tbuf_newline(d->b);
  }
  d->n_pending = 0;
  d->in_note = 0;
  return st;
}

/* A text:note: "[citation]" inline, its body queued for flush_notes. The
 * citation is cut to 15 bytes; the labels go through dq_tbuf_put_utf8, so
 * a cut inside a character stays valid UTF-8. */
static void note(odt *d, xmlNodePtr n) {
  char cite[16] = "";
  xmlNodePtr c = child(n, "note-citation");
  xmlChar *t = c ? xmlNodeGetContent(c) : NULL;
  if (t)
    snprintf(cite, sizeof cite, "%s", (const char *)t);
  xmlFree(t);
  if (!cite[0])
    snprintf(cite, sizeof cite, "*");
  char label[24];
  snprintf(label, sizeof label, "[%s]", cite);
  dq_tbuf_put_utf8(d->b, label, strlen(label));
  if (d->in_note || d->n_pending == MAX_PENDING)
    return;
  d->pending[d->n_pending].n = n;
  d->pending[d->n_pending].q_off = d->pending[d->n_pending].q_end = 0;
  snprintf(d->pending[d->n_pending++].cite, sizeof d->pending[0].cite, "%s",
           cite);
}

/* An office:annotation, queued for flush_notes; an office:annotation-end,
 * the end of the text the comment of its name marks. */
static void annotation(odt *d, xmlNodePtr n) {
  if (d->in_note)
    return;
  if (is(n, "annotation-end")) {
    const char *name = attr(n, "name");
    for (size_t i = 0; name && i < d->n_pending; i++) {
      const char *o = attr(d->pending[i].n, "name");
      if (is(d->pending[i].n, "annotation") && o && strcmp(o, name) == 0)
        d->pending[i].q_end = d->b->n;
    }
    return;
  }
  if (d->n_pending == MAX_PENDING)
    return;
  d->pending[d->n_pending].n = n;
  d->pending[d->n_pending].q_off = d->b->n;
  d->pending[d->n_pending].q_end = 0;
  d->pending[d->n_pending].p_start = d->p_start;
  d->pending[d->n_pending++].p_cell = d->p_cell;
}

/* The text below n, inline: spans, links, spaces, tabs, notes, text boxes'
 * paragraphs (words apart). */
static dq_status inline_text(odt *d, xmlNodePtr n, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  for (xmlNodePtr k = n->children; k; k = k->next) {
    if (k->type == XML_TEXT_NODE || k->type == XML_CDATA_SECTION_NODE) {
      if (k->content)
        dq_tbuf_put_utf8(d->b, (const char *)k->content,
                         strlen((const char *)k->content));
      continue;
    }
    if (k->type != XML_ELEMENT_NODE)
      continue;
    if (is(k, "s")) {
      int c = attr_int(k, "c", 1);
      for (int i = 0; i < c && i < MAX_SPACES; i++)
        dq_tbuf_putc(d->b, ' ');
    } else if (is(k, "tab")) {
      dq_tbuf_putc(d->b, '\t');
    } else if (is(k, "line-break")) {
      dq_tbuf_putc(d->b, '\n');
    } else if (is(k, "note")) {
      note(d, k);
    } else if (is(k, "annotation") || is(k, "annotation-end")) {
      annotation(d, k);
    } else if (d->in_hf && (is(k, "page-number") || is(k, "page-count") ||
                            is(k, "page-continuation"))) {
      continue; /* the page Writer last laid out, not the document's */
    } else if (is(k, "tracked-changes") || is(k, "image") ||
               (is(n, "frame") && (is(k, "title") || is(k, "desc")))) {
      continue;
    } else {
      /* a text box's paragraph, or a list inside one: words apart */
      int para = is(k, "p") || is(k, "h");
      if (para)
        dq_tbuf_space(d->b);
      dq_status st = inline_text(d, k, depth + 1);
      if (st != DQ_OK)
        return st;
      if (para)
        dq_tbuf_space(d->b);
    }
  }
  return DQ_OK;
}

/* One paragraph or heading: its number (a heading's outline number, a list
 * item's first paragraph's label), its text, a line of its own unless in a
 * cell. */
static dq_status paragraph(odt *d, xmlNodePtr p, int in_cell,
                           const char *label) {
  if (!in_cell || !d->page) { /* a slide's table row is one line */
    d->para_no++;
    dq_tbuf_pos(d->b, d->para_no, d->page);
  }
  int level = 0;
  char num[128] = "";
  if (is(p, "h")) {
    level = attr_int(p, "outline-level", 1);
    level = level < 1 ? 1 : level > ODT_LEVELS ? ODT_LEVELS : level;
    int k = level - 1;
    const char *hdr = attr(p, "is-list-header"); /* unnumbered, uncounted */
    if (!hdr || strcmp(hdr, "true") != 0) {
      d->outline_count[k] =
          d->outline_count[k] ? d->outline_count[k] + 1 : d->outline[k].start;
      for (int i = 0; i < k; i++) /* a level skipped counts from its start */
        if (!d->outline_count[i])
          d->outline_count[i] = d->outline[i].start;
      for (int i = k + 1; i < ODT_LEVELS; i++)
        d->outline_count[i] = 0;
      number_label(d->outline, d->outline_count, k, num, sizeof num);
    }
  } else if (label) {
    snprintf(num, sizeof num, "%s", label);
  }
  size_t start = d->b->n;
  if (d->prefix && !in_cell)
    dq_tbuf_put(d->b, d->prefix, strlen(d->prefix));
  if (num[0]) {
    dq_tbuf_put_utf8(d->b, num, strlen(num));
    dq_tbuf_putc(d->b, ' ');
  }
  size_t text_start = d->b->n;
  d->p_start = text_start;
  d->p_cell = in_cell;
  dq_status st = inline_text(d, p, 0);
  if (st != DQ_OK)
    return st;
  dq_tbuf_trim_spaces(d->b, text_start);
  if (d->b->n == text_start) { /* empty paragraph: no line, no label */
    dq_tbuf_truncate(d->b, start);
    return DQ_OK;
  }
  if (d->in_hf && !in_cell) { /* a header's line: once, if worth it */
    if (!dq_hf_line(d->b, &d->hf, start, text_start)) {
      d->n_pending = 0;
      return DQ_OK;
    }
    level = 0; /* a heading in a header is no section of the text */
  }
  if (level && !in_cell && !d->b->oom)
    dq_tbuf_heading(d->b, start, level, d->b->text + start, d->b->n - start);
  if (!in_cell) {
    if (!d->in_hf)
      d->prefix = NULL;
    dq_tbuf_putc(d->b, '\n');
    return flush_notes(d);
  }
  return DQ_OK;
}

static dq_status blocks(odt *d, xmlNodePtr parent, int in_cell, unsigned depth);

/* A text:list: its items' first paragraphs numbered by the list's style. */
static dq_status list(odt *d, xmlNodePtr l, int in_cell, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  const list_style *saved = d->list;
  int top = d->list_depth == 0;
  if (top) {
    const list_style *s = list_style_of(d, attr(l, "style-name"));
    const char *cont = attr(l, "continue-numbering");
    if (s && s == d->last_list &&
        ((cont && !strcmp(cont, "true")) || attr(l, "continue-list")))
      memcpy(d->list_count, d->last_count, sizeof d->list_count);
    else
      memset(d->list_count, 0, sizeof d->list_count);
    d->list = s;
  } else if (!d->list) {
    d->list = list_style_of(d, attr(l, "style-name"));
  }
  int k = d->list_depth < ODT_LEVELS ? d->list_depth : ODT_LEVELS - 1;
  d->list_depth++;
  dq_status st = DQ_OK;
  for (xmlNodePtr it = l->children; it && st == DQ_OK; it = it->next) {
    int item = is(it, "list-item");
    if (!item && !is(it, "list-header"))
      continue;
    char label[128] = "";
    /* a slide's bullets are not written (read_pptx.c's), its numbers are */
    if (item && d->list && !(d->page && d->list->lv[k].fmt == DQ_FMT_BULLET)) {
      const lvl_fmt *f = &d->list->lv[k];
      int start = attr_int(it, "start-value", 0);
      d->list_count[k] = start > 0          ? start
                         : d->list_count[k] ? d->list_count[k] + 1
                                            : f->start;
      for (int i = k + 1; i < ODT_LEVELS; i++)
        d->list_count[i] = 0;
      for (int i = 0; i < k; i++)
        if (!d->list_count[i])
          d->list_count[i] = d->list->lv[i].start;
      number_label(d->list->lv, d->list_count, k, label, sizeof label);
    }
    int first = 1;
    for (xmlNodePtr p = it->children; p && st == DQ_OK; p = p->next) {
      if (is(p, "p") || is(p, "h")) {
        if (in_cell) /* a cell's items stay on its line, words apart */
          dq_tbuf_space(d->b);
        st = paragraph(d, p, in_cell, first ? label : NULL);
        first = 0;
      } else if (is(p, "list")) {
        st = list(d, p, in_cell, depth + 1);
        first = 0;
      }
    }
  }
  d->list_depth--;
  if (top) {
    d->last_list = d->list;
    memcpy(d->last_count, d->list_count, sizeof d->last_count);
  }
  d->list = top ? NULL : saved;
  return st;
}

/* table:table-row elements below n (also inside the row groups). */
static dq_status rows(odt *d, xmlNodePtr n, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  for (xmlNodePtr r = n->children; r; r = r->next) {
    if (is(r, "table-header-rows") || is(r, "table-rows") ||
        is(r, "table-row-group")) {
      dq_status st = rows(d, r, depth + 1);
      if (st != DQ_OK)
        return st;
      continue;
    }
    if (!is(r, "table-row"))
      continue;
    dq_tbuf_newline(d->b);
    /* a text's row is at its first cell paragraph's number, a slide's
     * is a line of the slide */
    dq_tbuf_pos(d->b, d->page ? ++d->para_no : d->para_no + 1, d->page);
    size_t row = d->b->n, text = row;
    if (d->in_hf && depth == 0) {
      dq_tbuf_put(d->b, d->prefix, strlen(d->prefix));
      text = d->b->n;
    }
    int n_cells = 0;
    for (xmlNodePtr tc = r->children; tc; tc = tc->next) {
      if (!is(tc, "table-cell"))
        continue;
      if (n_cells++)
        dq_tbuf_put(d->b, " | ", 3);
      dq_status st = blocks(d, tc, 1, depth + 1);
      if (st != DQ_OK)
        return st;
    }
    if (d->in_hf && depth == 0 && !dq_hf_line(d->b, &d->hf, row, text)) {
      d->n_pending = 0; /* a header's row not worth keeping */
      continue;
    }
    dq_tbuf_newline(d->b);
    dq_status st = depth == 0 ? flush_notes(d) : DQ_OK;
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* Paragraphs, headings, lists, tables and sections below `parent` in
 * order; in a cell, paragraphs are joined by spaces so a row stays on one
 * line. */
static dq_status blocks(odt *d, xmlNodePtr parent, int in_cell,
                        unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  for (xmlNodePtr k = parent->children; k; k = k->next) {
    dq_status st = DQ_OK;
    size_t before = d->b->n;
    if (in_cell && before && dq_tbuf_last(d->b) != ' ' &&
        dq_tbuf_last(d->b) != '\n' && (is(k, "p") || is(k, "h")))
      dq_tbuf_putc(d->b, ' ');
    size_t mid = d->b->n;
    if (is(k, "p") || is(k, "h"))
      st = paragraph(d, k, in_cell, NULL);
    else if (is(k, "list"))
      st = list(d, k, in_cell, depth + 1);
    else if (is(k, "table"))
      st = rows(d, k, in_cell ? depth + 1 : 0);
    else if (is(k, "section") || is(k, "index-body") ||
             is(k, "table-of-content") || is(k, "index-title") ||
             is(k, "alphabetical-index") || is(k, "illustration-index") ||
             is(k, "table-index") || is(k, "user-index") ||
             is(k, "bibliography"))
      st = blocks(d, k, in_cell, depth + 1);
    if (in_cell && d->b->n == mid) /* empty: undo the separator */
      dq_tbuf_truncate(d->b, before);
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* The page headers and footers of styles.xml's master pages
 * (office:master-styles/style:master-page: style:header, style:header-first,
 * style:header-left, and the footers alike), headers first, after the body
 * under DQ_HF_HEADING (ingest_int.h): "[header] CONFIDENTIAL". */
static dq_status headers_footers(odt *d, xmlNodePtr sroot) {
  xmlNodePtr masters = child(sroot, "master-styles");
  if (!masters)
    return DQ_OK;
  static const char *const parts[2][3] = {
      {"header", "header-first", "header-left"},
      {"footer", "footer-first", "footer-left"}};
  dq_hf_begin(d->b, &d->hf, ++d->para_no, 0);
  d->in_hf = 1;
  dq_status st = DQ_OK;
  for (int footer = 0; footer < 2 && st == DQ_OK; footer++) {
    d->prefix = footer ? "[footer] " : "[header] ";
    for (xmlNodePtr m = masters->children; m && st == DQ_OK; m = m->next) {
      if (!is(m, "master-page"))
        continue;
      for (xmlNodePtr k = m->children; k && st == DQ_OK; k = k->next)
        for (int i = 0; i < 3; i++)
          if (is(k, parts[footer][i])) {
            memset(d->list_count, 0, sizeof d->list_count);
            st = blocks(d, k, 0, 1);
            if (st == DQ_OK)
              st = flush_notes(d);
          }
    }
  }
  d->in_hf = 0;
  d->prefix = NULL;
  dq_hf_end(d->b, &d->hf);
  return st;
}

/* Opens an OpenDocument package into d: its zip (`what` names the kind in
 * messages, "an ODT"), styles.xml (optional) and content.xml parsed, the
 * list styles of both loaded. The caller frees the docs, d's zip and
 * styles, also on failure. */
static dq_status odf_open(odt *d, const dq_reader_ctx *c, const char *data,
                          size_t n, dq_tbuf *b, const char *what,
                          xmlDocPtr *content, xmlDocPtr *styles) {
  memset(d, 0, sizeof *d);
  d->c = c;
  d->b = b;
  for (int i = 0; i < ODT_LEVELS; i++) {
    d->outline[i].fmt = DQ_FMT_NONE;
    d->outline[i].start = 1;
    d->outline[i].display = 1;
  }
  dq_status st = dq_zip_open(&d->z, c, data, n, what);
  if (st != DQ_OK ||
      (st = dq_zip_xml(&d->z, "styles.xml", 0, styles)) != DQ_OK ||
      (st = dq_zip_xml(&d->z, "content.xml", 1, content)) != DQ_OK)
    return st;
  xmlNodePtr sroot = *styles ? xmlDocGetRootElement(*styles) : NULL;
  xmlNodePtr croot = xmlDocGetRootElement(*content);
  if ((st = load_styles(d, child(sroot, "styles"))) != DQ_OK ||
      (st = load_styles(d, child(sroot, "automatic-styles"))) != DQ_OK)
    return st;
  return load_styles(d, child(croot, "automatic-styles"));
}

dq_status dq_read_odt(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b) {
  odt d;
  xmlDocPtr content = NULL, styles = NULL;
  dq_status st = odf_open(&d, c, data, n, b, "an ODT", &content, &styles);
  if (st != DQ_OK)
    goto fail;
  xmlNodePtr sroot = styles ? xmlDocGetRootElement(styles) : NULL;
  xmlNodePtr croot = xmlDocGetRootElement(content);
  xmlNodePtr text = child(child(croot, "body"), "text");
  if (!text) {
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: content.xml has no office:body/office:text (not "
                      "a text document: a spreadsheet or a presentation?)",
                      c->name);
    goto fail;
  }
  st = blocks(&d, text, 0, 0);
  if (st == DQ_OK)
    st = flush_notes(&d);
  if (st == DQ_OK && sroot)
    st = headers_footers(&d, sroot);
fail:
  xmlFreeDoc(content);
  xmlFreeDoc(styles);
  dq_zip_close(&d.z);
  free(d.styles);
  return st;
}

/* ---- presentations (.odp) ----
 *
 * content.xml's office:body/office:presentation holds a draw:page per
 * slide in order (draw:style-name: an automatic style of family
 * drawing-page whose style:drawing-page-properties have
 * presentation:visibility="hidden" hides it); on it draw:frame shapes
 * (presentation:class: title, subtitle, outline, notes, date-time, footer,
 * header, page-number, ...; none for a plain text box) holding a
 * draw:text-box of text:p / text:list, or a table:table; draw:g groups;
 * draw:custom-shape, draw:rect, ... holding text:p of their own;
 * presentation:notes, the notes page, whose frame of class "notes" holds
 * the speaker notes (LibreOffice writes a deck's notes that were no
 * placeholder as a plain text box). List styles as in a text.
 *
 * Output as read_pptx.c's: a slide opens with its heading line, "Slide 3:
 * TITLE" (its title frame's paragraphs; "Slide 3" without one; " (hidden)"
 * after a hidden slide's number), a level-1 heading; then a line per
 * paragraph of its other shapes in order (bullets not written, a numbered
 * list's numbers written), a table's row a line with its cells joined by
 * " | ", then the notes, their first line starting "[notes] ". Marks carry
 * page = the slide's number and line = the line within the slide (its
 * heading is line 1; a line break inside a paragraph stays in its line).
 * Left out: date, footer, header and slide-number frames, pictures,
 * charts and other embedded objects, the masters' own text.
 */

/* Whether content.xml's automatic drawing-page style `name` hides its
 * slide (style:drawing-page-properties presentation:visibility="hidden"). */
static int page_hidden(xmlNodePtr auto_styles, const char *name) {
  if (!auto_styles || !name)
    return 0;
  for (xmlNodePtr k = auto_styles->children; k; k = k->next) {
    const char *n = is(k, "style") ? attr(k, "name") : NULL;
    if (!n || strcmp(n, name) != 0)
      continue;
    const char *v = attr(child(k, "drawing-page-properties"), "visibility");
    return v && strcmp(v, "hidden") == 0;
  }
  return 0;
}

/* A frame's presentation:class that repeats a master's boilerplate on
 * every slide: a date, a footer, a header, the slide's number. */
static int boilerplate(const char *cls) {
  return cls && (!strcmp(cls, "date-time") || !strcmp(cls, "footer") ||
                 !strcmp(cls, "header") || !strcmp(cls, "page-number") ||
                 !strcmp(cls, "page"));
}

/* The slide's title frame (presentation:class="title"), in groups too. */
static xmlNodePtr odp_title(xmlNodePtr parent, unsigned depth) {
  for (xmlNodePtr k = parent->children; k && depth <= DQ_XML_MAX_DEPTH;
       k = k->next) {
    const char *cls = is(k, "frame") ? attr(k, "class") : NULL;
    if (cls && !strcmp(cls, "title"))
      return k;
    if (is(k, "g")) {
      xmlNodePtr t = odp_title(k, depth + 1);
      if (t)
        return t;
    }
  }
  return NULL;
}

/* The text of a slide's shapes below `parent` in order, a line per
 * paragraph, a table's row a line: frames' text boxes and tables (not the
 * title, which is the heading, nor the boilerplate), shapes' own
 * paragraphs, groups. notes: a notes page, whose notes frame only is read. */
static dq_status odp_shapes(odt *d, xmlNodePtr parent, int notes,
                            unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  for (xmlNodePtr k = parent->children; k; k = k->next) {
    dq_status st = DQ_OK;
    if (k->type != XML_ELEMENT_NODE || is(k, "notes"))
      continue;
    if (is(k, "g")) {
      st = odp_shapes(d, k, notes, depth + 1);
    } else if (is(k, "frame")) {
      /* notes == 1: the notes frame's text; 2, where the notes page has
       * none, its text boxes' (LibreOffice's notes written from a deck
       * whose notes were no placeholder) */
      const char *cls = attr(k, "class");
      int body = cls && !strcmp(cls, "notes");
      d->n_bodies += body;
      if (notes == 1   ? !body
          : notes == 2 ? cls != NULL
                       : (cls && !strcmp(cls, "title")) || boilerplate(cls))
        continue;
      for (xmlNodePtr f = k->children; f && st == DQ_OK; f = f->next) {
        if (is(f, "text-box"))
          st = blocks(d, f, 0, depth + 1);
        else if (is(f, "table") && !notes)
          st = rows(d, f, 0);
      }
    } else if (!notes) { /* a custom shape, rectangle, ...: its paragraphs */
      st = blocks(d, k, 0, depth + 1);
    }
    if (st == DQ_OK)
      st = flush_notes(d);
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* A title frame's paragraphs below n (lists' too), words apart. */
static dq_status title_text(odt *d, xmlNodePtr n, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return too_deep(d);
  dq_status st = DQ_OK;
  for (xmlNodePtr k = n->children; k && st == DQ_OK; k = k->next) {
    if (is(k, "p") || is(k, "h")) {
      dq_tbuf_space(d->b);
      st = inline_text(d, k, depth + 1);
    } else if (is(k, "list") || is(k, "list-item") || is(k, "list-header")) {
      st = title_text(d, k, depth + 1);
    }
  }
  return st;
}

/* Slide d->page's heading line, "Slide N: TITLE" ("Slide N" without a
 * title, "Slide N (hidden): ..."), at line 1: the title's paragraphs
 * joined by blanks (dq_slide_heading_end cuts the heading's). */
static dq_status odp_heading(odt *d, xmlNodePtr title, int hidden) {
  dq_tbuf_newline(d->b);
  d->para_no = 1;
  dq_tbuf_pos(d->b, 1, d->page);
  size_t start = d->b->n;
  char head[48];
  int w = snprintf(head, sizeof head, "Slide %u%s: ", d->page,
                   hidden ? " (hidden)" : "");
  dq_tbuf_put(d->b, head, (size_t)w);
  size_t text = d->b->n;
  d->in_note = 1; /* a note or comment in a title is not queued */
  dq_status st = DQ_OK;
  for (xmlNodePtr f = title ? title->children : NULL; f && st == DQ_OK;
       f = f->next)
    if (is(f, "text-box"))
      st = title_text(d, f, 1);
  d->in_note = 0;
  if (st != DQ_OK)
    return st;
  for (size_t i = text; i < d->b->n && !d->b->oom; i++)
    if (d->b->text[i] == '\n' || d->b->text[i] == '\t')
      d->b->text[i] = ' ';
  dq_tbuf_trim_spaces(d->b, text);
  dq_slide_heading_end(d->b, start, text);
  return DQ_OK;
}

dq_status dq_read_odp(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b, uint32_t *n_slides) {
  odt d;
  *n_slides = 0;
  xmlDocPtr content = NULL, styles = NULL;
  dq_status st = odf_open(&d, c, data, n, b, "an ODP", &content, &styles);
  if (st != DQ_OK)
    goto fail;
  xmlNodePtr croot = xmlDocGetRootElement(content);
  xmlNodePtr autos = child(croot, "automatic-styles");
  xmlNodePtr pres = child(child(croot, "body"), "presentation");
  if (!pres) {
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: content.xml has no office:body/office:presentation "
                      "(not a presentation: a text or a spreadsheet?)",
                      c->name);
    goto fail;
  }
  for (xmlNodePtr pg = pres->children; pg && st == DQ_OK; pg = pg->next) {
    if (!is(pg, "page"))
      continue;
    if (d.page == ODP_MAX_SLIDES) {
      st = dq_error_set(c->err, DQ_ERR_LIMIT, "%s: more than %u slides",
                        c->name, ODP_MAX_SLIDES);
      break;
    }
    d.page++;
    memset(d.list_count, 0, sizeof d.list_count);
    d.last_list = NULL;
    st = odp_heading(&d, odp_title(pg, 0),
                     page_hidden(autos, attr(pg, "style-name")));
    if (st == DQ_OK)
      st = odp_shapes(&d, pg, 0, 0);
    xmlNodePtr notes = child(pg, "notes");
    if (st == DQ_OK && notes) {
      d.prefix = "[notes] ";
      d.n_bodies = 0;
      st = odp_shapes(&d, notes, 1, 0);
      if (st == DQ_OK && !d.n_bodies)
        st = odp_shapes(&d, notes, 2, 0);
      d.prefix = NULL;
    }
  }
  *n_slides = d.page;
fail:
  xmlFreeDoc(content);
  xmlFreeDoc(styles);
  dq_zip_close(&d.z);
  free(d.styles);
  return st;
}
