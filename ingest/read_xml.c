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
  int n_cells; /* cells seen in the current table row */
} xwalk;

static void block(xwalk *w) {
  dq_tbuf_newline(w->b);
  w->pending_space = 0;
}

static int is_ws(xmlChar ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

static void emit_text(xwalk *w, xmlNodePtr n) {
  const char *s = (const char *)n->content;
  if (!s)
    return;
  uint32_t line = start_line(n);
  if (w->in_pre) {
    dq_tbuf_pos(w->b, line, 0);
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
    char last = dq_tbuf_last(w->b);
    if (w->pending_space && last != '\n' && last != ' ')
      dq_tbuf_putc(w->b, ' ');
    w->pending_space = 0;
    dq_tbuf_pos(w->b, line, 0);
    dq_tbuf_put_utf8(w->b, s + i, j - i);
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
  if (strcasecmp(name, "br") == 0) { /* ends the line of the text before */
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
      dq_tbuf_put(w->b, " | ", 3);
      w->pending_space = 0;
    }
    return walk(w, n, depth + 1);
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
  int is_block = in_list(name, HTML_BLOCKS);
  if (is_block)
    block(w);
  w->in_pre += is_pre;
  dq_status st = walk(w, n, depth + 1);
  w->in_pre -= is_pre;
  if (is_block)
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
                          int html) {
  xwalk w = {c, b, html, 0, 0, 0};
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
  st = walk_doc(c, doc, b, 0);
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

dq_status dq_read_html(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
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
    st = walk_doc(c, doc, b, 1);
  xmlFreeDoc(doc);
  htmlFreeParserCtxt(p);
  return st;
}
