/*
 * read_docx.c - DOCX reader: the zip container through libzip, the
 * WordprocessingML parts through libxml2 (read_xml.c's safe parse).
 *
 * On-disk layout used here (ECMA-376 part 1): a zip archive holding
 *   word/document.xml   w:document/w:body with w:p paragraphs (w:pPr with
 *                       w:pStyle@w:val and w:numPr/{w:ilvl,w:numId}; runs
 *                       w:r holding w:t text, w:tab, w:br, w:cr), w:tbl
 *                       tables (w:tr rows of w:tc cells holding w:p), w:sdt
 *                       content controls (w:sdtContent)
 *   word/styles.xml     w:style@w:styleId with w:name@w:val ("heading 1",
 *                       "Title"), w:pPr/w:outlineLvl@w:val (0-based),
 *                       w:pPr/w:numPr (a style's own list numbering, as a
 *                       legal template's "Heading 2" numbered "1.1") and
 *                       w:basedOn@w:val (the style it inherits from)
 *   word/numbering.xml  w:abstractNum@w:abstractNumId with w:lvl@w:ilvl
 *                       (w:start, w:numFmt, w:lvlText such as "%1." or
 *                       "(%2)", w:pStyle: the style this level numbers),
 *                       and w:num@w:numId -> w:abstractNumId
 *   word/footnotes.xml  w:footnote@w:id holding w:p (w:type "separator" and
 *   word/endnotes.xml   "continuationSeparator" are rules, not notes); the
 *                       body refers to them by w:footnoteReference@w:id
 *                       (w:endnoteReference)
 *   word/comments.xml   w:comment@w:id (w:author, w:date) holding w:p; the
 *                       body marks its text from w:commentRangeStart@w:id
 *                       to w:commentRangeEnd and refers to it by
 *                       w:commentReference@w:id
 *   word/commentsExtended.xml  w15:commentEx@w15:paraId (the w14:paraId of
 *                       a comment's last w:p), @w15:paraIdParent for a
 *                       reply, @w15:done="1" for a resolved thread
 *   word/_rels/document.xml.rels  the parts a section's w:sectPr names by
 *                       w:headerReference / w:footerReference@r:id: w:hdr
 *                       and w:ftr parts of paragraphs and tables, their
 *                       page numbers complex fields (w:fldChar begin,
 *                       w:instrText " PAGE ", separate, the value shown,
 *                       end) or w:fldSimple@w:instr
 * Only local names are compared, so transitional and strict namespaces both
 * work. Deleted revisions (w:del, w:delText) and field codes (w:instrText)
 * are left out.
 *
 * Output: one line per paragraph; a table row is one line with its cells
 * separated by " | ". Marks carry `line` = the 1-based paragraph number in
 * document order (paragraphs inside tables count). Headings come from styles
 * Heading1..9 / Title (by id, by name, or by outline level). Numbered
 * paragraphs get their list number as a prefix ("1.", "(a)", "ii."): a
 * paragraph's own w:numPr, else its style's (through w:basedOn), whose
 * level is the style's w:ilvl, else the level whose w:pStyle names the
 * style, else 0; numId 0 turns numbering off. A footnote's reference reads
 * "[1]" (an endnote's "[i]"), numbered in order as Word does, and the
 * note's text follows on a line of its own, "[1] text", after the
 * paragraph (a table's row) that refers to it, with that paragraph's
 * number: the note stays with the sentence it qualifies. A reviewer's
 * comment is written the same way, with no mark in the text, as
 * "[comment, Jane Doe, 2026-03-01, on "30 days"] Client asks for 60."
 * (the quote when it marks part of a paragraph; "[reply, ..." for an
 * answer, "resolved" for a thread marked done). Moved-away text
 * (w:moveFrom) is left out like deleted text. A text box's paragraphs
 * (w:txbxContent) join the paragraph that anchors it, words apart; of
 * mc:AlternateContent, which Word and LibreOffice write a text box twice
 * in, the first mc:Choice is read (else mc:Fallback). The page headers
 * and footers follow the body under a level-1 heading "Headers and
 * footers", each part once (headers first, in the sections' order), each
 * line "[header] PRIVILEGED & CONFIDENTIAL" once, a page number's value
 * and a line of page-number words alone ("Page 3 of 12") left out
 * (ingest_int.h dq_hf_line): a draft's reference, a confidentiality
 * marking or the parties' names, which no body line may hold.
 *
 * The zip container and its zip-bomb limits are read_zip.c's.
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zip.h>

#define MAX_STYLES 4096
#define MAX_LEVELS 9

#define STYLE_ID_MAX 64
#define BASED_ON_MAX 8 /* w:basedOn steps followed */

typedef struct style_lvl {
  char id[STYLE_ID_MAX];
  char based_on[STYLE_ID_MAX];
  int level;
  int num_id, ilvl; /* its w:numPr's, -1 when not given */
} style_lvl;

typedef struct abs_num {
  int id;
  dq_num_fmt fmt[MAX_LEVELS];
  char text[MAX_LEVELS][32];
  int start[MAX_LEVELS];
  char pstyle[MAX_LEVELS][STYLE_ID_MAX]; /* the style a level numbers */
} abs_num;

typedef struct num_inst {
  int num_id, abs_index; /* abs_index into docx.abs, -1 when unknown */
  int count[MAX_LEVELS];
  int used[MAX_LEVELS];
} num_inst;

/* A notes part (footnotes, endnotes or comments) and its references so
 * far. */
typedef struct note_id {
  const char *key; /* a comment's paraId (commentsExtended.xml) */
  int id;          /* a note's or comment's w:id */
  xmlNodePtr n;
} note_id;

typedef struct notes {
  xmlDocPtr doc;    /* NULL when the part is missing */
  const char *item; /* "footnote", "endnote", "comment" */
  dq_num_fmt fmt;   /* of the references' numbers */
  int count;
  note_id *by_id; /* its items sorted by w:id, for references */
  size_t n_by_id;
} notes;

#define MAX_PENDING 64 /* notes referred to by one paragraph or row */

typedef struct docx {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  dq_zip z;
  style_lvl *styles;
  size_t n_styles;
  abs_num *abs;
  size_t n_abs;
  num_inst *nums;
  size_t n_nums;
  uint32_t para_no;
  notes fn, en, cm;
  xmlDocPtr cm_ext; /* word/commentsExtended.xml, NULL when missing */
  note_id *ext;     /* its w15:commentEx sorted by paraId */
  size_t n_ext;
  struct {
    notes *set;
    int id, no;
    size_t q_off, q_end;  /* a comment's range in b, q_off >= q_end: none */
    size_t p_start;       /* where its paragraph's text starts in b */
    int p_cell;           /* that paragraph is in a table's cell */
  } pending[MAX_PENDING]; /* referred to, text not yet written */
  size_t n_pending;
  struct {
    int id;
    size_t off, end;    /* end SIZE_MAX until w:commentRangeEnd */
  } range[MAX_PENDING]; /* comment ranges of the paragraph being read */
  size_t n_range;
  size_t p_start; /* where the current paragraph's text starts in b */
  int p_cell;     /* the current paragraph is in a table's cell */
  int in_note;   /* writing a note's text: its references are not queued */
  int skip_lead; /* blanks before a note's first word are dropped */
  /* the page headers and footers (headers_footers) */
  const char *prefix; /* "[header] " before each line written, or NULL */
  dq_hf hf;           /* their lines written so far */
  unsigned fld_depth; /* complex fields open (w:fldChar begin .. end) */
  uint32_t fld_page;  /* bit k: field k is a page number's (dq_page_field) */
  uint32_t fld_skip;  /* bit k: in field k's shown value, which is left out */
} docx;

/* ---- styles and numbering ---- */

static int heading_of_name(const char *name) {
  if (!name)
    return 0;
  if (strcasecmp(name, "title") == 0)
    return 1;
  if (strncasecmp(name, "heading", 7) == 0) {
    const char *p = name + 7;
    if (*p == ' ')
      p++;
    if (p[0] >= '1' && p[0] <= '9' && p[1] == '\0')
      return p[0] - '0';
  }
  return 0;
}

static int style_cmp(const void *a, const void *b) {
  return strcmp(((const style_lvl *)a)->id, ((const style_lvl *)b)->id);
}

static dq_status load_styles(docx *d) {
  xmlDocPtr doc;
  dq_status st = dq_zip_xml(&d->z, "word/styles.xml", 0, &doc);
  if (st != DQ_OK || !doc)
    return st;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  size_t cap = 0;
  for (xmlNodePtr s = root ? root->children : NULL; s; s = s->next) {
    if (!is(s, "style") || d->n_styles >= MAX_STYLES)
      continue;
    const char *id = attr(s, "styleId");
    int level = heading_of_name(attr(child(s, "name"), "val"));
    xmlNodePtr ppr = child(s, "pPr");
    int outline = attr_int(child(ppr, "outlineLvl"), "val", -1);
    if (!level && outline >= 0 && outline < 9)
      level = outline + 1;
    xmlNodePtr numpr = child(ppr, "numPr");
    const char *based = attr(child(s, "basedOn"), "val");
    int num_id = numpr ? attr_int(child(numpr, "numId"), "val", -1) : -1;
    int ilvl = numpr ? attr_int(child(numpr, "ilvl"), "val", -1) : -1;
    if (!id || strlen(id) >= STYLE_ID_MAX ||
        (based && strlen(based) >= STYLE_ID_MAX) ||
        (!level && !numpr && !based))
      continue;
    if (d->n_styles == cap) {
      cap = cap ? cap * 2 : 16;
      style_lvl *p = realloc(d->styles, cap * sizeof *p);
      if (!p) {
        st = dq_error_set(d->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                          d->c->name);
        break;
      }
      d->styles = p;
    }
    style_lvl *y = &d->styles[d->n_styles++];
    snprintf(y->id, sizeof y->id, "%s", id);
    snprintf(y->based_on, sizeof y->based_on, "%s", based ? based : "");
    y->level = level;
    y->num_id = num_id;
    y->ilvl = ilvl;
  }
  xmlFreeDoc(doc);
  /* by id, for style_of: every paragraph looks its style up, and a
   * template has hundreds */
  if (d->n_styles > 1)
    qsort(d->styles, d->n_styles, sizeof *d->styles, style_cmp);
  return st;
}

static const style_lvl *style_of(const docx *d, const char *id) {
  if (!id || !d->n_styles)
    return NULL;
  style_lvl key;
  if (strlen(id) >= sizeof key.id)
    return NULL;
  snprintf(key.id, sizeof key.id, "%s", id);
  return bsearch(&key, d->styles, d->n_styles, sizeof *d->styles, style_cmp);
}

static int style_level(const docx *d, const char *id) {
  if (!id)
    return 0;
  const style_lvl *y = style_of(d, id);
  if (y && y->level)
    return y->level;
  return heading_of_name(id); /* "Heading1", "Title" without styles.xml */
}

/* Fills *num_id and *ilvl where they are -1 (the paragraph gave none)
 * from style `id`, through its w:basedOn chain: the first numId and ilvl
 * given, else the level of the list whose w:pStyle names the style that
 * gave the numId, else 0. */
static void style_numbering(const docx *d, const char *id, int *num_id,
                            int *ilvl) {
  const char *numbered = NULL;
  for (int step = 0; id && id[0] && step < BASED_ON_MAX; step++) {
    const style_lvl *y = style_of(d, id);
    if (!y)
      break;
    if (*num_id < 0 && y->num_id >= 0) {
      *num_id = y->num_id;
      numbered = y->id;
    }
    if (*ilvl < 0 && y->ilvl >= 0)
      *ilvl = y->ilvl;
    id = y->based_on;
  }
  if (*ilvl >= 0 || *num_id <= 0)
    return;
  for (size_t i = 0; numbered && i < d->n_nums; i++) {
    if (d->nums[i].num_id != *num_id || d->nums[i].abs_index < 0)
      continue;
    const abs_num *a = &d->abs[d->nums[i].abs_index];
    for (int l = 0; l < MAX_LEVELS && *ilvl < 0; l++)
      if (!strcmp(a->pstyle[l], numbered))
        *ilvl = l;
    break;
  }
}

static dq_num_fmt fmt_of(const char *v) {
  if (!v || strcmp(v, "decimal") == 0)
    return DQ_FMT_DECIMAL;
  if (strcmp(v, "lowerLetter") == 0)
    return DQ_FMT_LLETTER;
  if (strcmp(v, "upperLetter") == 0)
    return DQ_FMT_ULETTER;
  if (strcmp(v, "lowerRoman") == 0)
    return DQ_FMT_LROMAN;
  if (strcmp(v, "upperRoman") == 0)
    return DQ_FMT_UROMAN;
  if (strcmp(v, "bullet") == 0)
    return DQ_FMT_BULLET;
  if (strcmp(v, "none") == 0)
    return DQ_FMT_NONE;
  return DQ_FMT_DECIMAL;
}

static dq_status load_numbering(docx *d) {
  xmlDocPtr doc;
  dq_status st = dq_zip_xml(&d->z, "word/numbering.xml", 0, &doc);
  if (st != DQ_OK || !doc)
    return st;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  size_t n_abs = 0, n_num = 0;
  for (xmlNodePtr s = root ? root->children : NULL; s; s = s->next) {
    n_abs += is(s, "abstractNum");
    n_num += is(s, "num");
  }
  if (n_abs > MAX_STYLES || n_num > MAX_STYLES) {
    xmlFreeDoc(doc);
    return dq_error_set(d->c->err, DQ_ERR_LIMIT,
                        "%s: word/numbering.xml defines over %d lists",
                        d->c->name, MAX_STYLES);
  }
  d->abs = calloc(n_abs + 1, sizeof *d->abs);
  d->nums = calloc(n_num + 1, sizeof *d->nums);
  if (!d->abs || !d->nums) {
    xmlFreeDoc(doc);
    return dq_error_set(d->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        d->c->name);
  }
  for (xmlNodePtr s = root ? root->children : NULL; s; s = s->next) {
    if (is(s, "abstractNum")) {
      abs_num *a = &d->abs[d->n_abs++];
      a->id = attr_int(s, "abstractNumId", -1);
      for (int i = 0; i < MAX_LEVELS; i++) {
        a->start[i] = 1;
        snprintf(a->text[i], sizeof a->text[i], "%%%d.", i + 1);
      }
      for (xmlNodePtr l = s->children; l; l = l->next) {
        int i = is(l, "lvl") ? attr_int(l, "ilvl", -1) : -1;
        if (i < 0 || i >= MAX_LEVELS)
          continue;
        a->fmt[i] = fmt_of(attr(child(l, "numFmt"), "val"));
        a->start[i] = attr_int(child(l, "start"), "val", 1);
        const char *t = attr(child(l, "lvlText"), "val");
        if (t)
          snprintf(a->text[i], sizeof a->text[i], "%s", t);
        const char *ps = attr(child(l, "pStyle"), "val");
        if (ps && strlen(ps) < STYLE_ID_MAX)
          snprintf(a->pstyle[i], sizeof a->pstyle[i], "%s", ps);
      }
    } else if (is(s, "num")) {
      num_inst *m = &d->nums[d->n_nums++];
      m->num_id = attr_int(s, "numId", -1);
      m->abs_index = attr_int(child(s, "abstractNumId"), "val", -1);
    }
  }
  for (size_t i = 0; i < d->n_nums; i++) { /* id -> index */
    int want = d->nums[i].abs_index, found = -1;
    for (size_t k = 0; k < d->n_abs && found < 0; k++)
      if (d->abs[k].id == want)
        found = (int)k;
    d->nums[i].abs_index = found;
  }
  xmlFreeDoc(doc);
  return DQ_OK;
}

/* Advances the list counter for (num_id, ilvl) and writes its label. */
static void number_label(docx *d, int num_id, int ilvl, char *out,
                         size_t cap) {
  out[0] = '\0';
  if (num_id <= 0 || ilvl < 0 || ilvl >= MAX_LEVELS)
    return;
  num_inst *m = NULL;
  for (size_t i = 0; i < d->n_nums; i++)
    if (d->nums[i].num_id == num_id)
      m = &d->nums[i];
  static const abs_num plain = {0}; /* decimal, "%1." style, start 0 -> 1 */
  const abs_num *a = m && m->abs_index >= 0 ? &d->abs[m->abs_index] : &plain;
  if (!m) { /* unknown list: keep the order with "1." labels */
    snprintf(out, cap, "%d.", num_id > 0 ? 1 : 0);
    return;
  }
  int start = a == &plain ? 1 : a->start[ilvl];
  m->count[ilvl] = m->used[ilvl] ? m->count[ilvl] + 1 : start;
  m->used[ilvl] = 1;
  for (int k = ilvl + 1; k < MAX_LEVELS; k++)
    m->used[k] = 0;
  const char *t = a == &plain ? "%1." : a->text[ilvl];
  size_t k = 0;
  for (const char *p = t; *p && k + 1 < cap; p++) {
    if (p[0] == '%' && p[1] >= '1' && p[1] <= '9') {
      int lv = p[1] - '1';
      char num[40];
      int v = m->used[lv] || lv == ilvl ? m->count[lv] : a->start[lv];
      dq_format_counter(num, sizeof num,
                        a == &plain ? DQ_FMT_DECIMAL : a->fmt[lv], v);
      for (const char *q = num; *q && k + 1 < cap; q++)
        out[k++] = *q;
      p++;
    } else {
      out[k++] = *p;
    }
  }
  out[k] = '\0';
  if (a != &plain && a->fmt[ilvl] == DQ_FMT_BULLET)
    snprintf(out, cap, "\xE2\x80\xA2");
}

/* ---- notes and comments: their parts indexed ---- */

static int by_id_cmp(const void *a, const void *b) {
  int x = ((const note_id *)a)->id, y = ((const note_id *)b)->id;
  return (x > y) - (x < y);
}

static int by_key_cmp(const void *a, const void *b) {
  return strcmp(((const note_id *)a)->key, ((const note_id *)b)->key);
}

/* Indexes the children named `item` of part `doc`'s root: by w:id (key
 * NULL; a footnote's w:type separators left out), or by `key`'s value.
 * A document with thousands of notes looks each up once per reference. */
static dq_status index_part(docx *d, xmlDocPtr doc, const char *item,
                            const char *key, note_id **out, size_t *n_out) {
  xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
  size_t n = 0;
  for (xmlNodePtr k = root ? root->children : NULL; k; k = k->next)
    n += is(k, item);
  *out = NULL;
  *n_out = 0;
  if (!n)
    return DQ_OK;
  note_id *v = malloc(n * sizeof *v);
  if (!v)
    return dq_error_set(d->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        d->c->name);
  n = 0;
  for (xmlNodePtr k = root->children; k; k = k->next) {
    if (!is(k, item))
      continue;
    const char *kv = key ? attr(k, key) : NULL;
    if (key ? kv != NULL : !attr(k, "type"))
      v[n++] = (note_id){kv, attr_int(k, "id", -2), k};
  }
  qsort(v, n, sizeof *v, key ? by_key_cmp : by_id_cmp);
  *out = v;
  *n_out = n;
  return DQ_OK;
}

/* ---- document ---- */

/* "[1]" for a reference to note `id` of `set`, queued for flush_notes. */
static void note_ref(docx *d, notes *set, int id) {
  char num[40], label[48];
  set->count++;
  dq_format_counter(num, sizeof num, set->fmt, set->count);
  snprintf(label, sizeof label, "[%s]", num);
  dq_tbuf_put(d->b, label, strlen(label));
  if (d->in_note || d->n_pending == MAX_PENDING)
    return;
  d->pending[d->n_pending].set = set;
  d->pending[d->n_pending].id = id;
  d->pending[d->n_pending++].no = set->count;
}

/* w:commentRangeStart / w:commentRangeEnd: where comment `id` marks text. */
static void comment_range(docx *d, int id, int end) {
  if (d->in_note)
    return;
  for (size_t i = 0; i < d->n_range; i++)
    if (d->range[i].id == id) {
      if (end)
        d->range[i].end = d->b->n;
      return;
    }
  if (end || d->n_range == MAX_PENDING)
    return;
  d->range[d->n_range].id = id;
  d->range[d->n_range].off = d->b->n;
  d->range[d->n_range++].end = SIZE_MAX;
}

/* w:commentReference: comment `id`, queued for flush_notes with the text
 * its range marks. */
static void comment_ref(docx *d, int id) {
  if (d->in_note || !d->cm.doc || d->n_pending == MAX_PENDING)
    return;
  size_t off = 1, end = 0;
  for (size_t i = 0; i < d->n_range; i++)
    if (d->range[i].id == id) {
      off = d->range[i].off;
      end = d->range[i].end == SIZE_MAX ? d->b->n : d->range[i].end;
    }
  d->pending[d->n_pending].set = &d->cm;
  d->pending[d->n_pending].id = id;
  d->pending[d->n_pending].no = 0;
  d->pending[d->n_pending].q_off = off;
  d->pending[d->n_pending].q_end = end;
  d->pending[d->n_pending].p_cell = d->p_cell;
  d->pending[d->n_pending++].p_start = d->p_start;
}

/* Whether comment c answers another, and whether its thread is marked
 * done, from commentsExtended.xml by the paraId of c's last paragraph. */
static void comment_thread(const docx *d, xmlNodePtr c, int *reply, int *done) {
  const char *para = NULL;
  for (xmlNodePtr p = c->children; p; p = p->next)
    if (is(p, "p"))
      para = attr(p, "paraId");
  note_id want = {para, 0, NULL};
  const note_id *e = para && d->n_ext ? bsearch(&want, d->ext, d->n_ext,
                                                sizeof *d->ext, by_key_cmp)
                                      : NULL;
  if (e) {
    *reply = attr(e->n, "paraIdParent") != NULL;
    *done = attr_int(e->n, "done", 0) == 1;
  }
}

/* The head of pending comment i, "[comment, author, date, on "quote"] ". */
static void comment_head(docx *d, size_t i, xmlNodePtr c) {
  dq_comment h = {0};
  h.author = attr(c, "author");
  h.date = attr(c, "date");
  comment_thread(d, c, &h.reply, &h.resolved);
  if (!h.reply) /* a reply is on its thread's text */
    dq_comment_quote(d->b, d->pending[i].q_off, d->pending[i].q_end,
                     d->pending[i].p_start, d->pending[i].p_cell, &h);
  dq_tbuf_comment(d->b, &h);
}

static dq_status runs(docx *d, xmlNodePtr n, unsigned depth);

/* Writes the notes queued by note_ref, each "[1] its text" on a line of
 * its own at the current paragraph's number. */
static dq_status flush_notes(docx *d) {
  dq_status st = DQ_OK;
  d->in_note = 1;
  for (size_t i = 0; i < d->n_pending && st == DQ_OK; i++) {
    notes *set = d->pending[i].set;
    note_id want = {NULL, d->pending[i].id, NULL};
    const note_id *found = set->n_by_id
                               ? bsearch(&want, set->by_id, set->n_by_id,
                                         sizeof *set->by_id, by_id_cmp)
                               : NULL;
    if (!found)
      continue;
    xmlNodePtr note = found->n;
    dq_tbuf_newline(d->b);
    dq_tbuf_pos(d->b, d->para_no, 0);
    if (set == &d->cm) {
      comment_head(d, i, note);
    } else {
      char num[40], label[48];
      dq_format_counter(num, sizeof num, set->fmt, d->pending[i].no);
      snprintf(label, sizeof label, "[%s] ", num);
      dq_tbuf_put(d->b, label, strlen(label));
    }
    size_t text_start = d->b->n;
    d->skip_lead = 1; /* Word writes " text" after the note's mark */
    for (xmlNodePtr p = note->children; p && st == DQ_OK; p = p->next) {
      if (!is(p, "p"))
        continue;
      if (d->b->n > text_start && dq_tbuf_last(d->b) != ' ')
        dq_tbuf_putc(d->b, ' ');
      st = runs(d, p, 0);
    }
    dq_tbuf_newline(d->b);
  }
  d->n_pending = 0;
  d->n_range = 0;
  d->in_note = 0;
  d->skip_lead = 0;
  return st;
}

/* A header's or footer's complex field: w:fldChar begin, separate and
 * end, and the w:instrText between the first two; the shown value of a
 * page number's field (dq_page_field) is left out. Fields nest. */
static void field(docx *d, xmlNodePtr k) {
  enum { MAX_FIELDS = 32 };
  if (is(k, "instrText")) {
    xmlChar *t = xmlNodeGetContent(k);
    if (t && d->fld_depth && d->fld_depth <= MAX_FIELDS &&
        dq_page_field((const char *)t))
      d->fld_page |= 1u << (d->fld_depth - 1);
    xmlFree(t);
    return;
  }
  const char *type = attr(k, "fldCharType");
  if (!type)
    return;
  if (!strcmp(type, "begin")) {
    d->fld_depth++;
    if (d->fld_depth <= MAX_FIELDS) {
      d->fld_page &= ~(1u << (d->fld_depth - 1));
      d->fld_skip &= ~(1u << (d->fld_depth - 1));
    }
  } else if (!strcmp(type, "separate") && d->fld_depth &&
             d->fld_depth <= MAX_FIELDS) {
    if (d->fld_page & (1u << (d->fld_depth - 1)))
      d->fld_skip |= 1u << (d->fld_depth - 1);
  } else if (!strcmp(type, "end") && d->fld_depth) {
    if (d->fld_depth <= MAX_FIELDS) {
      d->fld_page &= ~(1u << (d->fld_depth - 1));
      d->fld_skip &= ~(1u << (d->fld_depth - 1));
    }
    d->fld_depth--;
  }
}

/* Appends the text of runs below `n` (w:t, w:tab, w:ptab, w:br, w:cr,
 * w:noBreakHyphen). */
static dq_status runs(docx *d, xmlNodePtr n, unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return dq_error_set(d->c->err, DQ_ERR_LIMIT,
                        "%s: word/document.xml nested deeper than %u",
                        d->c->name, DQ_XML_MAX_DEPTH);
  for (xmlNodePtr k = n->children; k; k = k->next) {
    if (k->type != XML_ELEMENT_NODE)
      continue;
    if (is(k, "t")) {
      if (d->fld_skip) /* a page number's value, in a header or footer */
        continue;
      for (xmlNodePtr t = k->children; t; t = t->next) {
        if (t->type != XML_TEXT_NODE || !t->content)
          continue;
        const char *txt = (const char *)t->content;
        size_t len = strlen(txt);
        while (d->skip_lead && len && (*txt == ' ' || *txt == '\t'))
          txt++, len--;
        d->skip_lead &= len == 0;
        dq_tbuf_put_utf8(d->b, txt, len);
      }
    } else if (is(k, "noBreakHyphen")) { /* "non-disclosure" */
      dq_tbuf_putc(d->b, '-');
    } else if (is(k, "tab") || is(k, "ptab")) {
      if (!d->skip_lead)
        dq_tbuf_putc(d->b, '\t');
    } else if (is(k, "br") || is(k, "cr")) {
      dq_tbuf_putc(d->b, '\n');
    } else if (is(k, "footnoteReference") || is(k, "endnoteReference")) {
      note_ref(d, is(k, "footnoteReference") ? &d->fn : &d->en,
               attr_int(k, "id", -2));
    } else if (is(k, "commentRangeStart") || is(k, "commentRangeEnd")) {
      comment_range(d, attr_int(k, "id", -2), is(k, "commentRangeEnd"));
    } else if (is(k, "commentReference")) {
      comment_ref(d, attr_int(k, "id", -2));
    } else if (d->prefix && (is(k, "fldChar") || is(k, "instrText"))) {
      field(d, k);
    } else if (d->prefix && is(k, "fldSimple") &&
               dq_page_field(attr(k, "instr") ? attr(k, "instr") : "")) {
      continue;
    } else if (is(k, "del") || is(k, "delText") || is(k, "instrText") ||
               is(k, "moveFrom") || is(k, "footnoteRef") ||
               is(k, "endnoteRef") || is(k, "annotationRef") || is(k, "pPr") ||
               is(k, "rPr")) {
      continue;
    } else if (is(k, "AlternateContent")) {
      /* Word writes a text box twice, as DrawingML (mc:Choice) and VML
       * (mc:Fallback): one is read */
      xmlNodePtr pick = child(k, "Choice");
      dq_status st = DQ_OK;
      if (pick || (pick = child(k, "Fallback")))
        st = runs(d, pick, depth + 1);
      if (st != DQ_OK)
        return st;
    } else {
      /* a text box's paragraph inside this one: words apart */
      int para = is(k, "p");
      if (para)
        dq_tbuf_space(d->b);
      dq_status st = runs(d, k, depth + 1);
      if (st != DQ_OK)
        return st;
      if (para)
        dq_tbuf_space(d->b);
    }
  }
  return DQ_OK;
}

static dq_status paragraph(docx *d, xmlNodePtr p, int in_cell) {
  d->para_no++;
  dq_tbuf_pos(d->b, d->para_no, 0);
  xmlNodePtr ppr = child(p, "pPr");
  const char *pstyle = attr(child(ppr, "pStyle"), "val");
  int level = style_level(d, pstyle);
  xmlNodePtr numpr = child(ppr, "numPr");
  int num_id = numpr ? attr_int(child(numpr, "numId"), "val", -1) : -1;
  int ilvl = numpr ? attr_int(child(numpr, "ilvl"), "val", -1) : -1;
  if (num_id < 0 || ilvl < 0)
    style_numbering(d, pstyle, &num_id, &ilvl);
  char label[128] = "";
  if (num_id > 0)
    number_label(d, num_id, ilvl < 0 ? 0 : ilvl, label, sizeof label);
  size_t start = d->b->n;
  if (d->prefix && !in_cell)
    dq_tbuf_put(d->b, d->prefix, strlen(d->prefix));
  if (label[0]) {
    dq_tbuf_put_utf8(d->b, label, strlen(label));
    dq_tbuf_putc(d->b, ' ');
  }
  size_t text_start = d->b->n;
  d->p_start = text_start;
  d->p_cell = in_cell;
  dq_status st = runs(d, p, 0);
  if (st != DQ_OK)
    return st;
  dq_tbuf_trim_spaces(d->b, text_start);
  if (d->b->n == text_start) { /* empty paragraph: no line, no label */
    dq_tbuf_truncate(d->b, start);
    return DQ_OK;
  }
  if (d->prefix && !in_cell && !dq_hf_line(d->b, &d->hf, start, text_start)) {
    d->n_pending = d->n_range = 0; /* a header's line not worth keeping */
    return DQ_OK;
  }
  if (level && !in_cell && !d->b->oom)
    dq_tbuf_heading(d->b, start, level, d->b->text + start, d->b->n - start);
  if (!in_cell) {
    dq_tbuf_putc(d->b, '\n');
    return flush_notes(d);
  }
  return DQ_OK;
}

static dq_status block_items(docx *d, xmlNodePtr parent, int in_cell,
                             unsigned depth);

static dq_status table(docx *d, xmlNodePtr tbl, unsigned depth) {
  for (xmlNodePtr tr = tbl->children; tr; tr = tr->next) {
    if (!is(tr, "tr"))
      continue;
    dq_tbuf_newline(d->b);
    dq_tbuf_pos(d->b, d->para_no + 1, 0);
    size_t row = d->b->n, text = row;
    if (d->prefix && depth == 0) {
      dq_tbuf_put(d->b, d->prefix, strlen(d->prefix));
      text = d->b->n;
    }
    int n_cells = 0;
    for (xmlNodePtr tc = tr->children; tc; tc = tc->next) {
      if (!is(tc, "tc"))
        continue;
      if (n_cells++)
        dq_tbuf_put(d->b, " | ", 3);
      dq_status st = block_items(d, tc, 1, depth + 1);
      if (st != DQ_OK)
        return st;
    }
    if (d->prefix && depth == 0 && !dq_hf_line(d->b, &d->hf, row, text)) {
      d->n_pending = d->n_range = 0; /* a header's row not worth keeping */
      continue;
    }
    dq_tbuf_newline(d->b);
    dq_status st = depth == 0 ? flush_notes(d) : DQ_OK;
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* Paragraphs and tables below `parent` in order. In a cell, paragraphs are
 * joined by spaces so a row stays on one line. */
static dq_status block_items(docx *d, xmlNodePtr parent, int in_cell,
                             unsigned depth) {
  if (depth > DQ_XML_MAX_DEPTH)
    return dq_error_set(d->c->err, DQ_ERR_LIMIT,
                        "%s: word/document.xml nested deeper than %u",
                        d->c->name, DQ_XML_MAX_DEPTH);
  for (xmlNodePtr k = parent->children; k; k = k->next) {
    dq_status st = DQ_OK;
    if (is(k, "p")) {
      size_t before = d->b->n;
      if (in_cell && before && dq_tbuf_last(d->b) != ' ' &&
          dq_tbuf_last(d->b) != '\n')
        dq_tbuf_putc(d->b, ' ');
      size_t mid = d->b->n;
      st = paragraph(d, k, in_cell);
      if (in_cell && d->b->n == mid) /* empty: undo the separator */
        dq_tbuf_truncate(d->b, before);
    } else if (is(k, "tbl")) {
      st = table(d, k, depth);
    } else if (is(k, "sdt")) {
      xmlNodePtr content = child(k, "sdtContent");
      if (content)
        st = block_items(d, content, in_cell, depth + 1);
    }
    if (st != DQ_OK)
      return st;
  }
  return DQ_OK;
}

/* The page headers and footers the sections' w:sectPr name
 * (w:headerReference, w:footerReference: w:hdr and w:ftr parts through
 * the document's relationships), each part once, headers first, after the
 * body under DQ_HF_HEADING (ingest_int.h): "[header] CONFIDENTIAL". */
static dq_status headers_footers(docx *d, xmlNodePtr body) {
  enum { MAX_PARTS = 64 };
  char rp[DQ_OPC_PATH_MAX], done[MAX_PARTS][DQ_OPC_PATH_MAX];
  size_t n_done = 0;
  xmlDocPtr rels = NULL;
  dq_status st = DQ_OK;
  if (!dq_opc_rels_of("word/document.xml", rp, sizeof rp) ||
      (st = dq_zip_xml(&d->z, rp, 0, &rels)) != DQ_OK || !rels)
    return st;
  dq_hf_begin(d->b, &d->hf, ++d->para_no, 0);
  for (int footer = 0; footer < 2 && st == DQ_OK; footer++) {
    d->prefix = footer ? "[footer] " : "[header] ";
    const char *ref = footer ? "footerReference" : "headerReference";
    /* the sections' properties: a paragraph's, the body's last */
    for (xmlNodePtr k = body->children; k && st == DQ_OK; k = k->next) {
      xmlNodePtr sect = is(k, "sectPr") ? k
                        : is(k, "p")    ? child(child(k, "pPr"), "sectPr")
                                        : NULL;
      for (xmlNodePtr r = sect ? sect->children : NULL; r && st == DQ_OK;
           r = r->next) {
        char part[DQ_OPC_PATH_MAX];
        const char *id = is(r, ref) ? dq_opc_rel_id(r) : NULL;
        if (!id || !dq_opc_rel_target(rels, "word/document.xml", id, NULL, part,
                                      sizeof part))
          continue;
        size_t i = 0;
        while (i < n_done && strcmp(done[i], part) != 0)
          i++;
        if (i < n_done || n_done == MAX_PARTS)
          continue;
        snprintf(done[n_done++], sizeof done[0], "%s", part);
        xmlDocPtr doc = NULL;
        if ((st = dq_zip_xml(&d->z, part, 0, &doc)) == DQ_OK && doc) {
          d->fld_depth = d->fld_page = d->fld_skip = 0;
          st = block_items(d, xmlDocGetRootElement(doc), 0, 0);
          if (st == DQ_OK)
            st = flush_notes(d);
        }
        xmlFreeDoc(doc);
      }
    }
  }
  d->prefix = NULL;
  dq_hf_end(d->b, &d->hf);
  xmlFreeDoc(rels);
  return st;
}

dq_status dq_read_docx(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
  docx d = {0};
  d.c = c;
  d.b = b;
  xmlDocPtr doc = NULL;
  dq_status st = dq_zip_open(&d.z, c, data, n, "a DOCX");
  if (st != DQ_OK)
    goto fail;
  d.fn.item = "footnote";
  d.fn.fmt = DQ_FMT_DECIMAL;
  d.en.item = "endnote";
  d.en.fmt = DQ_FMT_LROMAN;
  d.cm.item = "comment";
  if ((st = load_styles(&d)) != DQ_OK || (st = load_numbering(&d)) != DQ_OK ||
      (st = dq_zip_xml(&d.z, "word/footnotes.xml", 0, &d.fn.doc)) != DQ_OK ||
      (st = dq_zip_xml(&d.z, "word/endnotes.xml", 0, &d.en.doc)) != DQ_OK ||
      (st = dq_zip_xml(&d.z, "word/comments.xml", 0, &d.cm.doc)) != DQ_OK ||
      (st = dq_zip_xml(&d.z, "word/commentsExtended.xml", 0, &d.cm_ext)) !=
          DQ_OK ||
      (st = index_part(&d, d.fn.doc, "footnote", NULL, &d.fn.by_id,
                       &d.fn.n_by_id)) != DQ_OK ||
      (st = index_part(&d, d.en.doc, "endnote", NULL, &d.en.by_id,
                       &d.en.n_by_id)) != DQ_OK ||
      (st = index_part(&d, d.cm.doc, "comment", NULL, &d.cm.by_id,
                       &d.cm.n_by_id)) != DQ_OK ||
      (st = index_part(&d, d.cm_ext, "commentEx", "paraId", &d.ext,
                       &d.n_ext)) != DQ_OK)
    goto fail;
  if ((st = dq_zip_xml(&d.z, "word/document.xml", 1, &doc)) != DQ_OK)
    goto fail;
  xmlNodePtr body = child(xmlDocGetRootElement(doc), "body");
  if (!body) {
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: word/document.xml has no w:body", c->name);
    goto fail;
  }
  st = block_items(&d, body, 0, 0);
  if (st == DQ_OK)
    st = flush_notes(&d);
  if (st == DQ_OK)
    st = headers_footers(&d, body);
fail:
  xmlFreeDoc(doc);
  xmlFreeDoc(d.fn.doc);
  xmlFreeDoc(d.en.doc);
  xmlFreeDoc(d.cm.doc);
  xmlFreeDoc(d.cm_ext);
  free(d.fn.by_id);
  free(d.en.by_id);
  free(d.cm.by_id);
  free(d.ext);
  dq_zip_close(&d.z);
  free(d.styles);
  free(d.abs);
  free(d.nums);
  return st;
}
