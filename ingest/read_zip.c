/*
 * read_zip.c - the zip container of DOCX, ODT, EPUB, PPTX and XLSX files
 * (read_docx.c, read_odt.c, read_epub.c, read_pptx.c, read_xlsx.c):
 * opening an archive held in memory
 * through libzip, and reading one part whole, as bytes or as parsed XML
 * (read_xml.c's safe parse), under the zip-bomb limits:
 *   - each part's declared size <= max_part_bytes (DQ_DOCX_MAX_PART_BYTES);
 *   - its declared ratio (size / compressed size) <= max_zip_ratio
 *     (DQ_DOCX_MAX_RATIO) once it is over RATIO_FLOOR_BYTES;
 *   - no part yields more bytes than it declared;
 *   - the running total of bytes unzipped over compressed bytes stays within
 *     the same ratio.
 * Messages name the file, the part and the limit. Also the list numbers
 * both formats write before numbered paragraphs (dq_format_counter), and
 * parts found through an OPC package's relationships (dq_opc_*: PPTX and
 * XLSX; a DOCX's parts are at fixed names).
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <ctype.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zip.h>

#define RATIO_FLOOR_BYTES                                                      \
  ((uint64_t)1 << 20) /* small parts may compress well */

dq_status dq_zip_open(dq_zip *d, const dq_reader_ctx *c, const char *data,
                      size_t n, const char *format) {
  memset(d, 0, sizeof *d);
  d->c = c;
  d->format = format;
  d->max_part =
      c->o->max_part_bytes ? c->o->max_part_bytes : DQ_DOCX_MAX_PART_BYTES;
  d->ratio = c->o->max_zip_ratio ? c->o->max_zip_ratio : DQ_DOCX_MAX_RATIO;
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(data, n, 0, &ze);
  if (src)
    d->za = zip_open_from_source(src, ZIP_RDONLY, &ze);
  dq_status st = DQ_OK;
  if (!d->za) {
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: not %s file: not a readable zip archive (%s)",
                      c->name, format, zip_error_strerror(&ze));
    zip_source_free(src);
  }
  zip_error_fini(&ze);
  return st;
}

void dq_zip_close(dq_zip *d) {
  if (d && d->za)
    zip_discard(d->za);
  if (d)
    d->za = NULL;
}

dq_status dq_zip_read(dq_zip *d, const char *part, int required, char **out,
                      size_t *out_bytes) {
  const dq_reader_ctx *c = d->c;
  *out = NULL;
  *out_bytes = 0;
  zip_int64_t idx = zip_name_locate(d->za, part, 0);
  if (idx < 0)
    return required ? dq_error_set(c->err, DQ_ERR_FORMAT,
                                   "%s: not %s file: no %s in the zip", c->name,
                                   d->format, part)
                    : DQ_OK;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(d->za, (zip_uint64_t)idx, 0, &st) != 0 ||
      !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
    return dq_error_set(c->err, DQ_ERR_CORRUPT, "%s: cannot stat %s: %s",
                        c->name, part, zip_strerror(d->za));
  if (st.size > d->max_part)
    return dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: %s unzips to %llu bytes, over the limit of %llu "
                        "bytes (max_part_bytes)",
                        c->name, part, (unsigned long long)st.size,
                        (unsigned long long)d->max_part);
  uint64_t comp = st.comp_size ? st.comp_size : 1;
  if (st.size > RATIO_FLOOR_BYTES && st.size / comp > d->ratio)
    return dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: %s compresses %llu:1, over the limit of %u:1 "
                        "(zip bomb?)",
                        c->name, part, (unsigned long long)(st.size / comp),
                        d->ratio);
  zip_file_t *zf = zip_fopen_index(d->za, (zip_uint64_t)idx, 0);
  if (!zf)
    return dq_error_set(c->err, DQ_ERR_CORRUPT, "%s: cannot open %s: %s",
                        c->name, part, zip_strerror(d->za));
  dq_status ret = DQ_OK;
  size_t size = (size_t)st.size, got = 0;
  char *buf = malloc(size + 1);
  if (!buf) {
    ret = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory for %s",
                       c->name, part);
    goto fail;
  }
  while (got < size) {
    zip_int64_t r = zip_fread(zf, buf + got, size - got);
    if (r < 0) {
      ret = dq_error_set(c->err, DQ_ERR_CORRUPT, "%s: cannot unzip %s: %s",
                         c->name, part, zip_file_strerror(zf));
      goto fail;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  char extra;
  if (got == size && zip_fread(zf, &extra, 1) > 0) {
    ret = dq_error_set(c->err, DQ_ERR_CORRUPT,
                       "%s: %s holds more than the %zu bytes its header "
                       "declares",
                       c->name, part, size);
    goto fail;
  }
  d->n_unzipped += got;
  d->n_zipped += comp;
  if (d->n_unzipped > RATIO_FLOOR_BYTES &&
      d->n_unzipped / d->n_zipped > d->ratio) {
    ret = dq_error_set(c->err, DQ_ERR_LIMIT,
                       "%s: parts unzip to %llu bytes from %llu, over the "
                       "ratio limit of %u:1 (zip bomb?)",
                       c->name, (unsigned long long)d->n_unzipped,
                       (unsigned long long)d->n_zipped, d->ratio);
    goto fail;
  }
  buf[got] = '\0';
  *out = buf;
  *out_bytes = got;
  buf = NULL;
fail:
  free(buf);
  zip_fclose(zf);
  return ret;
}

dq_status dq_zip_xml(dq_zip *d, const char *part, int required,
                     struct _xmlDoc **doc) {
  char *buf;
  size_t n;
  *doc = NULL;
  dq_status st = dq_zip_read(d, part, required, &buf, &n);
  if (st != DQ_OK || !buf)
    return st;
  st = dq_xml_parse(d->c, buf, n, part, doc);
  free(buf);
  return st;
}

void dq_format_counter(char *out, size_t cap, dq_num_fmt f, int v) {
  static const char *const R[] = {"m",  "cm", "d",  "cd", "c",  "xc", "l",
                                  "xl", "x",  "ix", "v",  "iv", "i"};
  static const int RV[] = {1000, 900, 500, 400, 100, 90, 50,
                           40,   10,  9,   5,   4,   1};
  out[0] = '\0';
  switch (f) {
  case DQ_FMT_NONE:
    return;
  case DQ_FMT_BULLET:
    snprintf(out, cap, "\xE2\x80\xA2");
    return;
  case DQ_FMT_LLETTER:
  case DQ_FMT_ULETTER: {
    if (v < 1 || v > 780) /* Word repeats the letter: a..z, aa..zz, ... */
      break;
    char ch = (char)((f == DQ_FMT_LLETTER ? 'a' : 'A') + (v - 1) % 26);
    size_t reps = (size_t)(v - 1) / 26 + 1, k = 0;
    for (; k < reps && k + 1 < cap; k++)
      out[k] = ch;
    out[k] = '\0';
    return;
  }
  case DQ_FMT_LROMAN:
  case DQ_FMT_UROMAN: {
    if (v < 1 || v > 3999)
      break;
    size_t k = 0;
    for (int i = 0; i < 13; i++)
      for (; v >= RV[i]; v -= RV[i])
        for (const char *p = R[i]; *p && k + 1 < cap; p++)
          out[k++] = f == DQ_FMT_UROMAN ? (char)(*p - 'a' + 'A') : *p;
    out[k] = '\0';
    return;
  }
  case DQ_FMT_DECIMAL:
    break;
  }
  snprintf(out, cap, "%d", v);
}

/* ---- Open Packaging Conventions: parts named by relationships ---- */

/* The folder of part `path` ("ppt/slides/" of "ppt/slides/slide1.xml"; ""
 * at the root), its length. */
static size_t dir_len(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? (size_t)(slash - path) + 1 : 0;
}

/* The part a relationship's target names: `target` relative to the folder
 * of part `from` (from the root when it starts with '/'), with "." and
 * ".." resolved, into out. 0 when it leaves the package, is empty or is
 * too long. */
int dq_opc_resolve(const char *from, const char *target, char *out,
                   size_t cap) {
  char joined[2 * DQ_OPC_PATH_MAX];
  if (!target || !target[0])
    return 0;
  size_t dl = target[0] == '/' ? 0 : dir_len(from);
  size_t tl = strlen(target);
  if (dl + tl >= sizeof joined)
    return 0;
  memcpy(joined, from, dl);
  memcpy(joined + dl, target, tl + 1);
  /* segments, "." dropped and ".." taking the one before back */
  size_t n = 0;
  for (const char *s = joined; *s;) {
    const char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 2 && s[0] == '.' && s[1] == '.') {
      if (!n)
        return 0; /* above the package's root */
      while (n && out[n - 1] != '/')
        n--;
      n = n ? n - 1 : 0; /* the '/' before it */
      while (n && out[n - 1] != '/')
        n--;
    } else if (len && !(len == 1 && s[0] == '.')) {
      if (n + len + 1 >= cap)
        return 0;
      memcpy(out + n, s, len);
      n += len;
      if (e)
        out[n++] = '/';
    }
    s += len + (e != NULL);
  }
  if (n && out[n - 1] == '/')
    n--;
  out[n] = '\0';
  return n > 0;
}

/* The rels part of part `path`: "ppt/_rels/presentation.xml.rels". */
int dq_opc_rels_of(const char *path, char *out, size_t cap) {
  size_t dl = dir_len(path);
  int w = snprintf(out, cap, "%.*s_rels/%s.rels", (int)dl, path, path + dl);
  return w > 0 && (size_t)w < cap;
}

/* The target of the first relationship in rels with Id `id` and whose
 * type ends in "/" `type` (either NULL: any), resolved against part
 * `from`, into out. External targets (hyperlinks) are none. */
int dq_opc_rel_target(xmlDocPtr rels, const char *from, const char *id,
                      const char *type, char *out, size_t cap) {
  xmlNodePtr root = rels ? xmlDocGetRootElement(rels) : NULL;
  for (xmlNodePtr r = root ? root->children : NULL; r; r = r->next) {
    if (!is(r, "Relationship"))
      continue;
    const char *mode = attr(r, "TargetMode");
    if (mode && !strcmp(mode, "External"))
      continue;
    const char *rid = attr(r, "Id");
    if (id && (!rid || strcmp(rid, id) != 0))
      continue;
    const char *t = attr(r, "Type");
    size_t tl = t ? strlen(t) : 0, wl = type ? strlen(type) : 0;
    if (type &&
        (tl <= wl || t[tl - wl - 1] != '/' || strcmp(t + tl - wl, type)))
      continue;
    return dq_opc_resolve(from, attr(r, "Target"), out, cap);
  }
  return 0;
}

dq_status dq_opc_main(dq_zip *z, const char *dflt, char *main, char *rp,
                      struct _xmlDoc **doc, struct _xmlDoc **rels) {
  *doc = *rels = NULL;
  xmlDocPtr top = NULL;
  snprintf(main, DQ_OPC_PATH_MAX, "%s", dflt);
  dq_status st = dq_zip_xml(z, "_rels/.rels", 0, &top);
  if (st != DQ_OK)
    return st;
  char named[DQ_OPC_PATH_MAX];
  if (dq_opc_rel_target(top, "", NULL, "officeDocument", named, sizeof named))
    memcpy(main, named, sizeof named);
  xmlFreeDoc(top);
  if ((st = dq_zip_xml(z, main, 1, doc)) != DQ_OK)
    return st;
  if (!dq_opc_rels_of(main, rp, DQ_OPC_PATH_MAX))
    return dq_error_set(z->c->err, DQ_ERR_FORMAT,
                        "%s: not %s file: the name of %s is too long",
                        z->c->name, z->format, main);
  return dq_zip_xml(z, rp, 1, rels);
}

/* A p:sldId's r:id: the "id" attribute in the relationships namespace
 * (p:sldId also has a plain numeric "id"). */
const char *dq_opc_rel_id(xmlNodePtr n) {
  for (xmlAttrPtr a = n->properties; a; a = a->next)
    if (!strcmp((const char *)a->name, "id") && a->ns && a->ns->href &&
        strstr((const char *)a->ns->href, "relationships") && a->children &&
        a->children->type == XML_TEXT_NODE)
      return (const char *)a->children->content;
  return NULL;
}

/* ---- page headers and footers (read_docx.c, read_odt.c) ---- */

int dq_hf_line(dq_tbuf *b, dq_hf *h, size_t start, size_t from) {
  const char *text = b->oom ? NULL : b->text + from;
  size_t n = b->n - from;
  /* a word other than "page", "of", "pg" */
  int worth = 0;
  for (size_t i = 0; text && i < n && !worth;) {
    if (!isalpha((unsigned char)text[i]) && !((unsigned char)text[i] & 0x80)) {
      i++;
      continue;
    }
    size_t k = i;
    while (k < n &&
           (isalpha((unsigned char)text[k]) || ((unsigned char)text[k] & 0x80)))
      k++;
    size_t len = k - i;
    worth = !((len == 4 && !strncasecmp(text + i, "page", 4)) ||
              (len == 2 && !strncasecmp(text + i, "of", 2)) ||
              (len == 2 && !strncasecmp(text + i, "pg", 2)));
    i = k;
  }
  uint64_t hash = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; worth && i < n; i++)
    hash = (hash ^ (unsigned char)text[i]) * 1099511628211ull;
  for (size_t i = 0; worth && i < h->n_seen; i++)
    worth = h->seen[i] != hash;
  if (!worth || h->n_seen == DQ_HF_MAX_LINES) {
    dq_tbuf_truncate(b, start);
    return 0;
  }
  h->seen[h->n_seen++] = hash;
  return 1;
}

int dq_page_field(const char *instr) {
  while (*instr == ' ' || *instr == '\t')
    instr++;
  static const char *const names[] = {"PAGE", "NUMPAGES", "SECTIONPAGES"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t k = strlen(names[i]);
    if (!strncasecmp(instr, names[i], k) &&
        (instr[k] == '\0' || instr[k] == ' ' || instr[k] == '\t' ||
         instr[k] == '\\'))
      return 1;
  }
  return 0;
}

void dq_hf_begin(dq_tbuf *b, dq_hf *h, uint32_t line, uint32_t page) {
  dq_tbuf_newline(b);
  h->n_seen = 0;
  h->at = b->n;
  h->heads = b->n_heads;
  dq_tbuf_pos(b, line, page);
  size_t start = b->n;
  dq_tbuf_put(b, DQ_HF_HEADING, strlen(DQ_HF_HEADING));
  if (!b->oom)
    dq_tbuf_heading(b, start, 1, b->text + start, b->n - start);
  dq_tbuf_putc(b, '\n');
}

void dq_hf_end(dq_tbuf *b, dq_hf *h) {
  if (h->n_seen) /* a line kept */
    return;
  while (b->n_heads > h->heads)
    free(b->heads[--b->n_heads].title);
  dq_tbuf_truncate(b, h->at);
}
