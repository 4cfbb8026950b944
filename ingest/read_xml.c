/*
 * read_xml.c - HTML and XML readers on libxml2's tree parsers, and the safe
 * XML parse that read_docx.c shares.
 *
 * Safety: the parsers never touch the network (XML_PARSE_NONET,
 * HTML_PARSE_NONET), never load a DTD and never substitute entities (no
 * XML_PARSE_NOENT, no XML_PARSE_DTDLOAD), keep libxml2's default size limits
 * (no XML_PARSE_HUGE), and report through the parser context instead of
 * printing (NOERROR, NOWARNING). Entity references other than the predefined
 * ones are dropped from the text. Element nesting is capped at
 * DQ_XML_MAX_DEPTH.
 *
 * Line numbers: libxml2 stamps a text node with the line where its first
 * characters() chunk ended, not where the text began. We wrap the SAX
 * characters handler to store the start line (line at the end of the chunk
 * minus the newlines in it) in the new node's unused psvi field; newlines
 * inside the text then advance the line as words are emitted.
 *
 * Layout of the output: text runs have their whitespace collapsed (except in
 * <pre>); HTML block elements (p, div, li, tr, h1-h6, ...) and <br> start new
 * lines, table cells in a row are separated by " | ", script/style/template
 * and permalink marks (<a href="#x">¶</a>) are dropped, h1..h6 become
 * headings. In XML an element whose children hold
 * no text of their own (element-only content) puts each child on its own
 * line; elements inside mixed content flow inline.
 */
#include "ingest_int.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void on_chars(void *ctx, const xmlChar *ch, int len) {
  xmlParserCtxtPtr p = ctx;
  xmlNodePtr parent = p->node, before = parent ? parent->last : NULL;
  xmlSAX2Characters(ctx, ch, len);
  if (!parent || parent->last == before || !parent->last ||
      parent->last->type != XML_TEXT_NODE || !p->input)
    return;
  long line = p->input->line;
  for (int i = 0; i < len; i++)
    line -= ch[i] == '\n';
  parent->last->psvi = (void *)(uintptr_t)(line > 0 ? line : 1);
}

static uint32_t start_line(xmlNodePtr n) {
  if (n->psvi)
    return (uint32_t)(uintptr_t)n->psvi;
  long l = xmlGetLineNo(n);
  for (const xmlChar *s = n->content; s && *s; s++)
    l -= *s == '\n';
  return l > 0 ? (uint32_t)l : 1;
}

/* The first error of a parse, kept because the context's "last error" is
 * usually a consequence ("Premature end of data") rather than the cause. */
typedef struct first_error {
  int set;
  int line;
  char msg[256];
} first_error;

/* libxml2's message on one line: its control characters (the newlines
 * of a quoted comment or text) as single spaces, none at the ends; a
 * warning stays one line of ingest's output. */
static void one_line(char *dst, size_t cap, const char *src) {
  size_t k = 0;
  for (; src && *src && k + 1 < cap; src++) {
    unsigned char ch = (unsigned char)*src;
    int blank = ch < 0x20 || ch == 0x7f || ch == ' ';
    if (blank && (k == 0 || dst[k - 1] == ' '))
      continue;
    dst[k++] = blank ? ' ' : (char)ch;
  }
  while (k && dst[k - 1] == ' ')
    k--;
  dst[k] = '\0';
}

static void on_error(void *data, xmlErrorPtr e) {
  xmlParserCtxtPtr p = data;
  first_error *f = p ? p->_private : NULL;
  if (!f || f->set || !e || e->level < XML_ERR_ERROR)
    return;
  f->set = 1;
  f->line = e->line;
  one_line(f->msg, sizeof f->msg, e->message);
}

static void catch_errors(xmlParserCtxtPtr p, first_error *f) {
  memset(f, 0, sizeof *f);
  p->_private = f;
  p->sax->serror = on_error;
}

static dq_status parse_error(const dq_reader_ctx *c, xmlParserCtxtPtr p,
                             const char *what) {
  const first_error *f = p ? p->_private : NULL;
  if (f && f->set)
    return dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: malformed %s at line %d: %s", c->name, what,
                        f->line, f->msg);
  const xmlError *e = p ? xmlCtxtGetLastError(p) : NULL;
  if (!e || !e->message)
    return dq_error_set(c->err, DQ_ERR_FORMAT, "%s: cannot parse %s", c->name,
                        what);
  char msg[sizeof f->msg];
  one_line(msg, sizeof msg, e->message);
  return dq_error_set(c->err, DQ_ERR_FORMAT, "%s: malformed %s at line %d: %s",
                      c->name, what, e->line, msg);
}

dq_status dq_xml_parse(const dq_reader_ctx *c, const char *data, size_t n,
                       const char *what, struct _xmlDoc **out) {
  *out = NULL;
  if (n > INT_MAX)
    return dq_error_set(c->err, DQ_ERR_LIMIT, "%s: %s is too large", c->name,
                        what);
  xmlParserCtxtPtr p = xmlNewParserCtxt();
  if (!p)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  first_error fe;
  catch_errors(p, &fe);
  p->sax->characters = on_chars;
  p->sax->cdataBlock = NULL;
  xmlDocPtr doc = xmlCtxtReadMemory(p, data, (int)n, NULL, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR |
                                        XML_PARSE_NOWARNING |
                                        XML_PARSE_NOCDATA);
  dq_status st = DQ_OK;
  if (!doc || !p->wellFormed) {
    st = parse_error(c, p, what);
    xmlFreeDoc(doc);
    doc = NULL;
  }
  xmlFreeParserCtxt(p);
  *out = doc;
  return st;
}

/* ---- tree walk ---- */

typedef struct xwalk {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  int html;
  int in_pre;
  int pending_space;
  int n_cells;        /* cells seen in the current table row */
  int in_cell;        /* inside a td or th: blocks keep the row's line */
  int in_notes;       /* inside a list of notes (notes_list) */
  int note_first;     /* a note's body begun, nothing of it put yet */
  size_t label_end;   /* where a note's "[1] " or an item's "(a)" ends:
                         no line break there */
  dq_html_part *text; /* non-NULL: marks carry lines of the text */
  size_t n_pending;   /* ids found whose text is not put yet */
} xwalk;

#define ID_PENDING (SIZE_MAX - 1) /* an id found, its text not put */

/* The line that text put now carries: its source line, or with
 * w->text, the line of the extracted text (its newlines counted once). */
static uint32_t put_line(xwalk *w, uint32_t src) {
  dq_html_part *t = w->text;
  if (!t)
    return src;
  for (size_t i = 0; w->n_pending && i < t->n_ids; i++)
    if (t->at[i] == ID_PENDING) {
      t->at[i] = w->b->n;
      w->n_pending--;
    }
  return dq_text_line(t, w->b);
}

uint32_t dq_text_line(dq_html_part *t, const dq_tbuf *b) {
  for (; t->counted < b->n; t->counted++)
    t->lines += b->text[t->counted] == '\n';
  return t->lines + 1;
}

/* With w->text, an element with an id sought: its text starts at the
 * next word put (put_line), inside it or, when it holds none, after it. */
static int cmp_id(const void *key, const void *elem) {
  return strcmp(key, *(const char *const *)elem);
}

static void find_id(xwalk *w, xmlNodePtr n) {
  dq_html_part *t = w->text;
  xmlChar *id = xmlGetProp(n, (const xmlChar *)"id");
  const char *const *hit =
      id ? bsearch(id, t->ids, t->n_ids, sizeof *t->ids, cmp_id) : NULL;
  if (hit && t->at[hit - t->ids] == SIZE_MAX) {
    t->at[hit - t->ids] = ID_PENDING;
    w->n_pending++;
  }
  xmlFree(id);
}

/* With w->text, the text put next without a word of its own (a cell's
 * separator, a <br>'s line end) carries its line too. */
static void sync_line(xwalk *w) {
  if (w->text)
    dq_tbuf_pos(w->b, put_line(w, 0), 0);
}

static void block(xwalk *w) {
  if (w->in_cell || (w->label_end && w->label_end == w->b->n)) {
    /* a cell's paragraphs and lists: one row, one line; a note's or a
     * list item's first paragraph: on its label's line */
    w->pending_space = 1;
    return;
  }
  dq_tbuf_newline(w->b);
  w->pending_space = 0;
}

static int is_ws(xmlChar ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

/* A word from source line `line`, after a space when one is pending. */
static void put_word(xwalk *w, uint32_t line, const char *s, size_t n) {
  char last = dq_tbuf_last(w->b);
  if (w->pending_space && last != '\n' && last != ' ')
    dq_tbuf_putc(w->b, ' ');
  w->pending_space = 0;
  w->note_first = 0;
  dq_tbuf_pos(w->b, put_line(w, line), 0);
  dq_tbuf_put_utf8(w->b, s, n);
}

static void emit_text(xwalk *w, xmlNodePtr n) {
  const char *s = (const char *)n->content;
  if (!s)
    return;
  uint32_t line = start_line(n);
  if (w->in_pre) {
    w->note_first = 0;
    dq_tbuf_pos(w->b, put_line(w, line), 0);
    dq_tbuf_put_lines(w->b, s, strlen(s));
    return;
  }
  size_t i = 0, len = strlen(s);
  while (i < len) {
    if (is_ws((xmlChar)s[i])) {
      if (s[i] == '\n')
        line++;
      w->pending_space = 1;
      i++;
      continue;
    }
    size_t j = i;
    while (j < len && !is_ws((xmlChar)s[j]))
      j++;
    put_word(w, line, s + i, j - i);
    i = j;
  }
}

static const char *const HTML_BLOCKS[] = {
    "address", "article", "aside", "blockquote", "body", "caption", "center",
    "dd", "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "header", "hr", "html", "legend", "li",
    "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table",
    "tbody", "tfoot", "thead", "title", "tr", "ul", NULL};

static int in_list(const char *name, const char *const *list) {
  for (; *list; list++)
    if (strcasecmp(name, *list) == 0)
      return 1;
  return 0;
}

static int heading_level(const char *name) {
  if ((name[0] == 'h' || name[0] == 'H') && name[1] >= '1' && name[1] <= '6' &&
      name[2] == '\0')
    return name[1] - '0';
  return 0;
}

static int has_own_text(xmlNodePtr n) {
  for (xmlNodePtr k = n->children; k; k = k->next) {
    if (k->type != XML_TEXT_NODE && k->type != XML_CDATA_SECTION_NODE)
      continue;
    for (const xmlChar *s = k->content; s && *s; s++)
      if (!is_ws(*s))
        return 1;
  }
  return 0;
}

/* Whether HTML element n is a permalink: an <a href="#..."> whose text
 * is a mark without letters or digits ("#", "¶", "§", an icon), which
 * Sphinx, Node's and MkDocs' generators put in every heading. Left in,
 * every section path would read "Copyright¶". */
static int permalink(xmlNodePtr n) {
  if (strcasecmp((const char *)n->name, "a") != 0)
    return 0;
  xmlChar *href = xmlGetProp(n, (const xmlChar *)"href");
  int local = href && href[0] == '#';
  xmlFree(href);
  if (!local)
    return 0;
  xmlChar *text = xmlNodeGetContent(n);
  int mark = text != NULL;
  size_t bytes = 0;
  for (const xmlChar *s = text; mark && *s; s++) {
    if (is_ws(*s))
      continue;
    mark = ++bytes <= 8 && !((*s >= '0' && *s <= '9') ||
                             ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z'));
  }
  xmlFree(text);
  return mark;
}

/* ---- notes: "monthly[1]", and the note "[1] Payable in advance." ---- */

/* Whether attribute `name` of n is a space-separated list holding one of
 * words[] (NULL-terminated). */
static int attr_has(xmlNodePtr n, const char *name, const char *const *words) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
  int hit = 0;
  for (const char *p = (const char *)v; p && *p && !hit;) {
    while (is_ws((xmlChar)*p))
      p++;
    size_t k = 0;
    while (p[k] && !is_ws((xmlChar)p[k]))
      k++;
    for (const char *const *w = words; *w && !hit && k; w++)
      hit = strlen(*w) == k && strncasecmp(p, *w, k) == 0;
    p += k;
  }
  xmlFree(v);
  return hit;
}

/* A note's body: EPUB's epub:type or ARIA's role. */
static int note_body(xmlNodePtr n) {
  static const char *const TYPES[] = {"footnote", "endnote", "rearnote", "note",
                                      NULL};
  static const char *const ROLES[] = {"doc-footnote", "doc-endnote", NULL};
  return attr_has(n, "epub:type", TYPES) || attr_has(n, "role", ROLES);
}

/* A list of notes, whose numbered items are notes (pandoc's "footnotes"
 * section and ol). */
static int notes_list(xmlNodePtr n) {
  static const char *const TYPES[] = {"footnotes", "endnotes", "rearnotes",
                                      NULL};
  static const char *const ROLES[] = {"doc-endnotes", "doc-footnotes", NULL};
  static const char *const CLASSES[] = {"footnotes", NULL};
  return attr_has(n, "epub:type", TYPES) || attr_has(n, "role", ROLES) ||
         attr_has(n, "class", CLASSES);
}

/* Whether <a> n refers to a note: a link within the document whose text
 * is a short label (1-8 bytes, no blank), marked as a note reference
 * (epub:type "noteref", role "doc-noteref", class "footnote-ref" as
 * pandoc writes, "footnote-reference" as docutils does) or set as a
 * superscript (inside a sup or holding one). The label goes into
 * out[16]. */
static int note_ref(xmlNodePtr n, char out[16]) {
  static const char *const TYPES[] = {"noteref", NULL};
  static const char *const ROLES[] = {"doc-noteref", NULL};
  static const char *const CLASSES[] = {"footnote-ref", "footnote-reference",
                                        "noteref", NULL};
  xmlChar *href = xmlGetProp(n, (const xmlChar *)"href");
  int local = href && href[0] == '#';
  xmlFree(href);
  if (!local)
    return 0;
  int sup = n->parent && n->parent->type == XML_ELEMENT_NODE &&
            strcasecmp((const char *)n->parent->name, "sup") == 0;
  for (xmlNodePtr k = n->children; k && !sup; k = k->next)
    sup = k->type == XML_ELEMENT_NODE &&
          strcasecmp((const char *)k->name, "sup") == 0;
  if (!sup && !attr_has(n, "epub:type", TYPES) && !attr_has(n, "role", ROLES) &&
      !attr_has(n, "class", CLASSES))
    return 0;
  xmlChar *text = xmlNodeGetContent(n);
  size_t k = 0;
  int ok = text != NULL;
  for (const xmlChar *s = text; ok && *s; s++) {
    if (is_ws(*s)) {
      ok = k == 0 || !s[strspn((const char *)s, " \t\r\n\f")];
      continue; /* blanks around the label, none inside */
    }
    ok = k < 8;
    if (ok)
      out[k++] = (char)*s;
  }
  xmlFree(text);
  out[k] = '\0';
  return ok && k > 0;
}

/* A note's label as the text reads it: "[1]", or "[1] " at the start of
 * the note's own text. */
static void put_note_label(xwalk *w, xmlNodePtr n, const char *label) {
  char buf[24];
  int first = w->note_first;
  snprintf(buf, sizeof buf, label[0] == '[' ? "%s%s" : "[%s]%s", label,
           first ? " " : "");
  long line = xmlGetLineNo(n);
  put_word(w, line > 0 ? (uint32_t)line : 1, buf, strlen(buf));
  if (first)
    w->label_end = w->b->n;
}

/* The number of list item n in its ol: the ol's start attribute, or the
 * value attribute of the item or of one before it, counted on. */
static int item_number(xmlNodePtr n) {
  long k = 0;
  xmlNodePtr p = n;
  for (; p; p = p->prev) {
    if (p->type != XML_ELEMENT_NODE ||
        strcasecmp((const char *)p->name, "li") != 0)
      continue;
    xmlChar *v = xmlGetProp(p, (const xmlChar *)"value");
    if (v) {
      k += strtol((const char *)v, NULL, 10);
      xmlFree(v);
      break;
    }
    if (++k > 99999)
      return 0;
  }
  if (!p) { /* no value: from the ol's start */
    xmlChar *start = xmlGetProp(n->parent, (const xmlChar *)"start");
    k += (start ? strtol((const char *)start, NULL, 10) : 1) - 1;
    xmlFree(start);
  }
  return k < -99999 || k > 99999 ? 0 : (int)k;
}

/* An ol's numbering: its type attribute ("1", "a", "A", "i", "I"), else
 * a list-style-type in its style ("lower-alpha", "upper-roman", ...). */
static dq_num_fmt list_format(xmlNodePtr ol) {
  xmlChar *t = xmlGetProp(ol, (const xmlChar *)"type");
  dq_num_fmt f = DQ_FMT_DECIMAL;
  if (t && t[0] && !t[1])
    f = t[0] == 'a'   ? DQ_FMT_LLETTER
        : t[0] == 'A' ? DQ_FMT_ULETTER
        : t[0] == 'i' ? DQ_FMT_LROMAN
        : t[0] == 'I' ? DQ_FMT_UROMAN
                      : DQ_FMT_DECIMAL;
  xmlFree(t);
  xmlChar *style = t ? NULL : xmlGetProp(ol, (const xmlChar *)"style");
  static const struct {
    const char *css;
    dq_num_fmt f;
  } CSS[] = {{"lower-alpha", DQ_FMT_LLETTER}, {"lower-latin", DQ_FMT_LLETTER},
             {"upper-alpha", DQ_FMT_ULETTER}, {"upper-latin", DQ_FMT_ULETTER},
             {"lower-roman", DQ_FMT_LROMAN},  {"upper-roman", DQ_FMT_UROMAN},
             {"none", DQ_FMT_NONE}};
  const char *s = style ? strstr((const char *)style, "list-style") : NULL;
  for (size_t i = 0; s && i < sizeof CSS / sizeof *CSS; i++)
    if (strstr(s, CSS[i].css)) {
      f = CSS[i].f;
      break;
    }
  xmlFree(style);
  return f;
}

/* An ordered list item's label: "(c)" and "(iv)" for letters and roman
 * numerals, the way contracts write them (pandoc writes a Markdown "(c)"
 * as <ol type="a">). Numbers get none: a page's numbered steps ("1.",
 * "2.") would read as a contract's clauses, and sections such as "2"
 * name nothing (over /usr/share/doc, chunks with a bare number as a
 * section went from 34 to 411 with them). */
static void put_item_label(xwalk *w, xmlNodePtr li) {
  dq_num_fmt f = list_format(li->parent);
  char num[32], label[40];
  if (f == DQ_FMT_DECIMAL || f == DQ_FMT_NONE)
    return;
  dq_format_counter(num, sizeof num, f, item_number(li));
  if (!num[0])
    return;
  snprintf(label, sizeof label, "(%s)", num);
  long line = xmlGetLineNo(li);
  put_word(w, line > 0 ? (uint32_t)line : 1, label, strlen(label));
  w->pending_space = 1;
  w->label_end = w->b->n; /* a loose list's <li><p>: on the label's line */
}

/* Whether table cell n lays a page out rather than holding a datum: it
 * holds a table, a heading or a pre, or over LAYOUT_CELL_BYTES of text
 * (an old page's whole body sits in one cell), each element counting as
 * 4 bytes (so that the look stops soon in a cell of empty elements). Its
 * paragraphs then keep their own lines; a data cell's join its row's
 * line. */
#define LAYOUT_CELL_BYTES 400
static int layout_cell_(xmlNodePtr n, size_t *bytes, unsigned depth) {
  for (xmlNodePtr k = n->children; k; k = k->next) {
    if (k->type == XML_TEXT_NODE && k->content)
      *bytes += strlen((const char *)k->content);
    *bytes += 4 * (k->type == XML_ELEMENT_NODE);
    if (*bytes > LAYOUT_CELL_BYTES || depth > DQ_XML_MAX_DEPTH)
      return 1;
    if (k->type != XML_ELEMENT_NODE)
      continue;
    const char *name = (const char *)k->name;
    if (!strcasecmp(name, "table") || !strcasecmp(name, "pre") ||
        heading_level(name) || layout_cell_(k, bytes, depth + 1))
      return 1;
  }
  return 0;
}

static int layout_cell(xmlNodePtr n) {
  size_t bytes = 0;
  return layout_cell_(n, &bytes, 0);
}

static dq_status walk(xwalk *w, xmlNodePtr parent, unsigned depth);

static dq_status walk_element(xwalk *w, xmlNodePtr n, unsigned depth,
                              int own_line) {
  const char *name = (const char *)n->name;
  if (!w->html) {
    if (own_line)
      block(w);
    dq_status st = walk(w, n, depth + 1);
    if (own_line)
      block(w);
    return st;
  }
  static const char *const DROPPED[] = {"script", "style", "template",
                                        "noscript", NULL};
  if (in_list(name, DROPPED) || permalink(n))
    return DQ_OK;
  if (w->text && strcasecmp(name, "head") == 0)
    return DQ_OK; /* an EPUB part's <title>: the book's name again */
  if (w->text && w->text->n_ids)
    find_id(w, n);
  char label[16];
  if (strcasecmp(name, "a") == 0 && note_ref(n, label)) {
    put_note_label(w, n, label);
    return DQ_OK;
  }
  if (strcasecmp(name, "br") == 0) { /* ends the line of the text before */
    sync_line(w);
    dq_tbuf_putc(w->b, '\n');
    w->pending_space = 0;
    return DQ_OK;
  }
  int level = heading_level(name);
  if (level) {
    block(w);
    size_t start = w->b->n;
    dq_status st = walk(w, n, depth + 1);
    if (st == DQ_OK && w->b->n > start && !w->b->oom)
      dq_tbuf_heading(w->b, start, level, w->b->text + start,
                      w->b->n - start);
    block(w);
    return st;
  }
  if (strcasecmp(name, "td") == 0 || strcasecmp(name, "th") == 0) {
    if (w->n_cells++ > 0) {
      sync_line(w);
      dq_tbuf_put(w->b, " | ", 3);
      w->pending_space = 0;
    }
    int data = !layout_cell(n);
    w->in_cell += data;
    dq_status st = walk(w, n, depth + 1);
    w->in_cell -= data;
    return st;
  }
  if (strcasecmp(name, "tr") == 0) {
    int saved = w->n_cells;
    w->n_cells = 0;
    block(w);
    dq_status st = walk(w, n, depth + 1);
    block(w);
    w->n_cells = saved;
    return st;
  }
  int is_pre = strcasecmp(name, "pre") == 0;
  int is_block = in_list(name, HTML_BLOCKS), body = note_body(n);
  int notes = notes_list(n);
  if (is_block || body)
    block(w);
  if (body)
    w->note_first = 1;
  if (strcasecmp(name, "li") == 0 && n->parent &&
      n->parent->type == XML_ELEMENT_NODE &&
      strcasecmp((const char *)n->parent->name, "ol") == 0) {
    if (w->in_notes) {
      snprintf(label, sizeof label, "%d", item_number(n));
      w->note_first = 1;
      put_note_label(w, n, label);
    } else {
      put_item_label(w, n);
    }
  }
  w->in_pre += is_pre;
  w->in_notes += notes;
  dq_status st = walk(w, n, depth + 1);
  w->in_pre -= is_pre;
  w->in_notes -= notes;
  if (is_block || body)
    block(w);
  return st;
}

static dq_status walk(xwalk *w, xmlNodePtr parent, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return dq_error_set(w->c->err, DQ_ERR_LIMIT,
                        "%s: elements nested deeper than %u (line %ld)",
                        w->c->name, DQ_XML_MAX_DEPTH, xmlGetLineNo(parent));
  int element_only = !w->html && !has_own_text(parent);
  for (xmlNodePtr n = parent->children; n; n = n->next) {
    dq_status st = DQ_OK;
    switch (n->type) {
    case XML_TEXT_NODE:
    case XML_CDATA_SECTION_NODE: emit_text(w, n); break;
    case XML_ELEMENT_NODE: st = walk_element(w, n, depth, element_only); break;
    default: break; /* comments, PIs, unexpanded entity references */
    }
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

static dq_status walk_doc(const dq_reader_ctx *c, xmlDocPtr doc, dq_tbuf *b,
                          int html, dq_html_part *text) {
  xwalk w = {c, b, html, 0, 0, 0, 0, 0, 0, 0, text, 0};
  xmlNodePtr root = xmlDocGetRootElement(doc);
  dq_status st = DQ_OK;
  if (root) {
    /* walk() looks at children: give it a parent holding only the root */
    xmlNodePtr top = (xmlNodePtr)doc;
    st = walk(&w, top, 0);
  }
  dq_tbuf_newline(b);
  return st;
}

dq_status dq_read_xml(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b) {
  xmlDocPtr doc;
  dq_status st = dq_xml_parse(c, data, n, "XML", &doc);
  if (st != DQ_OK)
    return st;
  st = walk_doc(c, doc, b, 0, NULL);
  xmlFreeDoc(doc);
  return st;
}

/* "UTF-8" when the bytes are UTF-8 and declare no charset, else NULL (let
 * libxml2 follow the BOM or <meta charset>, falling back to Latin-1). */
static const char *html_encoding(const char *data, size_t n) {
  size_t head = n < 2048 ? n : 2048;
  for (size_t i = 0; i + 7 <= head; i++)
    if (strncasecmp(data + i, "charset", 7) == 0)
      return NULL;
  const unsigned char *s = (const unsigned char *)data;
  size_t n_bad = 0, n_mb = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t k = dq_utf8_decode(s + i, n - i, &cp);
    if (cp == UINT32_MAX)
      n_bad++;
    else if (k > 1)
      n_mb++;
    i += k;
  }
  return n_bad <= n_mb ? "UTF-8" : NULL;
}

dq_status dq_read_html_lines(const dq_reader_ctx *c, const char *data, size_t n,
                             dq_tbuf *b, dq_html_part *text) {
  size_t k = 0;
  while (k < n && is_ws((xmlChar)data[k]))
    k++;
  if (k == n) /* libxml2 returns no document for empty input */
    return DQ_OK;
  if (n > INT_MAX)
    return dq_error_set(c->err, DQ_ERR_LIMIT, "%s: HTML is too large",
                        c->name);
  htmlParserCtxtPtr p = htmlNewParserCtxt();
  if (!p)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  first_error fe;
  catch_errors(p, &fe);
  p->sax->characters = on_chars;
  p->sax->ignorableWhitespace = on_chars;
  htmlDocPtr doc = htmlCtxtReadMemory(
      p, data, (int)n, NULL, html_encoding(data, n),
      HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
  dq_status st;
  if (!doc)
    st = parse_error(c, p, "HTML");
  else
    st = walk_doc(c, doc, b, 1, text);
  xmlFreeDoc(doc);
  htmlFreeParserCtxt(p);
  return st;
}

dq_status dq_read_html(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
  return dq_read_html_lines(c, data, n, b, NULL);
}
