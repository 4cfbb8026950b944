/*
 * read_epub.c - EPUB reader (.epub, e-books: EPUB 2 and 3): the zip
 * container through read_zip.c, the package through libxml2 (read_xml.c's
 * safe parse), each content document through read_xml.c's HTML reader.
 *
 * On-disk layout used here (EPUB 3.3, OCF and Packages; EPUB 2's OPF 2.0.1
 * is the same in these parts): a zip archive holding
 *   META-INF/container.xml  container/rootfiles/rootfile@full-path: the
 *                package document, its path from the zip's root (the first
 *                rootfile whose media-type is application/oebps-package+xml,
 *                else the first);
 *   the package (.opf)  package/manifest/item (@id, @href relative to the
 *                package's folder and percent-encoded, @media-type,
 *                @properties: "nav" marks EPUB 3's navigation document) and
 *                package/spine/itemref@idref: the reading order. An item's
 *                content is XHTML (application/xhtml+xml; text/html and
 *                EPUB 2's text/x-oeb1-document too).
 * The spine's content documents are read in its order, each once, as HTML
 * (the HTML parser, not XML: real books carry HTML entities such as &nbsp;
 * that an XML parse without the DTD would lose). Their <head> (its <title>
 * is the book's or the file's name, repeated in every part) is left out.
 * Left out too: the navigation document when the spine lists it (the
 * book's contents: every chapter's name in a few words, which search would
 * rank above the chapters), items of other media types (images, SVG), and
 * hrefs outside the archive (a scheme such as http:).
 *
 * Marks carry page 0 and `line` = the 1-based line of the extracted text
 * (dq_read_html_lines): a part's source lines start again at 1 in every
 * file, so they cannot place a passage in the book. A citation's lines are
 * then the book's paragraphs in reading order, as a DOCX's are.
 *
 * Bad input: no container, no rootfile, a package that is not XML, a spine
 * naming an item the manifest lacks or a part the zip lacks: an error
 * naming the file and the part. A chapter that META-INF/encryption.xml
 * lists as encrypted (DRM; a font's obfuscation is no matter) is refused
 * as unsupported, rather than read as noise. Limits: the zip's (read_zip.c:
 * part size, compression ratio), DQ_EPUB_MAX_ITEMS manifest items, and a part
 * that the spine names twice (or two items name) is read once (else one small
 * part, named a million times, would be unzipped a million times).
 */
#include "ingest_int.h"
#include "xml_names.h"

#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zip.h>

#define PART_PATH_MAX 1024 /* a part's path in the zip, bytes */
#define TOC_MAX 10000      /* contents entries used */
#define LABEL_MAX 200      /* bytes of a contents entry's label */

typedef struct item {
  const char *id, *href, *type, *props; /* into the package's tree */
} item;

static int cmp_item(const void *a, const void *b) {
  return strcmp(((const item *)a)->id, ((const item *)b)->id);
}

static const item *find_item(const item *v, size_t n, const char *id) {
  item key = {.id = id};
  return bsearch(&key, v, n, sizeof *v, cmp_item);
}

/* Whether space-separated `list` holds `word`. */
static int has_word(const char *list, const char *word) {
  size_t k = strlen(word);
  for (const char *p = list; p && *p;) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
      p++;
    size_t n = strcspn(p, " \t\n\r");
    if (n == k && strncmp(p, word, k) == 0)
      return 1;
    p += n;
  }
  return 0;
}

/* The zip path of `href` relative to the package at `opf` (its folder
 * prefixed, "." and ".." segments resolved, %XX decoded, any #fragment
 * or ?query dropped) into out[PART_PATH_MAX]. Returns 0 when it leaves
 * the archive (a scheme, ".." above its root, a NUL) or is too long. */
static int resolve(char *out, const char *opf, const char *href) {
  size_t colon = strcspn(href, ":/?#");
  if (href[colon] == ':')
    return 0; /* http:, file:, data: */
  char joined[PART_PATH_MAX];
  size_t nj = 0;
  if (href[0] != '/') { /* relative: from the package's folder */
    const char *slash = strrchr(opf, '/');
    nj = slash ? (size_t)(slash - opf) + 1 : 0;
    if (nj >= sizeof joined)
      return 0;
    memcpy(joined, opf, nj);
  }
  for (const char *p = href; *p && *p != '#' && *p != '?'; p++) {
    char ch = *p;
    if (ch == '%') {
      int hi = dq_hex_digit(p[1]), lo = hi < 0 ? -1 : dq_hex_digit(p[2]);
      if (lo < 0)
        return 0;
      ch = (char)(hi * 16 + lo);
      if (!ch)
        return 0;
      p += 2;
    }
    if (nj + 1 >= sizeof joined)
      return 0;
    joined[nj++] = ch;
  }
  joined[nj] = '\0';
  /* segments: "" and "." dropped, ".." removes the one before */
  size_t n = 0;
  for (char *seg = joined; seg;) {
    char *end = strchr(seg, '/');
    size_t len = end ? (size_t)(end - seg) : strlen(seg);
    if (len == 2 && seg[0] == '.' && seg[1] == '.') {
      if (n == 0)
        return 0;
      while (n > 0 && out[n - 1] != '/')
        n--;
      if (n > 0)
        n--; /* the slash before the removed segment */
    } else if (len && !(len == 1 && seg[0] == '.')) {
      if (n)
        out[n++] = '/';
      memcpy(out + n, seg, len);
      n += len;
    }
    seg = end ? end + 1 : NULL;
  }
  out[n] = '\0';
  return n > 0;
}

static int is_content(const item *it) {
  static const char *const TYPES[] = {"application/xhtml+xml", "text/html",
                                      "text/x-oeb1-document"};
  if (!it->type) { /* no media type: go by the name */
    const char *dot = strrchr(it->href, '.');
    return dot && (!strcasecmp(dot, ".xhtml") || !strcasecmp(dot, ".html") ||
                   !strcasecmp(dot, ".htm"));
  }
  for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
    if (strncasecmp(it->type, TYPES[i], strlen(TYPES[i])) == 0)
      return 1;
  return 0;
}

/* The package's path from META-INF/container.xml into out. */
static dq_status package_path(dq_zip *z, char *out) {
  const dq_reader_ctx *c = z->c;
  xmlDocPtr doc;
  dq_status st = dq_zip_xml(z, "META-INF/container.xml", 1, &doc);
  if (st != DQ_OK)
    return st;
  const char *path = NULL;
  xmlNodePtr files = child(xmlDocGetRootElement(doc), "rootfiles");
  for (xmlNodePtr k = files ? files->children : NULL; k; k = k->next) {
    if (!is(k, "rootfile") || !attr(k, "full-path"))
      continue;
    const char *type = attr(k, "media-type");
    if (!path || (type && !strcmp(type, "application/oebps-package+xml"))) {
      path = attr(k, "full-path");
      if (type && !strcmp(type, "application/oebps-package+xml"))
        break;
    }
  }
  if (!path)
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: not an EPUB file: META-INF/container.xml names "
                      "no package (no rootfile with a full-path)",
                      c->name);
  else if (!resolve(out, "", path))
    st = dq_error_set(c->err, DQ_ERR_FORMAT,
                      "%s: META-INF/container.xml names the package '%s', "
                      "a path outside the archive",
                      c->name, path);
  xmlFreeDoc(doc);
  return st;
}

/* The manifest's items, sorted by id, into *out (malloc'd). */
static dq_status manifest(dq_zip *z, const char *opf, xmlNodePtr pkg,
                          item **out, size_t *n_out) {
  const dq_reader_ctx *c = z->c;
  *out = NULL;
  *n_out = 0;
  xmlNodePtr m = child(pkg, "manifest");
  size_t n = 0;
  for (xmlNodePtr k = m ? m->children : NULL; k; k = k->next)
    if (is(k, "item") && attr(k, "id") && attr(k, "href"))
      n++;
  if (n > DQ_EPUB_MAX_ITEMS)
    return dq_error_set(c->err, DQ_ERR_LIMIT,
                        "%s: %s lists %zu items, over the limit of %u", c->name,
                        opf, n, DQ_EPUB_MAX_ITEMS);
  item *v = calloc(n ? n : 1, sizeof *v);
  if (!v)
    return dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  size_t i = 0;
  for (xmlNodePtr k = m ? m->children : NULL; k; k = k->next)
    if (is(k, "item") && attr(k, "id") && attr(k, "href"))
      v[i++] = (item){attr(k, "id"), attr(k, "href"), attr(k, "media-type"),
                      attr(k, "properties")};
  qsort(v, n, sizeof *v, cmp_item);
  *out = v;
  *n_out = n;
  return DQ_OK;
}

/* ---- the book's contents (nav or NCX): headings where a part has none */

typedef struct toc_entry {
  char *part;  /* its zip path */
  char *frag;  /* the id after '#', or NULL: the part's start */
  char *label; /* whitespace collapsed */
  int level;   /* 1 = top */
} toc_entry;

typedef struct toc {
  const char *doc; /* the contents document's path, hrefs' base */
  toc_entry *v;
  size_t n, cap;
  int oom;
} toc;

static void toc_free(toc *t) {
  for (size_t i = 0; i < t->n; i++) {
    free(t->v[i].part);
    free(t->v[i].frag);
    free(t->v[i].label);
  }
  free(t->v);
}

/* n's text, whitespace collapsed and trimmed, cut at LABEL_MAX bytes on
 * a character's start; malloc'd, NULL when empty. */
static char *label_of(xmlNodePtr n) {
  xmlChar *s = xmlNodeGetContent(n);
  char *out = s ? malloc(LABEL_MAX + 1) : NULL;
  size_t k = 0;
  const xmlChar *p = s;
  for (; out && *p; p++) {
    int blank = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
    if (blank && (k == 0 || out[k - 1] == ' '))
      continue;
    if (k == LABEL_MAX)
      break;
    out[k++] = blank ? ' ' : (char)*p;
  }
  if (out && k == LABEL_MAX && (*p & 0xC0) == 0x80) {
    while (k && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
      k--; /* a character cut in two: its lead byte goes too */
    if (k)
      k--;
  }
  xmlFree(s);
  if (!out)
    return NULL;
  while (k && out[k - 1] == ' ')
    k--;
  out[k] = '\0';
  if (!k) {
    free(out);
    return NULL;
  }
  return out;
}

static void toc_add(toc *t, xmlNodePtr label_node, const char *href,
                    int level) {
  char path[PART_PATH_MAX];
  if (t->oom || t->n >= TOC_MAX || !href || !resolve(path, t->doc, href))
    return;
  char *label = label_of(label_node);
  if (!label)
    return;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 64;
    toc_entry *v = realloc(t->v, cap * sizeof *v);
    if (!v) {
      free(label);
      t->oom = 1;
      return;
    }
    t->v = v;
    t->cap = cap;
  }
  const char *hash = strchr(href, '#');
  toc_entry *e = &t->v[t->n];
  *e = (toc_entry){strdup(path), hash && hash[1] ? strdup(hash + 1) : NULL,
                   label, level};
  if (!e->part || (hash && hash[1] && !e->frag)) {
    free(e->part);
    free(e->frag);
    free(label);
    t->oom = 1;
    return;
  }
  t->n++;
}

/* EPUB 3's navigation document: nav (epub:type "toc") / ol / li, each
 * with an a (or a span heading a group) and maybe an ol one level down. */
static void nav_list(toc *t, xmlNodePtr ol, int level) {
  if (level > (int)DQ_XML_MAX_DEPTH)
    return;
  for (xmlNodePtr li = ol->children; li; li = li->next) {
    if (!is(li, "li"))
      continue;
    xmlNodePtr a = child(li, "a");
    if (a)
      toc_add(t, a, attr(a, "href"), level);
    xmlNodePtr sub = child(li, "ol");
    if (sub)
      nav_list(t, sub, level + 1);
  }
}

static xmlNodePtr find_nav(xmlNodePtr n, unsigned depth) {
  for (xmlNodePtr k = n ? n->children : NULL; k && depth < DQ_XML_MAX_DEPTH;
       k = k->next) {
    if (is(k, "nav") && has_word(attr(k, "type"), "toc"))
      return k;
    xmlNodePtr hit =
        k->type == XML_ELEMENT_NODE ? find_nav(k, depth + 1) : NULL;
    if (hit)
      return hit;
  }
  return NULL;
}

/* EPUB 2's NCX: navMap / navPoint (navLabel/text, content@src), nested. */
static void ncx_points(toc *t, xmlNodePtr parent, int level) {
  if (level > (int)DQ_XML_MAX_DEPTH)
    return;
  for (xmlNodePtr p = parent->children; p; p = p->next) {
    if (!is(p, "navPoint"))
      continue;
    xmlNodePtr text = child(child(p, "navLabel"), "text");
    xmlNodePtr content = child(p, "content");
    if (text && content)
      toc_add(t, text, attr(content, "src"), level);
    ncx_points(t, p, level + 1);
  }
}

/* The contents from the nav document, else from the NCX (the spine's
 * toc item, else the manifest's NCX). A contents document that cannot be
 * read leaves the contents empty: the book is read without them. */
static void read_toc(dq_zip *z, const char *opf, xmlNodePtr spine,
                     const item *items, size_t n_items, toc *t) {
  const item *nav = NULL, *ncx = NULL;
  for (size_t i = 0; i < n_items; i++) {
    if (!nav && has_word(items[i].props, "nav"))
      nav = &items[i];
    if (!ncx && items[i].type &&
        !strcmp(items[i].type, "application/x-dtbncx+xml"))
      ncx = &items[i];
  }
  const char *toc_id = attr(spine, "toc");
  if (toc_id && find_item(items, n_items, toc_id))
    ncx = find_item(items, n_items, toc_id);
  char path[PART_PATH_MAX];
  for (int pass = 0; pass < 2 && t->n == 0; pass++) {
    const item *it = pass == 0 ? nav : ncx;
    xmlDocPtr doc = NULL;
    dq_error quiet = {0};
    dq_reader_ctx qc = *z->c;
    qc.err = &quiet; /* a broken contents document is no error */
    const dq_reader_ctx *saved = z->c;
    z->c = &qc;
    if (it && resolve(path, opf, it->href) &&
        dq_zip_xml(z, path, 0, &doc) == DQ_OK && doc) {
      t->doc = path;
      xmlNodePtr root = xmlDocGetRootElement(doc);
      if (pass == 0) {
        xmlNodePtr n = find_nav(root, 0), ol = child(n, "ol");
        if (ol)
          nav_list(t, ol, 1);
      } else if (child(root, "navMap")) {
        ncx_points(t, child(root, "navMap"), 1);
      }
    }
    z->c = saved;
    t->doc = NULL;
    xmlFreeDoc(doc);
  }
}

typedef struct found {
  size_t at;
  size_t entry;
} found;

static int cmp_found(const void *a, const void *b) {
  const found *x = a, *y = b;
  if (x->at != y->at)
    return x->at < y->at ? -1 : 1;
  return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- DRM: META-INF/encryption.xml ---- */

/* The parts that META-INF/encryption.xml lists as encrypted with more
 * than a font's obfuscation (IDPF's and Adobe's, which only scramble a
 * font's first bytes): a DRM'd book's chapters. Sorted, malloc'd. */
typedef struct locked {
  char **paths;
  size_t n;
  const char *algorithm; /* the first one's, for the message (static) */
} locked;

static void locked_free(locked *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->paths[i]);
  free(l->paths);
}

static dq_status read_locked(dq_zip *z, locked *l) {
  const dq_reader_ctx *c = z->c;
  static const char *const OBFUSCATION[] = {
      "http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"};
  xmlDocPtr doc;
  dq_status st = dq_zip_xml(z, "META-INF/encryption.xml", 0, &doc);
  if (st != DQ_OK || !doc)
    return st;
  xmlNodePtr root = xmlDocGetRootElement(doc);
  for (xmlNodePtr e = root ? root->children : NULL; e && st == DQ_OK;
       e = e->next) {
    if (!is(e, "EncryptedData"))
      continue;
    const char *alg = attr(child(e, "EncryptionMethod"), "Algorithm");
    int font = 0;
    for (size_t i = 0; alg && i < sizeof OBFUSCATION / sizeof *OBFUSCATION; i++)
      font |= strcmp(alg, OBFUSCATION[i]) == 0;
    const char *uri =
        attr(child(child(e, "CipherData"), "CipherReference"), "URI");
    char path[PART_PATH_MAX];
    if (font || !uri || !resolve(path, "", uri) || l->n >= TOC_MAX)
      continue;
    char **v = realloc(l->paths, (l->n + 1) * sizeof *v);
    char *dup = strdup(path);
    if (v)
      l->paths = v;
    if (!v || !dup) {
      free(dup);
      st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
      break;
    }
    l->paths[l->n++] = dup;
    if (!l->algorithm)
      l->algorithm = "an unknown cipher";
    if (alg && strstr(alg, "aes128"))
      l->algorithm = "AES-128";
    else if (alg && strstr(alg, "aes256"))
      l->algorithm = "AES-256";
  }
  xmlFreeDoc(doc);
  if (l->n)
    qsort(l->paths, l->n, sizeof *l->paths, cmp_str);
  return st;
}

/* One content document, appended to b. */
static dq_status read_part(dq_zip *z, const char *path, dq_tbuf *b,
                           dq_html_part *lines) {
  const dq_reader_ctx *c = z->c;
  char *buf;
  size_t n;
  dq_status st = dq_zip_read(z, path, 1, &buf, &n);
  if (st != DQ_OK)
    return st;
  /* messages name the part: "book.epub (OEBPS/ch1.xhtml): ..." */
  char name[PART_PATH_MAX + 512];
  snprintf(name, sizeof name, "%s (%s)", c->name, path);
  dq_reader_ctx pc = *c;
  pc.name = name;
  st = dq_read_html_lines(&pc, buf, n, b, lines);
  free(buf);
  return st;
}

/* Part `path` appended to b; where it has no heading of its own, the
 * contents entries that point into it are its headings, each at the line
 * of its element (its start for an entry without a fragment). */
static dq_status read_part_toc(dq_zip *z, const char *path, const toc *t,
                               dq_tbuf *b, dq_html_part *lines) {
  const dq_reader_ctx *c = z->c;
  size_t start = b->n, heads = b->n_heads, n_mine = 0, n_ids = 0;
  for (size_t i = 0; i < t->n; i++)
    n_mine += strcmp(t->v[i].part, path) == 0;
  if (!n_mine)
    return read_part(z, path, b, lines);
  const char **ids = malloc(n_mine * sizeof *ids);
  size_t *at = malloc(n_mine * sizeof *at);
  found *f = malloc(n_mine * sizeof *f);
  dq_status st = DQ_OK;
  if (!ids || !at || !f) {
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
    goto done;
  }
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].frag && strcmp(t->v[i].part, path) == 0)
      ids[n_ids++] = t->v[i].frag;
  qsort(ids, n_ids, sizeof *ids, cmp_str);
  size_t u = 0; /* unique ids */
  for (size_t i = 0; i < n_ids; i++)
    if (u == 0 || strcmp(ids[u - 1], ids[i]) != 0)
      ids[u++] = ids[i];
  for (size_t i = 0; i < u; i++)
    at[i] = SIZE_MAX;
  lines->ids = ids;
  lines->n_ids = u;
  lines->at = at;
  st = read_part(z, path, b, lines);
  lines->ids = NULL;
  lines->n_ids = 0;
  lines->at = NULL;
  if (st != DQ_OK || b->n_heads != heads)
    goto done;
  size_t n_found = 0;
  for (size_t i = 0; i < t->n; i++) {
    const toc_entry *e = &t->v[i];
    if (strcmp(e->part, path) != 0)
      continue;
    size_t off = start;
    if (e->frag) {
      const char **hit = bsearch(&e->frag, ids, u, sizeof *ids, cmp_str);
      off = at[hit - ids];
    }
    if (off >= b->n)
      continue; /* no such id, or nothing after it */
    while (off > start && b->text[off - 1] != '\n')
      off--;
    f[n_found++] = (found){off, i};
  }
  qsort(f, n_found, sizeof *f, cmp_found);
  for (size_t i = 0; i < n_found; i++) {
    const toc_entry *e = &t->v[f[i].entry];
    dq_tbuf_heading(b, f[i].at, e->level, e->label, strlen(e->label));
  }
done:
  free(ids);
  free(at);
  free(f);
  return st;
}

dq_status dq_read_epub(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
  dq_zip z;
  dq_status st = dq_zip_open(&z, c, data, n, "an EPUB");
  if (st != DQ_OK)
    return st;
  char opf[PART_PATH_MAX];
  xmlDocPtr pkg_doc = NULL;
  item *items = NULL;
  size_t n_items = 0;
  if ((st = package_path(&z, opf)) != DQ_OK ||
      (st = dq_zip_xml(&z, opf, 1, &pkg_doc)) != DQ_OK)
    goto done;
  xmlNodePtr pkg = xmlDocGetRootElement(pkg_doc);
  if ((st = manifest(&z, opf, pkg, &items, &n_items)) != DQ_OK)
    goto done;
  xmlNodePtr spine = child(pkg, "spine");
  if (!spine) {
    st = dq_error_set(c->err, DQ_ERR_FORMAT, "%s: %s has no spine", c->name,
                      opf);
    goto done;
  }
  locked drm = {0};
  if ((st = read_locked(&z, &drm)) != DQ_OK) {
    locked_free(&drm);
    goto done;
  }
  toc t = {0};
  read_toc(&z, opf, spine, items, n_items, &t);
  dq_html_part lines = {0}; /* b is empty (dq_read_buffer's) */
  /* parts read, by their index in the zip: each is read once, however
   * many items or itemrefs name it */
  zip_int64_t n_entries = zip_get_num_entries(z.za, 0);
  unsigned char *seen = calloc(n_entries > 0 ? (size_t)n_entries : 1, 1);
  if (!seen)
    st = dq_error_set(c->err, DQ_ERR_NOMEM, "%s: out of memory", c->name);
  for (xmlNodePtr k = spine->children; k && st == DQ_OK; k = k->next) {
    if (!is(k, "itemref"))
      continue;
    const char *idref = attr(k, "idref");
    item *it = idref ? (item *)find_item(items, n_items, idref) : NULL;
    if (!it) {
      st = dq_error_set(c->err, DQ_ERR_FORMAT,
                        "%s: %s: the spine names item '%s', which the "
                        "manifest lacks (line %ld)",
                        c->name, opf, idref ? idref : "", xmlGetLineNo(k));
      break;
    }
    char path[PART_PATH_MAX];
    if (has_word(it->props, "nav") || !is_content(it) ||
        !resolve(path, opf, it->href))
      continue; /* the contents, a picture, outside the archive */
    zip_int64_t idx = zip_name_locate(z.za, path, 0);
    if (idx >= 0 && idx < n_entries) {
      if (seen[idx])
        continue;
      seen[idx] = 1;
    }
    const char *key = path;
    if (drm.n && bsearch(&key, drm.paths, drm.n, sizeof *drm.paths, cmp_str)) {
      st = dq_error_set(c->err, DQ_ERR_UNSUPPORTED,
                        "%s: %s is encrypted (DRM, %s, named in "
                        "META-INF/encryption.xml); docqa reads e-books "
                        "without DRM",
                        c->name, path, drm.algorithm);
      break;
    }
    st = read_part_toc(&z, path, &t, b, &lines);
  }
  free(seen);
  toc_free(&t);
  locked_free(&drm);
done:
  free(items);
  xmlFreeDoc(pkg_doc);
  dq_zip_close(&z);
  return st;
}
