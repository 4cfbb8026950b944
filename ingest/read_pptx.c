/*
 * read_pptx.c - PowerPoint presentations (.pptx, .pptm, .ppsx; ECMA-376
 * PresentationML): each slide's text in the presentation's order, its
 * speaker notes after it. The zip container and its limits are
 * read_zip.c's; XML goes through read_xml.c's safe parse; elements are
 * compared by local name, so transitional and strict namespaces both work.
 *
 * Parts used:
 *   _rels/.rels                 the officeDocument relationship names the
 *                               presentation part (ppt/presentation.xml)
 *   ppt/presentation.xml        p:sldIdLst/p:sldId@r:id, in slide order
 *   ppt/_rels/presentation.xml.rels  Relationship@Id -> @Target, relative
 *                               to the part's folder (or from the root
 *                               when it starts with '/')
 *   ppt/slides/slideN.xml       p:sld (@show="0": a hidden slide) /
 *                               p:cSld/p:spTree of p:sp shapes (their
 *                               placeholder p:nvSpPr/p:nvPr/p:ph@type:
 *                               title, ctrTitle, subTitle, body, dt, ftr,
 *                               sldNum, ...), p:grpSp groups,
 *                               p:graphicFrame holding a:tbl tables
 *                               (a:tr rows of a:tc cells, @hMerge/@vMerge
 *                               for a merged cell's continuation) and
 *                               mc:AlternateContent; text in p:txBody/a:p
 *                               paragraphs of a:r/a:t runs, a:fld fields
 *                               and a:br breaks
 *   ppt/slides/_rels/slideN.xml.rels  its notesSlide relationship
 *   ppt/notesSlides/notesSlideK.xml   p:notes/p:cSld/p:spTree: its body
 *                               placeholder's paragraphs are the notes
 *                               (without one, its text boxes':
 *                               LibreOffice's notes)
 *
 * Output: a slide opens with its heading line, "Slide 3: Quarterly
 * results" (its title placeholder's text; "Slide 3" without one;
 * " (hidden)" after a hidden slide's), a level-1 heading, so that a slide
 * is a section. Then a line per paragraph of its other shapes in the
 * slide's order (bullets' levels are not written), a table's row a line
 * with its cells joined by " | ", then the speaker notes, their first
 * line starting "[notes] ". Marks carry page = the slide's number and line
 * = the line within the slide (its heading is line 1), so a citation reads
 * "deck.pptx p.3:2-4". Left out: date, footer and slide-number
 * placeholders (a master's boilerplate repeated on every slide), pictures,
 * charts, SmartArt, comments, and the masters and layouts' own text.
 *
 * Limits: PPTX_MAX_SLIDES slides, shapes nested DQ_XML_MAX_DEPTH deep,
 * DQ_OPC_PATH_MAX bytes of a part's path.
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PPTX_MAX_SLIDES 10000u
#define TITLE_MAX 200     /* bytes of a slide's title in its heading */

typedef struct pptx {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  dq_zip z;
  uint32_t slide; /* 1-based number of the slide being read */
  uint32_t line;  /* the next line's number within it */
  int n_bodies;   /* body placeholders a notes page's pass met */
} pptx;

/* ---- text ---- */

/* A shape's placeholder type ("title", "body", ...), "" for a placeholder
 * without one (a body), NULL when it is none. */
static const char *placeholder(xmlNodePtr sp) {
  xmlNodePtr nv = child(sp, "nvSpPr");
  xmlNodePtr ph = child(child(nv, "nvPr"), "ph");
  if (!ph)
    return NULL;
  const char *t = attr(ph, "type");
  return t ? t : "";
}

static int is_title(const char *ph) {
  return ph && (!strcmp(ph, "title") || !strcmp(ph, "ctrTitle"));
}

/* A master's boilerplate, repeated on each slide that shows it. */
static int is_boilerplate(const char *ph) {
  return ph && (!strcmp(ph, "dt") || !strcmp(ph, "ftr") ||
                !strcmp(ph, "sldNum") || !strcmp(ph, "hdr") ||
                !strcmp(ph, "sldImg"));
}

/* Appends a paragraph's text (a:r and a:fld runs' a:t, a:br as a
 * blank). */
static void para_text(pptx *d, xmlNodePtr p) {
  for (xmlNodePtr k = p->children; k; k = k->next) {
    if (is(k, "br")) {
      dq_tbuf_space(d->b);
      continue;
    }
    if (!is(k, "r") && !is(k, "fld"))
      continue;
    for (xmlNodePtr t = child(k, "t"); t; t = t->next) {
      if (!is(t, "t"))
        continue;
      for (xmlNodePtr x = t->children; x; x = x->next)
        if (x->type == XML_TEXT_NODE && x->content) {
          /* blanks folded; "_x000B_", a vertical tab as OOXML escapes
           * what XML cannot hold, is PowerPoint's soft break in a title */
          for (const char *q = (const char *)x->content; *q;) {
            if (*q == '\t' || *q == '\n' || *q == '\r') {
              dq_tbuf_space(d->b);
              q++;
            } else if (q[0] == '_' && (q[1] | 0x20) == 'x' && q[2] == '0' &&
                       q[3] == '0' && q[4] == '0' && (q[5] | 0x20) == 'b' &&
                       q[6] == '_') { /* each test stops at the NUL */
              dq_tbuf_space(d->b);
              q += 7;
            } else {
              size_t run = 1 + strcspn(q + 1, "\t\n\r_");
              dq_tbuf_put_utf8(d->b, q, run);
              q += run;
            }
          }
        }
    }
  }
}

/* A text body's paragraphs on one line, blanks between (a table's cell, a
 * title of several paragraphs), the blanks at its end trimmed. */
static void joined_paras(pptx *d, xmlNodePtr body) {
  size_t text = d->b->n;
  for (xmlNodePtr p = body ? body->children : NULL; p; p = p->next)
    if (is(p, "p")) {
      if (d->b->n > text)
        dq_tbuf_space(d->b);
      para_text(d, p);
    }
  dq_tbuf_trim_spaces(d->b, text);
}

/* Starts a line of the slide: its mark. */
static void line_start(pptx *d) {
  dq_tbuf_newline(d->b);
  dq_tbuf_pos(d->b, d->line, d->slide);
}

/* Ends a line started at `start`: dropped when it holds no text. */
static void line_end(pptx *d, size_t start, size_t text_start) {
  dq_tbuf_trim_spaces(d->b, text_start);
  if (d->b->n == text_start) {
    dq_tbuf_truncate(d->b, start);
    return;
  }
  dq_tbuf_putc(d->b, '\n');
  d->line++;
}

/* A text body's paragraphs, a line each; the first written after
 * *prefix ("[notes] ") when it is set, which is then cleared. */
static void text_body(pptx *d, xmlNodePtr body, const char **prefix) {
  for (xmlNodePtr p = body ? body->children : NULL; p; p = p->next) {
    if (!is(p, "p"))
      continue;
    line_start(d);
    size_t start = d->b->n;
    if (*prefix)
      dq_tbuf_put(d->b, *prefix, strlen(*prefix));
    size_t text_start = d->b->n;
    para_text(d, p);
    uint32_t before = d->line;
    line_end(d, start, text_start);
    if (d->line != before)
      *prefix = NULL;
  }
}

/* A merged cell's continuation (covered by the cell before it). */
static int merged(xmlNodePtr tc) {
  const char *h = attr(tc, "hMerge"), *v = attr(tc, "vMerge");
  return (h && (!strcmp(h, "1") || !strcmp(h, "true"))) ||
         (v && (!strcmp(v, "1") || !strcmp(v, "true")));
}

/* A table: a line per row, its cells' paragraphs joined by blanks and the
 * cells by " | "; a row of empty cells is no line. */
static void table(pptx *d, xmlNodePtr tbl) {
  for (xmlNodePtr tr = tbl->children; tr; tr = tr->next) {
    if (!is(tr, "tr"))
      continue;
    line_start(d);
    size_t start = d->b->n;
    int cells = 0;
    for (xmlNodePtr tc = tr->children; tc; tc = tc->next) {
      if (!is(tc, "tc") || merged(tc))
        continue;
      if (cells++)
        dq_tbuf_put(d->b, " | ", 3);
      joined_paras(d, child(tc, "txBody"));
    }
    /* empty cells at the row's end leave no separators */
    for (;;) {
      dq_tbuf_trim_spaces(d->b, start);
      if (d->b->n < start + 1 || d->b->text[d->b->n - 1] != '|')
        break;
      dq_tbuf_truncate(d->b, d->b->n - 1);
    }
    int empty = 1;
    for (size_t i = start; i < d->b->n && empty; i++)
      empty = d->b->text[i] == ' ' || d->b->text[i] == '|';
    if (empty)
      dq_tbuf_truncate(d->b, start);
    else {
      dq_tbuf_putc(d->b, '\n');
      d->line++;
    }
  }
}

/* The text of a shape tree's (or a group's) shapes in order: a slide's
 * (notes 0) but its title and boilerplate, with tables; a notes page's
 * body placeholders (notes 1) or text boxes (notes 2). The first line
 * goes after *prefix (NULL: none), which is cleared once used. */
static dq_status shapes(pptx *d, xmlNodePtr tree, int notes, unsigned depth,
                        const char **prefix) {
  if (depth > DQ_XML_MAX_DEPTH)
    return dq_error_set(d->c->err, DQ_ERR_LIMIT,
                        "%s: slide %u: shapes nested deeper than %u",
                        d->c->name, d->slide, DQ_XML_MAX_DEPTH);
  for (xmlNodePtr k = tree->children; k; k = k->next) {
    dq_status st = DQ_OK;
    if (is(k, "sp")) {
      /* a slide's every shape's text but the title (its heading) and
       * the boilerplate; a notes page's body placeholder's (notes == 1),
       * or when it has none, its text boxes' (notes == 2: LibreOffice
       * writes notes as one; older PowerPoint files copy the slide's
       * number into one beside the body, which is not read) */
      const char *ph = placeholder(k);
      int body = ph && (!ph[0] || !strcmp(ph, "body"));
      d->n_bodies += body;
      if (notes == 1 ? body : !is_title(ph) && !is_boilerplate(ph))
        text_body(d, child(k, "txBody"), prefix);
    } else if (is(k, "grpSp")) {
      st = shapes(d, k, notes, depth + 1, prefix);
    } else if (is(k, "graphicFrame") && !notes) {
      xmlNodePtr data = child(child(k, "graphic"), "graphicData");
      xmlNodePtr tbl = child(data, "tbl");
      if (tbl)
        table(d, tbl);
    } else if (is(k, "AlternateContent")) {
      xmlNodePtr pick = child(k, "Choice");
      if (pick || (pick = child(k, "Fallback")))
        st = shapes(d, pick, notes, depth + 1, prefix);
    }
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* The first title placeholder below tree (groups too), or NULL. */
static xmlNodePtr find_title(xmlNodePtr tree, unsigned depth) {
  for (xmlNodePtr k = tree->children; k && depth <= DQ_XML_MAX_DEPTH;
       k = k->next) {
    if (is(k, "sp") && is_title(placeholder(k)))
      return k;
    if (is(k, "grpSp")) {
      xmlNodePtr t = find_title(k, depth + 1);
      if (t)
        return t;
    }
  }
  return NULL;
}

/* The heading line of slide d->slide, "Slide N: TITLE" ("Slide N"; "Slide
 * N (hidden): ..."), the title placeholder's paragraphs joined by blanks;
 * the heading's title cut at TITLE_MAX bytes of the title (a paragraph
 * put in a title box), the line keeping all of it. */
static void heading(pptx *d, xmlNodePtr title, int hidden) {
  line_start(d);
  size_t start = d->b->n;
  char head[48];
  int w = snprintf(head, sizeof head, "Slide %u%s: ", d->slide,
                   hidden ? " (hidden)" : "");
  dq_tbuf_put(d->b, head, (size_t)w);
  size_t text = d->b->n;
  joined_paras(d, child(title, "txBody"));
  dq_slide_heading_end(d->b, start, text);
  d->line++;
}

void dq_slide_heading_end(dq_tbuf *b, size_t start, size_t text) {
  if (b->n == text) /* no title: no ": " */
    dq_tbuf_truncate(b, text - 2);
  size_t end = b->n;
  if (end > text && end - text > TITLE_MAX && !b->oom) {
    end = text + TITLE_MAX; /* at a character's start */
    while (end > text && ((unsigned char)b->text[end] & 0xC0) == 0x80)
      end--;
  }
  if (!b->oom)
    dq_tbuf_heading(b, start, 1, b->text + start, end - start);
  dq_tbuf_putc(b, '\n');
}

/* Slide part `path`: its heading, shapes and notes. */
static dq_status slide(pptx *d, const char *path) {
  xmlDocPtr doc = NULL, rels = NULL, notes = NULL;
  dq_status st = dq_zip_xml(&d->z, path, 1, &doc);
  if (st != DQ_OK)
    return st;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  xmlNodePtr tree = child(child(root, "cSld"), "spTree");
  const char *show = attr(root, "show");
  int hidden = show && (!strcmp(show, "0") || !strcmp(show, "false"));
  d->line = 1;
  heading(d, tree ? find_title(tree, 0) : NULL, hidden);
  const char *none = NULL;
  if (tree)
    st = shapes(d, tree, 0, 0, &none);
  /* the notes, when the slide has a notes part (a damaged one is an
   * error, as any damaged part is) */
  char rp[DQ_OPC_PATH_MAX], np[DQ_OPC_PATH_MAX];
  if (st == DQ_OK && dq_opc_rels_of(path, rp, sizeof rp) &&
      (st = dq_zip_xml(&d->z, rp, 0, &rels)) == DQ_OK &&
      dq_opc_rel_target(rels, path, NULL, "notesSlide", np, sizeof np) &&
      (st = dq_zip_xml(&d->z, np, 0, &notes)) == DQ_OK && notes) {
    xmlNodePtr nt =
        child(child(xmlDocGetRootElement(notes), "cSld"), "spTree");
    const char *prefix = "[notes] ";
    d->n_bodies = 0;
    if (nt)
      st = shapes(d, nt, 1, 0, &prefix);
    if (nt && st == DQ_OK && !d->n_bodies)
      st = shapes(d, nt, 2, 0, &prefix);
  }
  xmlFreeDoc(notes);
  xmlFreeDoc(rels);
  xmlFreeDoc(doc);
  return st;
}

dq_status dq_read_pptx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b, uint32_t *n_slides) {
  pptx d = {0};
  d.c = c;
  d.b = b;
  *n_slides = 0;
  xmlDocPtr pres = NULL, rels = NULL;
  char main[DQ_OPC_PATH_MAX], rp[DQ_OPC_PATH_MAX];
  dq_status st = dq_zip_open(&d.z, c, data, n, "a PPTX");
  if (st != DQ_OK || (st = dq_opc_main(&d.z, "ppt/presentation.xml", main, rp,
                                       &pres, &rels)) != DQ_OK)
    goto done;
  xmlNodePtr list = child(xmlDocGetRootElement(pres), "sldIdLst");
  for (xmlNodePtr s = list ? list->children : NULL; s && st == DQ_OK;
       s = s->next) {
    if (!is(s, "sldId"))
      continue;
    if (d.slide == PPTX_MAX_SLIDES) {
      st = dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: more than %u slides", c->name, PPTX_MAX_SLIDES);
      break;
    }
    char path[DQ_OPC_PATH_MAX];
    const char *id = dq_opc_rel_id(s);
    if (!id || !dq_opc_rel_target(rels, main, id, NULL, path, sizeof path)) {
      st = dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: slide %u: %s names no slide part in %s",
                        c->name, d.slide + 1, id ? id : "a p:sldId", rp);
      break;
    }
    d.slide++;
    st = slide(&d, path);
  }
  *n_slides = d.slide;
done:
  xmlFreeDoc(rels);
  xmlFreeDoc(pres);
  dq_zip_close(&d.z);
  return st;
}
