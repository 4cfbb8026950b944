/*
 * tok_bpe.c - byte-level BPE ("gpt2" tokenizers: SmolLM2, Qwen2, Llama 3).
 *
 * A raw-text fragment goes through three steps, as in llama.cpp:
 *  1. pre-tokenization: the regexes named by tokenizer.ggml.pre split the
 *     text into words; each regex is applied in turn to every piece the
 *     previous one produced, keeping both matches and the text between them
 *     (PCRE2 with Unicode properties, JIT-compiled when available);
 *  2. every byte of a word is mapped to GPT-2's printable byte alphabet;
 *  3. adjacent symbols are merged by merge rank (lowest first, leftmost on
 *     ties) using a binary heap of candidate pairs, each validated when
 *     popped, so a word of n characters costs O(n log n); long inputs
 *     also keep a bounded word -> ids cache, so 1 MB takes a fraction of a
 *     second.
 * Invalid UTF-8 is replaced by U+FFFD before splitting (llama.cpp does the
 * same). Not here: special tokens (tok_vocab.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* Pre-tokenizer regexes, from llama.cpp's llama-vocab.cpp per `pre` type. */
#define RE_GPT2                                                                \
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define RE_LLAMA3                                                              \
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|"                 \
  "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"  \
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define RE_QWEN2                                                               \
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|"                 \
  "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"       \
  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

typedef struct {
  const char *names; /* space-separated tokenizer.ggml.pre values */
  const char *re[TOK_MAX_REGEX];
  bool ignore_merges;
} pre_def;

static const pre_def pre_defs[] = {
    {" default ",
     {"[\\p{P}\\$\\+<=>\\^~\\|]+", RE_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"},
     false},
    {" gpt-2 gpt2 mpt olmo jais ", {RE_GPT2}, false},
    {" smollm starcoder refact command-r codeshell exaone minerva ",
     {"\\p{N}", RE_GPT2},
     false},
    {" llama3 llama-bpe llama-v3 dbrx smaug-bpe ", {RE_LLAMA3}, true},
    {" qwen2 stablelm2 deepseek-r1-qwen ", {RE_QWEN2}, false},
};

dq_status tok_bpe_init(dq_tok *t, dq_gguf *g, dq_error *err) {
  dq_status s;
  /* GPT-2 byte alphabet: printable Latin-1 maps to itself, the rest to
   * U+0100 onwards in byte order. */
  for (int i = 0; i < 324; i++)
    t->chr_byte[i] = -1;
  int next = 256;
  for (int b = 0; b < 256; b++) {
    bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) ||
                     (b >= 174 && b <= 255);
    int cp = printable ? b : next++;
    t->byte_chr_len[b] = (uint8_t)tok_utf8_encode((uint32_t)cp, t->byte_chr[b]);
    t->chr_byte[cp] = (int16_t)b;
    char one[5] = {0};
    memcpy(one, t->byte_chr[b], t->byte_chr_len[b]);
    t->byte_tok[b] = dq_tok_find(t, one);
  }

  const char *const *strs;
  const uint32_t *lens;
  uint64_t n;
  if ((s = dq_gguf_get_arr_str(g, "tokenizer.ggml.merges", &strs, &lens, &n)))
    return dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
  if (n > DQ_TOK_MAX_VOCAB)
    return dq_error_set(err, DQ_ERR_LIMIT, "%s: %llu merges (limit %d)",
                        dq_gguf_path(g), (unsigned long long)n,
                        DQ_TOK_MAX_VOCAB);
  uint64_t pool = 0;
  for (uint64_t i = 0; i < n; i++)
    pool += lens[i] + 1;
  t->merge_pool = malloc(pool ? pool : 1);
  if (!t->merge_pool || tok_map_init(&t->merges, (uint32_t)n))
    return dq_error_set(err, DQ_ERR_NOMEM, "tokenizer merges");
  char *p = t->merge_pool;
  for (uint64_t i = 0; i < n; i++) {
    memcpy(p, strs[i], lens[i] + 1);
    if (!memchr(p, ' ', lens[i]))
      return dq_error_set(err, DQ_ERR_CORRUPT,
                          "%s: tokenizer.ggml.merges[%llu] '%.64s' has no "
                          "space",
                          dq_gguf_path(g), (unsigned long long)i, p);
    tok_map_put(&t->merges, p, lens[i], (int32_t)i);
    p += lens[i] + 1;
  }

  char key[80];
  snprintf(key, sizeof key, " %s ", t->pre);
  const pre_def *def = NULL;
  for (size_t i = 0; i < sizeof pre_defs / sizeof *pre_defs; i++)
    if (strstr(pre_defs[i].names, key))
      def = &pre_defs[i];
  if (!def)
    return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                        "%s: tokenizer.ggml.pre '%s' is not supported "
                        "(supported: default, gpt2, smollm, llama-bpe, "
                        "qwen2 and their aliases)",
                        dq_gguf_path(g), t->pre);
  for (int i = 0; i < TOK_MAX_REGEX && def->re[i]; i++) {
    int ecode;
    PCRE2_SIZE eoff;
    t->re[i] = pcre2_compile((PCRE2_SPTR)def->re[i], PCRE2_ZERO_TERMINATED,
                             PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK,
                             &ecode, &eoff, NULL);
    if (!t->re[i])
      return dq_error_set(err, DQ_ERR_INTERNAL,
                          "pre-tokenizer regex %d of '%s' does not compile "
                          "(PCRE2 error %d at %zu)",
                          i, t->pre, ecode, (size_t)eoff);
    t->n_re = i + 1;
    pcre2_jit_compile(t->re[i], PCRE2_JIT_COMPLETE); /* falls back silently */
  }
  t->ignore_merges = def->ignore_merges;
  return DQ_OK;
}

void tok_bpe_free(dq_tok *t) {
  for (int i = 0; i < t->n_re; i++)
    pcre2_code_free(t->re[i]);
  tok_map_free(&t->merges);
  free(t->merge_pool);
}

/* ---- merging one word ---------------------------------------------------- */

typedef struct {
  uint32_t off, len;
  int32_t prev, next;
} symbol;

typedef struct {
  int32_t rank, left, right;
  uint32_t size; /* left.len + right.len when pushed: detects stale pairs */
} bigram;

/* Scratch space reused across the words of one call. */
typedef struct {
  char *buf; /* the word in the byte alphabet */
  size_t buf_cap;
  symbol *sym;
  size_t sym_cap;
  bigram *heap;
  size_t n_heap, heap_cap;
  char *key;
  size_t key_cap;
} scratch;

static bool heap_less(const bigram *a, const bigram *b) {
  return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static int heap_push(scratch *w, bigram b) {
  if (w->n_heap == w->heap_cap) {
    size_t cap = w->heap_cap ? w->heap_cap * 2 : 64;
    bigram *p = realloc(w->heap, cap * sizeof *p);
    if (!p)
      return -1;
    w->heap = p;
    w->heap_cap = cap;
  }
  size_t i = w->n_heap++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!heap_less(&b, &w->heap[parent]))
      break;
    w->heap[i] = w->heap[parent];
    i = parent;
  }
  w->heap[i] = b;
  return 0;
}

static bigram heap_pop(scratch *w) {
  bigram top = w->heap[0], last = w->heap[--w->n_heap];
  size_t i = 0, n = w->n_heap;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && heap_less(&w->heap[c + 1], &w->heap[c]))
      c++;
    if (!heap_less(&w->heap[c], &last))
      break;
    w->heap[i] = w->heap[c];
    i = c;
  }
  if (n)
    w->heap[i] = last;
  return top;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 64;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}

/* Pushes the pair (l, r) if its merge exists. */
static int try_pair(const dq_tok *t, scratch *w, int32_t l, int32_t r) {
  if (l < 0 || r < 0)
    return 0;
  const symbol *a = &w->sym[l], *b = &w->sym[r];
  size_t klen = (size_t)a->len + 1 + b->len;
  if (grow((void **)&w->key, &w->key_cap, klen, 1))
    return -1;
  memcpy(w->key, w->buf + a->off, a->len);
  w->key[a->len] = ' ';
  memcpy(w->key + a->len + 1, w->buf + b->off, b->len);
  int32_t rank = tok_map_get(&t->merges, w->key, (uint32_t)klen);
  if (rank < 0)
    return 0;
  return heap_push(w, (bigram){rank, l, r, a->len + b->len});
}

static dq_status bpe_word(const dq_tok *t, scratch *w, const char *word,
                          size_t n, tok_out *o) {
  /* into the byte alphabet */
  if (grow((void **)&w->buf, &w->buf_cap, 2 * n + 1, 1))
    return DQ_ERR_NOMEM;
  size_t blen = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t b = (uint8_t)word[i];
    memcpy(w->buf + blen, t->byte_chr[b], t->byte_chr_len[b]);
    blen += t->byte_chr_len[b];
  }
  if (t->ignore_merges) { /* Llama 3: a word in the vocabulary is kept */
    int32_t id = tok_map_get(&t->vocab, w->buf, (uint32_t)blen);
    if (id >= 0)
      return tok_out_push(o, id) ? DQ_ERR_NOMEM : DQ_OK;
  }
  /* one symbol per character of the encoded word */
  if (grow((void **)&w->sym, &w->sym_cap, blen, sizeof *w->sym))
    return DQ_ERR_NOMEM;
  int32_t n_sym = 0;
  for (size_t off = 0; off < blen;) {
    uint32_t k = tok_utf8_len((uint8_t)w->buf[off]);
    if (k > blen - off)
      k = (uint32_t)(blen - off);
    w->sym[n_sym] = (symbol){(uint32_t)off, k, n_sym - 1, n_sym + 1};
    n_sym++;
    off += k;
  }
  if (n_sym == 0)
    return DQ_OK;
  w->sym[n_sym - 1].next = -1;
  w->n_heap = 0;
  for (int32_t i = 1; i < n_sym; i++)
    if (try_pair(t, w, i - 1, i))
      return DQ_ERR_NOMEM;
  while (w->n_heap) {
    bigram bg = heap_pop(w);
    symbol *l = &w->sym[bg.left], *r = &w->sym[bg.right];
    if (l->len == 0 || r->len == 0 || l->next != bg.right ||
        l->len + r->len != bg.size)
      continue; /* stale */
    l->len += r->len;
    r->len = 0;
    l->next = r->next;
    if (r->next >= 0)
      w->sym[r->next].prev = bg.left;
    if (try_pair(t, w, l->prev, bg.left) || try_pair(t, w, bg.left, l->next))
      return DQ_ERR_NOMEM;
  }
  for (int32_t i = 0; i >= 0; i = w->sym[i].next) {
    const symbol *sy = &w->sym[i];
    int32_t id = tok_map_get(&t->vocab, w->buf + sy->off, sy->len);
    if (id >= 0) {
      if (tok_out_push(o, id))
        return DQ_ERR_NOMEM;
      continue;
    }
    for (uint32_t j = 0; j < sy->len; j++) { /* as llama.cpp: per byte */
      id = tok_map_get(&t->vocab, w->buf + sy->off + j, 1);
      if (id >= 0 && tok_out_push(o, id))
        return DQ_ERR_NOMEM;
    }
  }
  return DQ_OK;
}

/* ---- splitting ----------------------------------------------------------- */

typedef struct {
  size_t off, len;
} span;

typedef struct {
  span *v;
  size_t n, cap;
} spans;

static int spans_push(spans *s, size_t off, size_t len) {
  if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
    return -1;
  s->v[s->n++] = (span){off, len};
  return 0;
}

/* Applies regex re to every span of in, appending the pieces to out. */
static dq_status split(const pcre2_code *re, pcre2_match_data *md,
                       const char *text, const spans *in, spans *out) {
  for (size_t k = 0; k < in->n; k++) {
    PCRE2_SPTR subj = (PCRE2_SPTR)(text + in->v[k].off);
    size_t len = in->v[k].len, pos = 0, last = 0;
    while (pos < len) {
      int rc = pcre2_match(re, subj, len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
      if (rc == PCRE2_ERROR_NOMATCH)
        break;
      if (rc < 0)
        return DQ_ERR_INTERNAL;
      PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
      size_t ms = ov[0], me = ov[1];
      if (me == ms) { /* empty match: step one character */
        pos = ms + 1;
        while (pos < len && (subj[pos] & 0xc0) == 0x80)
          pos++;
        continue;
      }
      if (ms > last && spans_push(out, in->v[k].off + last, ms - last))
        return DQ_ERR_NOMEM;
      if (spans_push(out, in->v[k].off + ms, me - ms))
        return DQ_ERR_NOMEM;
      last = pos = me;
    }
    if (len > last && spans_push(out, in->v[k].off + last, len - last))
      return DQ_ERR_NOMEM;
  }
  return DQ_OK;
}

/* Encodes one word through the cache (c may be NULL). */
static dq_status cached_word(const dq_tok *t, scratch *w, tok_cache *c,
                             const char *word, size_t n, tok_out *o) {
  int hit = tok_cache_get(c, word, n, o);
  if (hit)
    return hit < 0 ? DQ_ERR_NOMEM : DQ_OK;
  size_t before = o->n;
  dq_status s = bpe_word(t, w, word, n, o);
  if (!s)
    tok_cache_put(c, word, n, o->ids + before, o->n - before);
  return s;
}

dq_status tok_bpe_encode(dq_tok *t, const char *text, size_t n, tok_out *o) {
  dq_status s = DQ_OK;
  scratch w = {0};
  spans a = {0}, b = {0};
  pcre2_match_data *md = NULL;
  size_t clean_n;
  char *clean = tok_utf8_sanitize(text, n, &clean_n);
  if (!clean || !(md = pcre2_match_data_create(4, NULL)) ||
      spans_push(&a, 0, clean_n)) {
    s = DQ_ERR_NOMEM;
    goto done;
  }
  for (int i = 0; i < t->n_re; i++) {
    b.n = 0;
    if ((s = split(t->re[i], md, clean, &a, &b)))
      goto done;
    spans tmp = a;
    a = b;
    b = tmp;
  }
  tok_cache *c = clean_n >= TOK_CACHE_MIN_BYTES ? tok_cache_new() : NULL;
  for (size_t k = 0; k < a.n; k++)
    if ((s = cached_word(t, &w, c, clean + a.v[k].off, a.v[k].len, o)))
      break;
  tok_cache_free(c);
done:
  pcre2_match_data_free(md);
  free(clean);
  free(a.v);
  free(b.v);
  free(w.buf);
  free(w.sym);
  free(w.heap);
  free(w.key);
  return s;
}
