/*
 * read_cfb.c - the Compound File Binary container ([MS-CFB]) of Outlook
 * messages (read_msg.c) and Word 97-2003 documents (read_doc.c).
 *
 * The container: a 512-byte header (signature D0 CF 11 E0 A1 B1 1A E1,
 * version 3 with 512-byte sectors or 4 with 4096-byte ones), sectors
 * chained by the FAT (whose own sectors the header's DIFAT and the DIFAT
 * sectors list), a directory of 128-byte entries (a UTF-16 name, a type:
 * storage, stream or root; a red-black tree of siblings and a storage's
 * child; a stream's first sector and size), and streams under 4096 bytes
 * kept in the mini stream (the root entry's stream) in 64-byte sectors
 * chained by the mini FAT. Every sector number, chain, size and tree link
 * is checked: a chain that leaves the file or loops, a size the chain
 * cannot hold, a tree that loops is an error naming the file, never a
 * read out of bounds.
 */
#include "ingest_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CFB_MAXREGSECT 0xFFFFFFFAu
#define CFB_NOSTREAM 0xFFFFFFFFu
#define CFB_MAX_ENTRIES 100000 /* directory entries read */

static const unsigned char CFB_MAGIC[8] = {0xD0, 0xCF, 0x11, 0xE0,
                                           0xA1, 0xB1, 0x1A, 0xE1};

int dq_cfb_magic(const void *data, size_t n) {
  return n >= 8 && memcmp(data, CFB_MAGIC, 8) == 0;
}


dq_status dq_cfb_bad(const dq_cfb *f, const char *what) {
  return dq_error_set(f->c->err, DQ_ERR_FORMAT, "%s: not a readable %s: %s",
                      f->c->name, f->format, what);
}

static dq_status nomem(const dq_cfb *f) {
  return dq_error_set(f->c->err, DQ_ERR_NOMEM, "%s: out of memory", f->c->name);
}

/* Sector s's bytes, or NULL when it lies past the file. A file cut
 * inside its last sector (writers that do not pad it: Excel's, POI's
 * test files) has that sector read as far as it goes, zeros after. */
static const unsigned char *sector(const dq_cfb *f, uint32_t s) {
  if (s >= f->n_secs)
    return NULL;
  if (f->tail && s == f->n_secs - 1)
    return f->tail;
  return f->d + ((size_t)s + 1) * f->sec;
}

/* Follows the chain from `start` through `next` (n_next entries) over the
 * file's sectors, or the mini stream's 64-byte ones (`mini`), copying
 * `size` bytes (UINT64_MAX: to the chain's end). Checks each link; a
 * sector met twice is a loop. */
static dq_status read_chain(dq_cfb *f, uint32_t start, uint64_t size,
                            const uint32_t *next, size_t n_next, int mini,
                            unsigned char **out, size_t *n_out) {
  size_t unit = mini ? 64 : f->sec;
  size_t cap_secs = mini ? f->n_ministream / 64 : f->n_secs;
  if (size != UINT64_MAX && size > (uint64_t)cap_secs * unit)
    return dq_cfb_bad(f, "a stream larger than the file");
  size_t want = size == UINT64_MAX ? cap_secs * unit : (size_t)size;
  unsigned char *buf = malloc(want ? want : 1);
  unsigned char *met = calloc(n_next / 8 + 1, 1);
  if (!buf || !met) {
    free(buf);
    free(met);
    return nomem(f);
  }
  size_t got = 0;
  uint32_t s = start;
  while (got < want && s != CFB_ENDOFCHAIN) {
    int off_file = s > CFB_MAXREGSECT || s >= n_next;
    if (off_file || met[s / 8] & (1u << (s % 8))) {
      free(buf);
      free(met);
      return dq_cfb_bad(f, off_file ? "a sector chain leaves the file"
                             : "a sector chain loops");
    }
    met[s / 8] |= (unsigned char)(1u << (s % 8));
    const unsigned char *src;
    if (mini) {
      if ((size_t)s * 64 + 64 > f->n_ministream) {
        free(buf);
        free(met);
        return dq_cfb_bad(f, "a mini sector past the mini stream");
      }
      src = f->ministream + (size_t)s * 64;
    } else if (!(src = sector(f, s))) {
      free(buf);
      free(met);
      return dq_cfb_bad(f, "a sector past the end of the file (truncated?)");
    }
    size_t k = want - got < unit ? want - got : unit;
    memcpy(buf + got, src, k);
    got += k;
    s = next[s];
  }
  free(met);
  if (size != UINT64_MAX && got < want) {
    free(buf);
    return dq_cfb_bad(f, "a stream's chain ends before its size");
  }
  *out = buf;
  *n_out = got;
  return DQ_OK;
}

dq_status dq_cfb_open(dq_cfb *f, const dq_reader_ctx *c, const char *data,
                      size_t n, const char *format) {
  memset(f, 0, sizeof *f);
  f->c = c;
  f->format = format;
  f->d = (const unsigned char *)data;
  f->n = n;
  const unsigned char *h = f->d;
  if (n < 512 || !dq_cfb_magic(h, n))
    return dq_cfb_bad(f, "no compound file header");
  unsigned shift = dq_le16(h + 0x1E);
  if (dq_le16(h + 0x1C) != 0xFFFE || (shift != 9 && shift != 12) ||
      dq_le16(h + 0x20) != 6)
    return dq_cfb_bad(f, "an unknown sector size or byte order");
  f->sec = (size_t)1 << shift;
  if (n < f->sec)
    return dq_cfb_bad(f, "shorter than its header");
  f->n_secs =
      (uint32_t)((n - f->sec) / f->sec > 0xFFFFFFF0u ? 0xFFFFFFF0u
                                                     : (n - f->sec) / f->sec);
  size_t part = (n - f->sec) % f->sec;
  if (part && f->n_secs < 0xFFFFFFF0u) {
    if (!(f->tail = calloc(1, f->sec)))
      return nomem(f);
    memcpy(f->tail, f->d + f->sec * ((size_t)f->n_secs + 1), part);
    f->n_secs++;
  }
  f->cutoff = dq_le32(h + 0x38);
  uint32_t n_fat_secs = dq_le32(h + 0x2C);
  if (n_fat_secs > f->n_secs + 1u)
    return dq_cfb_bad(f, "more FAT sectors than the file holds");
  /* the FAT's sectors: 109 in the header, the rest in DIFAT sectors */
  size_t per = f->sec / 4;
  f->n_fat = (size_t)n_fat_secs * per;
  f->fat = malloc((f->n_fat ? f->n_fat : 1) * sizeof *f->fat);
  if (!f->fat)
    return nomem(f);
  uint32_t difat = dq_le32(h + 0x44), steps = 0;
  const unsigned char *list = h + 0x4C;
  size_t in_list = 109, li = 0;
  for (uint32_t k = 0; k < n_fat_secs; k++, li++) {
    if (li == in_list) { /* the next DIFAT sector */
      if (++steps > f->n_secs || !(list = sector(f, difat)))
        return dq_cfb_bad(f, "a DIFAT chain leaves the file or loops");
      difat = dq_le32(list + f->sec - 4);
      in_list = per - 1;
      li = 0;
    }
    const unsigned char *fs = sector(f, dq_le32(list + 4 * li));
    if (!fs)
      return dq_cfb_bad(f, "a FAT sector past the end of the file (truncated?)");
    for (size_t i = 0; i < per; i++)
      f->fat[(size_t)k * per + i] = dq_le32(fs + 4 * i);
  }
  /* the directory */
  unsigned char *dir;
  size_t n_dir;
  dq_status st = read_chain(f, dq_le32(h + 0x30), UINT64_MAX, f->fat, f->n_fat, 0,
                            &dir, &n_dir);
  if (st != DQ_OK)
    return st;
  f->n_e = n_dir / 128 < CFB_MAX_ENTRIES ? n_dir / 128 : CFB_MAX_ENTRIES;
  f->e = calloc(f->n_e ? f->n_e : 1, sizeof *f->e);
  if (!f->e) {
    free(dir);
    return nomem(f);
  }
  for (size_t i = 0; i < f->n_e; i++) {
    const unsigned char *p = dir + i * 128;
    dq_cfb_entry *e = &f->e[i];
    size_t len = dq_le16(p + 64);
    len = len > 64 ? 64 : len;
    size_t k = 0;
    for (size_t j = 0; j + 1 < len && k + 1 < sizeof e->name; j += 2) {
      uint16_t ch = dq_le16(p + j);
      if (!ch)
        break;
      e->name[k++] = ch >= 0x20 && ch < 0x7F ? (char)ch : '?';
    }
    e->name[k] = '\0';
    e->type = p[66];
    e->left = dq_le32(p + 68);
    e->right = dq_le32(p + 72);
    e->child = dq_le32(p + 76);
    e->start = dq_le32(p + 116);
    e->size = dq_le64(p + 120);
    if (f->sec == 512) /* version 3: the high half may hold junk */
      e->size &= 0xFFFFFFFFu;
  }
  free(dir);
  if (!f->n_e || f->e[0].type != 5)
    return dq_cfb_bad(f, "no root entry");
  /* the mini stream (the root's stream) and its FAT */
  if (f->e[0].size && f->e[0].start != CFB_ENDOFCHAIN) {
    st = read_chain(f, f->e[0].start, f->e[0].size, f->fat, f->n_fat, 0,
                    &f->ministream, &f->n_ministream);
    if (st != DQ_OK)
      return st;
  }
  uint32_t n_mini = dq_le32(h + 0x40);
  if (n_mini) {
    if (n_mini > f->n_secs)
      return dq_cfb_bad(f, "more mini FAT sectors than the file holds");
    unsigned char *mf;
    size_t n_mf;
    st = read_chain(f, dq_le32(h + 0x3C), (uint64_t)n_mini * f->sec, f->fat,
                    f->n_fat, 0, &mf, &n_mf);
    if (st != DQ_OK)
      return st;
    f->n_minifat = n_mf / 4;
    f->minifat = malloc((f->n_minifat ? f->n_minifat : 1) * 4);
    if (!f->minifat) {
      free(mf);
      return nomem(f);
    }
    for (size_t i = 0; i < f->n_minifat; i++)
      f->minifat[i] = dq_le32(mf + 4 * i);
    free(mf);
  }
  return DQ_OK;
}

void dq_cfb_close(dq_cfb *f) {
  free(f->tail);
  free(f->fat);
  free(f->minifat);
  free(f->ministream);
  free(f->e);
}

/* The children of storage s (malloc'd, *n of them): the tree of
 * siblings under its child, walked through left and right with each entry
 * visited once, so a tree that loops or is not balanced still ends. NULL
 * with *n 0 when it has none or memory runs out. */
uint32_t *dq_cfb_children(dq_cfb *f, size_t s, size_t *n) {
  *n = 0;
  uint32_t first = f->e[s].child;
  if (first >= f->n_e || f->visits > CFB_MAX_VISITS)
    return NULL;
  uint32_t *out = malloc(f->n_e * sizeof *out);
  uint32_t *todo = malloc(f->n_e * sizeof *todo);
  unsigned char *seen = calloc(f->n_e, 1);
  if (!out || !todo || !seen) {
    free(out);
    free(todo);
    free(seen);
    return NULL;
  }
  size_t top = 0;
  todo[top++] = first;
  seen[first] = 1;
  while (top) {
    uint32_t at = todo[--top];
    out[(*n)++] = at;
    f->visits++;
    uint32_t side[2] = {f->e[at].left, f->e[at].right};
    for (int k = 0; k < 2; k++)
      if (side[k] < f->n_e && !seen[side[k]]) {
        seen[side[k]] = 1;
        todo[top++] = side[k];
      }
  }
  free(todo);
  free(seen);
  return out;
}

/* The entry named `name` (ASCII, case folded) among storage s's children,
 * or -1. */
long dq_cfb_child_named(dq_cfb *f, size_t s, const char *name) {
  size_t n;
  uint32_t *kids = dq_cfb_children(f, s, &n);
  long found = -1;
  for (size_t i = 0; i < n && found < 0; i++)
    if (!strcasecmp(f->e[kids[i]].name, name))
      found = kids[i];
  free(kids);
  return found;
}

/* The bytes of stream entry i (malloc'd). */
dq_status dq_cfb_stream(dq_cfb *f, size_t i, unsigned char **out,
                        size_t *n) {
  const dq_cfb_entry *e = &f->e[i];
  if (e->type != 2)
    return dq_cfb_bad(f, "an entry read as a stream is none");
  if (e->size < f->cutoff)
    return read_chain(f, e->start, e->size, f->minifat, f->n_minifat, 1, out,
                      n);
  return read_chain(f, e->start, e->size, f->fat, f->n_fat, 0, out, n);
}
