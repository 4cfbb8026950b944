/*
 * tok_spm.c - SentencePiece-style BPE ("llama" tokenizers: Gemma), the way
 * llama.cpp runs it from GGUF metadata: spaces become U+2581 "▁", the text
 * starts as one symbol per UTF-8 character, and the adjacent pair whose
 * concatenation is a vocabulary entry with the highest score merges first
 * (leftmost on ties), through a binary heap of validated candidates.
 * Symbols left that are not in the vocabulary fall back to <0xXX> byte
 * tokens (then to single-byte tokens, then to the unknown token). Long
 * texts are cut before word-initial "▁" where no vocabulary entry can span
 * the cut, and repeated words come from a cache. The space prefix before
 * the first word is added by the caller (tok_vocab.c).
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

typedef struct {
  uint32_t off, len;
  int32_t prev, next;
} symbol;

typedef struct {
  float score;
  int32_t left, right;
  uint32_t size;
} bigram;

typedef struct {
  bigram *v;
  size_t n, cap;
} heap;

/* Max-heap on score; ties go to the smaller left index. */
static bool before(const bigram *a, const bigram *b) {
  return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static int heap_push(heap *h, bigram b) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 64;
    bigram *p = realloc(h->v, cap * sizeof *p);
    if (!p)
      return -1;
    h->v = p;
    h->cap = cap;
  }
  size_t i = h->n++;
  while (i > 0 && before(&b, &h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = b;
  return 0;
}

static bigram heap_pop(heap *h) {
  bigram top = h->v[0], last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
      c++;
    if (!before(&h->v[c], &last))
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n)
    h->v[i] = last;
  return top;
}

static int try_pair(const dq_tok *t, const char *buf, symbol *sym, heap *h,
                    int32_t l, int32_t r) {
  if (l < 0 || r < 0)
    return 0;
  uint32_t size = sym[l].len + sym[r].len;
  int32_t id = tok_map_get(&t->vocab, buf + sym[l].off, size);
  if (id < 0)
    return 0;
  return heap_push(h, (bigram){t->scores[id], l, r, size});
}

static int push_bytes(const dq_tok *t, const char *s, uint32_t n, tok_out *o) {
  for (uint32_t j = 0; j < n; j++) {
    uint8_t b = (uint8_t)s[j];
    int32_t id = t->byte_tok[b];
    if (id < 0)
      id = tok_map_get(&t->vocab, s + j, 1);
    if (id < 0)
      id = t->unk;
    if (id >= 0 && tok_out_push(o, id))
      return -1;
  }
  return 0;
}

/* Merges the symbols of buf[off..off+len) and appends their ids. */
static dq_status spm_chunk(const dq_tok *t, const char *buf, size_t off,
                           size_t len, symbol *sym, heap *h, tok_out *o) {
  int32_t n_sym = 0;
  for (size_t p = off; p < off + len;) {
    uint32_t k = tok_utf8_len((uint8_t)buf[p]);
    if (k > off + len - p)
      k = (uint32_t)(off + len - p);
    sym[n_sym] = (symbol){(uint32_t)p, k, n_sym - 1, n_sym + 1};
    n_sym++;
    p += k;
  }
  if (n_sym == 0)
    return DQ_OK;
  sym[n_sym - 1].next = -1;
  h->n = 0;
  for (int32_t i = 1; i < n_sym; i++)
    if (try_pair(t, buf, sym, h, i - 1, i))
      return DQ_ERR_NOMEM;
  while (h->n) {
    bigram bg = heap_pop(h);
    symbol *l = &sym[bg.left], *r = &sym[bg.right];
    if (l->len == 0 || r->len == 0 || l->len + r->len != bg.size)
      continue;
    l->len += r->len;
    r->len = 0;
    l->next = r->next;
    if (r->next >= 0)
      sym[r->next].prev = bg.left;
    if (try_pair(t, buf, sym, h, l->prev, bg.left) ||
        try_pair(t, buf, sym, h, bg.left, l->next))
      return DQ_ERR_NOMEM;
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    int32_t id = tok_map_get(&t->vocab, buf + sym[i].off, sym[i].len);
    if (id >= 0 ? tok_out_push(o, id)
                : push_bytes(t, buf + sym[i].off, sym[i].len, o))
      return DQ_ERR_NOMEM;
  }
  return DQ_OK;
}

/* Whether the text may be cut before the "▁" at buf[p] (see spm_find_cuts
 * in tok_vocab.c): merges never cross such a cut, so the pieces can be
 * tokenized (and cached) one by one with the same result. */
static bool cut_before(const dq_tok *t, const char *buf, size_t start,
                       size_t p, uint32_t prev_cp) {
  if (!t->spm_split || p == start || prev_cp == 0x2581 ||
      memcmp(buf + p, "\xe2\x96\x81", 3) != 0)
    return false;
  for (int m = 0; m < t->n_spm_keep; m++)
    if (t->spm_keep[m] == prev_cp)
      return false;
  return true;
}

dq_status tok_spm_encode(dq_tok *t, const char *text, size_t n, tok_out *o) {
  dq_status s = DQ_OK;
  heap h = {0};
  symbol *sym = NULL;
  tok_cache *c = NULL;
  /* escape spaces: ' ' -> U+2581 (3 bytes) */
  char *buf = malloc(3 * n + 1);
  if (!buf)
    return DQ_ERR_NOMEM;
  size_t blen = 0;
  for (size_t i = 0; i < n; i++) {
    if (text[i] == ' ') {
      memcpy(buf + blen, "\xe2\x96\x81", 3);
      blen += 3;
    } else {
      buf[blen++] = text[i];
    }
  }
  sym = malloc((blen ? blen : 1) * sizeof *sym);
  if (!sym) {
    s = DQ_ERR_NOMEM;
    goto done;
  }
  if (blen >= TOK_CACHE_MIN_BYTES)
    c = tok_cache_new();
  size_t start = 0;
  uint32_t prev = 0;
  for (size_t p = 0; p <= blen;) {
    if (p == blen || cut_before(t, buf, start, p, prev)) {
      int hit = tok_cache_get(c, buf + start, p - start, o);
      if (hit < 0) {
        s = DQ_ERR_NOMEM;
        goto done;
      }
      if (!hit) {
        size_t before = o->n;
        if ((s = spm_chunk(t, buf, start, p - start, sym, &h, o)))
          goto done;
        tok_cache_put(c, buf + start, p - start, o->ids + before,
                      o->n - before);
      }
      start = p;
      if (p == blen)
        break;
    }
    p += tok_utf8_decode((const uint8_t *)buf + p, blen - p, &prev);
  }
done:
  tok_cache_free(c);
  free(h.v);
  free(sym);
  free(buf);
  return s;
}
