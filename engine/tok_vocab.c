/*
 * tok_vocab.c - the tokenizer object: loading the vocabulary and special ids
 * from GGUF metadata, splitting text on special tokens, dispatching raw text
 * to the algorithm (tok_bpe.c, tok_spm.c, tok_wpm.c), and turning ids back
 * into bytes (whole-sequence decode and a streaming decoder that only emits
 * complete UTF-8 characters).
 *
 * Special-token splitting follows llama.cpp: tokens of type CONTROL,
 * USER_DEFINED or UNKNOWN are candidates; USER_DEFINED ones always match,
 * CONTROL/UNKNOWN only with parse_special. We scan once with a byte trie,
 * taking the leftmost, longest match (llama.cpp scans token by token,
 * longest first; the two agree unless special tokens overlap in odd ways).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

/* ---- string map ---------------------------------------------------------- */

int tok_map_init(tok_map *m, uint32_t n_entries) {
  memset(m, 0, sizeof *m);
  uint64_t cap = 16;
  while (cap < 2ull * n_entries + 1)
    cap <<= 1;
  m->slots = calloc(cap, sizeof *m->slots);
  m->keys = malloc((n_entries ? n_entries : 1) * sizeof *m->keys);
  m->key_lens = malloc((n_entries ? n_entries : 1) * sizeof *m->key_lens);
  m->vals = malloc((n_entries ? n_entries : 1) * sizeof *m->vals);
  m->mask = cap - 1;
  m->cap_entries = n_entries;
  if (!m->slots || !m->keys || !m->key_lens || !m->vals) {
    tok_map_free(m);
    return -1;
  }
  return 0;
}

void tok_map_free(tok_map *m) {
  free(m->slots);
  free(m->keys);
  free(m->key_lens);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* Slot layout: high 32 bits = hash bits, low 32 bits = entry index + 1, so
 * most mismatches are rejected without touching the key. */
static uint64_t map_slot(const tok_map *m, const char *key, uint32_t len,
                         uint64_t *tag, bool *found) {
  uint64_t h = dq_fnv1a(key, len);
  uint64_t i = h & m->mask;
  *tag = h >> 32 << 32;
  for (;;) {
    uint64_t v = m->slots[i];
    if (v == 0) {
      *found = false;
      return i;
    }
    uint32_t e = (uint32_t)v - 1;
    if ((v >> 32 << 32) == *tag && m->key_lens[e] == len &&
        memcmp(m->keys[e], key, len) == 0) {
      *found = true;
      return i;
    }
    i = (i + 1) & m->mask;
  }
}

int tok_map_put(tok_map *m, const char *key, uint32_t len, int32_t val) {
  bool found;
  uint64_t tag;
  uint64_t i = map_slot(m, key, len, &tag, &found);
  if (found)
    return 0;
  if (m->n >= m->cap_entries)
    return -1;
  m->keys[m->n] = key;
  m->key_lens[m->n] = len;
  m->vals[m->n] = val;
  m->slots[i] = tag | ++m->n;
  return 0;
}

int32_t tok_map_get(const tok_map *m, const char *key, uint32_t len) {
  if (!m->slots)
    return -1;
  bool found;
  uint64_t tag;
  uint64_t i = map_slot(m, key, len, &tag, &found);
  return found ? m->vals[(uint32_t)m->slots[i] - 1] : -1;
}

int tok_out_push(tok_out *o, int32_t id) {
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 64;
    int32_t *p = realloc(o->ids, cap * sizeof *p);
    if (!p)
      return -1;
    o->ids = p;
    o->cap = cap;
  }
  o->ids[o->n++] = id;
  return 0;
}

/* ---- word cache ---------------------------------------------------------- */

#define CACHE_SLOTS (1u << 16)
#define CACHE_MAX_WORDS (CACHE_SLOTS / 2)
#define CACHE_MAX_WORD 64

typedef struct {
  uint32_t word_off, word_len, ids_off, n_ids;
} cache_entry;

struct tok_cache {
  uint32_t *slots; /* entry index + 1, 0 = empty */
  cache_entry *e;
  uint32_t n;
  char *words;
  size_t words_len, words_cap;
  int32_t *ids;
  size_t ids_len, ids_cap;
};

tok_cache *tok_cache_new(void) {
  tok_cache *c = calloc(1, sizeof *c);
  if (!c || !(c->slots = calloc(CACHE_SLOTS, sizeof *c->slots)) ||
      !(c->e = malloc(CACHE_MAX_WORDS * sizeof *c->e))) {
    tok_cache_free(c);
    return NULL;
  }
  return c;
}

void tok_cache_free(tok_cache *c) {
  if (!c)
    return;
  free(c->slots);
  free(c->e);
  free(c->words);
  free(c->ids);
  free(c);
}

/* Slot for word (found or empty). */
static uint32_t cache_slot(const tok_cache *c, const char *w, size_t n) {
  uint32_t i = (uint32_t)dq_fnv1a(w, (size_t)n) & (CACHE_SLOTS - 1);
  for (;;) {
    uint32_t v = c->slots[i];
    if (!v || (c->e[v - 1].word_len == n &&
               memcmp(c->words + c->e[v - 1].word_off, w, n) == 0))
      return i;
    i = (i + 1) & (CACHE_SLOTS - 1);
  }
}

int tok_cache_get(tok_cache *c, const char *w, size_t n, tok_out *o) {
  if (!c || n > CACHE_MAX_WORD)
    return 0;
  uint32_t v = c->slots[cache_slot(c, w, n)];
  if (!v)
    return 0;
  const cache_entry *e = &c->e[v - 1];
  for (uint32_t k = 0; k < e->n_ids; k++)
    if (tok_out_push(o, c->ids[e->ids_off + k]))
      return -1;
  return 1;
}

static int grow_bytes(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}

void tok_cache_put(tok_cache *c, const char *w, size_t n, const int32_t *ids,
                   size_t n_ids) {
  if (!c || n > CACHE_MAX_WORD || c->n >= CACHE_MAX_WORDS)
    return;
  uint32_t slot = cache_slot(c, w, n);
  if (c->slots[slot] ||
      grow_bytes((void **)&c->words, &c->words_cap, c->words_len + n, 1) ||
      grow_bytes((void **)&c->ids, &c->ids_cap, c->ids_len + n_ids,
                 sizeof *c->ids))
    return; /* an optimisation only: skip on failure */
  memcpy(c->words + c->words_len, w, n);
  memcpy(c->ids + c->ids_len, ids, n_ids * sizeof *ids);
  c->e[c->n] = (cache_entry){(uint32_t)c->words_len, (uint32_t)n,
                             (uint32_t)c->ids_len, (uint32_t)n_ids};
  c->slots[slot] = ++c->n;
  c->words_len += n;
  c->ids_len += n_ids;
}

/* ---- loading ------------------------------------------------------------- */

static int32_t opt_id(dq_gguf *g, const char *key, int32_t n_vocab,
                      dq_status *st, dq_error *err) {
  uint32_t v;
  if (!dq_gguf_has_key(g, key))
    return -1;
  dq_status s = dq_gguf_get_u32(g, key, &v);
  if (s) {
    *st = dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
    return -1;
  }
  if (v >= (uint32_t)n_vocab) {
    *st = dq_error_set(err, DQ_ERR_CORRUPT,
                       "%s: %s = %u is outside the vocabulary (%d tokens)",
                       dq_gguf_path(g), key, v, n_vocab);
    return -1;
  }
  return (int32_t)v;
}

static bool opt_bool(dq_gguf *g, const char *key, bool dflt) {
  bool b;
  return dq_gguf_get_bool(g, key, &b) == DQ_OK ? b : dflt;
}

static int trie_add(dq_tok *t, const char *s, uint32_t len, int32_t id,
                    uint32_t *cap) {
  uint32_t node = 0;
  for (uint32_t i = 0; i < len; i++) {
    uint8_t c = (uint8_t)s[i];
    uint32_t ch = t->trie[node].first_child;
    while (ch && t->trie[ch].byte != c)
      ch = t->trie[ch].next_sibling;
    if (!ch) {
      if (t->n_trie == *cap) {
        uint32_t nc = *cap * 2;
        tok_trie_node *p = realloc(t->trie, nc * sizeof *p);
        if (!p)
          return -1;
        t->trie = p;
        *cap = nc;
      }
      ch = t->n_trie++;
      t->trie[ch] = (tok_trie_node){0, t->trie[node].first_child, -1, c};
      t->trie[node].first_child = ch;
    }
    node = ch;
  }
  if (t->trie[node].id < 0)
    t->trie[node].id = id;
  return 0;
}

/* Where may SentencePiece text be cut into independent words? Before a "▁"
 * that follows another character X, unless some vocabulary entry contains
 * X"▁" (Gemma has one: ">▁</"); those X are kept in spm_keep. With more
 * than 16 such characters we do not cut at all. */
static void spm_find_cuts(dq_tok *t) {
  t->spm_split = true;
  for (int32_t i = 0; i < t->n_vocab && t->spm_split; i++) {
    const uint8_t *s = (const uint8_t *)t->text[i];
    uint32_t n = t->text_len[i], prev = 0;
    for (uint32_t j = 0; j < n;) {
      uint32_t cp;
      uint32_t k = tok_utf8_decode(s + j, n - j, &cp);
      if (cp == 0x2581 && j > 0 && prev != 0x2581) {
        int m = 0;
        while (m < t->n_spm_keep && t->spm_keep[m] != prev)
          m++;
        if (m == t->n_spm_keep) {
          if (t->n_spm_keep == 16)
            t->spm_split = false;
          else
            t->spm_keep[t->n_spm_keep++] = prev;
        }
      }
      prev = cp;
      j += k;
    }
  }
}

dq_status dq_tok_load(dq_gguf *g, dq_tok **out, dq_error *err) {
  dq_status s = DQ_OK;
  const char *model = NULL, *pre = "default";
  const char *const *strs = NULL;
  const uint32_t *lens = NULL;
  uint64_t n = 0;
  dq_tok *t = NULL;
  if (!g || !out)
    return dq_error_set(err, DQ_ERR_ARG, "dq_tok_load: NULL argument");
  *out = NULL;
  if ((s = dq_gguf_get_str(g, "tokenizer.ggml.model", &model, NULL)) ||
      (s = dq_gguf_get_arr_str(g, "tokenizer.ggml.tokens", &strs, &lens, &n)))
    return dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
  if (dq_gguf_has_key(g, "tokenizer.ggml.pre") &&
      (s = dq_gguf_get_str(g, "tokenizer.ggml.pre", &pre, NULL)))
    return dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
  if (n == 0 || n > DQ_TOK_MAX_VOCAB)
    return dq_error_set(err, DQ_ERR_LIMIT,
                        "%s: tokenizer.ggml.tokens has %llu entries (allowed "
                        "1..%d)",
                        dq_gguf_path(g), (unsigned long long)n,
                        DQ_TOK_MAX_VOCAB);
  t = calloc(1, sizeof *t);
  if (!t)
    return dq_error_set(err, DQ_ERR_NOMEM, "tokenizer");
  t->n_vocab = (int32_t)n;
  if (strcmp(model, "gpt2") == 0)
    t->algo = DQ_TOK_BPE;
  else if (strcmp(model, "llama") == 0)
    t->algo = DQ_TOK_SPM;
  else if (strcmp(model, "bert") == 0)
    t->algo = DQ_TOK_WPM;
  else {
    s = dq_error_set(err, DQ_ERR_UNSUPPORTED,
                     "%s: tokenizer.ggml.model '%.64s' is not supported "
                     "(gpt2, llama and bert are)",
                     dq_gguf_path(g), model);
    goto fail;
  }
  snprintf(t->model, sizeof t->model, "%s", model);
  snprintf(t->pre, sizeof t->pre, "%s", pre);

  /* vocabulary strings, copied into one pool */
  uint64_t pool_bytes = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (lens[i] > DQ_TOK_MAX_TOKEN_BYTES) {
      s = dq_error_set(err, DQ_ERR_LIMIT,
                       "%s: token %llu is %u bytes long (limit %d)",
                       dq_gguf_path(g), (unsigned long long)i, lens[i],
                       DQ_TOK_MAX_TOKEN_BYTES);
      goto fail;
    }
    pool_bytes += lens[i] + 1;
  }
  t->text = malloc(n * sizeof *t->text);
  t->text_len = malloc(n * sizeof *t->text_len);
  t->scores = calloc(n, sizeof *t->scores);
  t->types = malloc(n);
  t->pool = malloc(pool_bytes);
  if (!t->text || !t->text_len || !t->scores || !t->types || !t->pool ||
      tok_map_init(&t->vocab, (uint32_t)n)) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "tokenizer vocabulary");
    goto fail;
  }
  char *p = t->pool;
  for (uint64_t i = 0; i < n; i++) {
    memcpy(p, strs[i], lens[i] + 1);
    t->text[i] = p;
    t->text_len[i] = lens[i];
    if (lens[i] > t->max_token_len)
      t->max_token_len = lens[i];
    tok_map_put(&t->vocab, p, lens[i], (int32_t)i);
    p += lens[i] + 1;
  }
  if (dq_gguf_has_key(g, "tokenizer.ggml.scores") &&
      (s = dq_gguf_get_arr_f32(g, "tokenizer.ggml.scores", t->scores, n))) {
    s = dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
    goto fail;
  }
  if (dq_gguf_has_key(g, "tokenizer.ggml.token_type")) {
    int32_t *ty = malloc(n * sizeof *ty);
    if (!ty) {
      s = dq_error_set(err, DQ_ERR_NOMEM, "token types");
      goto fail;
    }
    s = dq_gguf_get_arr_i32(g, "tokenizer.ggml.token_type", ty, n);
    for (uint64_t i = 0; !s && i < n; i++)
      t->types[i] = (ty[i] >= 1 && ty[i] <= 6) ? (uint8_t)ty[i] : DQ_TOKEN_NORMAL;
    free(ty);
    if (s) {
      s = dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
      goto fail;
    }
  } else {
    memset(t->types, DQ_TOKEN_NORMAL, n);
  }

  /* special ids */
  t->bos = opt_id(g, "tokenizer.ggml.bos_token_id", t->n_vocab, &s, err);
  t->eos = opt_id(g, "tokenizer.ggml.eos_token_id", t->n_vocab, &s, err);
  t->unk = opt_id(g, "tokenizer.ggml.unknown_token_id", t->n_vocab, &s, err);
  t->pad = opt_id(g, "tokenizer.ggml.padding_token_id", t->n_vocab, &s, err);
  t->sep = opt_id(g, "tokenizer.ggml.seperator_token_id", t->n_vocab, &s, err);
  t->eot = opt_id(g, "tokenizer.ggml.eot_token_id", t->n_vocab, &s, err);
  if (s)
    goto fail;
  /* defaults as llama.cpp's: BOS for llama/bert and Llama 3 BPE */
  bool llama3 = strcmp(pre, "llama3") == 0 || strcmp(pre, "llama-bpe") == 0 ||
                strcmp(pre, "llama-v3") == 0;
  t->add_bos = opt_bool(g, "tokenizer.ggml.add_bos_token",
                        t->algo != DQ_TOK_BPE || llama3);
  t->add_eos = opt_bool(g, "tokenizer.ggml.add_eos_token",
                        t->algo == DQ_TOK_WPM);
  t->add_space_prefix = opt_bool(g, "tokenizer.ggml.add_space_prefix",
                                 t->algo == DQ_TOK_SPM);
  if (t->algo == DQ_TOK_WPM && t->sep < 0)
    t->sep = t->eos;
  if (t->add_bos && t->bos < 0) {
    s = dq_error_set(err, DQ_ERR_FORMAT,
                     "%s: add_bos_token is set but tokenizer.ggml.bos_token_id"
                     " is missing",
                     dq_gguf_path(g));
    goto fail;
  }
  if (t->add_eos && t->eos < 0) {
    s = dq_error_set(err, DQ_ERR_FORMAT,
                     "%s: add_eos_token is set but tokenizer.ggml.eos_token_id"
                     " is missing",
                     dq_gguf_path(g));
    goto fail;
  }
  static const char *const eog_names[] = {
      "<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|endoftext|>",
      "<|end_of_text|>", "<|end|>", "<eos>"};
  if (t->eot < 0)
    for (size_t i = 0; i < 3 && t->eot < 0; i++)
      t->eot = dq_tok_find(t, eog_names[i]);
  if (t->eos >= 0)
    t->eog[t->n_eog++] = t->eos;
  if (t->eot >= 0 && t->eot != t->eos)
    t->eog[t->n_eog++] = t->eot;
  for (size_t i = 0; i < sizeof eog_names / sizeof *eog_names; i++) {
    int32_t id = dq_tok_find(t, eog_names[i]);
    if (id >= 0 && t->types[id] == DQ_TOKEN_CONTROL && !dq_tok_is_eog(t, id) &&
        t->n_eog < 8)
      t->eog[t->n_eog++] = id;
  }

  /* special-token trie */
  uint32_t trie_cap = 256;
  t->trie = malloc(trie_cap * sizeof *t->trie);
  if (!t->trie) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "special tokens");
    goto fail;
  }
  t->trie[0] = (tok_trie_node){0, 0, -1, 0};
  t->n_trie = 1;
  for (int32_t i = 0; i < t->n_vocab; i++) {
    uint8_t ty = t->types[i];
    if ((ty == DQ_TOKEN_CONTROL || ty == DQ_TOKEN_USER_DEFINED ||
         ty == DQ_TOKEN_UNKNOWN) &&
        t->text_len[i] > 0 &&
        trie_add(t, t->text[i], t->text_len[i], i, &trie_cap)) {
      s = dq_error_set(err, DQ_ERR_NOMEM, "special tokens");
      goto fail;
    }
  }

  for (int b = 0; b < 256; b++)
    t->byte_tok[b] = -1;
  if (t->algo == DQ_TOK_BPE) {
    if ((s = tok_bpe_init(t, g, err)))
      goto fail;
  } else if (t->algo == DQ_TOK_SPM) {
    for (int b = 0; b < 256; b++) {
      char name[8];
      snprintf(name, sizeof name, "<0x%02X>", b);
      t->byte_tok[b] = dq_tok_find(t, name);
    }
    spm_find_cuts(t);
  }
  *out = t;
  return DQ_OK;
fail:
  dq_tok_free(t);
  return s;
}

void dq_tok_free(dq_tok *t) {
  if (!t)
    return;
  if (t->algo == DQ_TOK_BPE)
    tok_bpe_free(t);
  tok_map_free(&t->vocab);
  free(t->text);
  free(t->text_len);
  free(t->scores);
  free(t->types);
  free(t->pool);
  free(t->trie);
  free(t);
}

const char *dq_tok_errmsg(const dq_tok *t) {
  return t ? dq_error_msg(&t->err) : "no tokenizer";
}
dq_tok_algo dq_tok_algorithm(const dq_tok *t) { return t->algo; }
const char *dq_tok_model_name(const dq_tok *t) { return t->model; }
const char *dq_tok_pre_name(const dq_tok *t) { return t->pre; }
int32_t dq_tok_n_vocab(const dq_tok *t) { return t->n_vocab; }
int32_t dq_tok_bos(const dq_tok *t) { return t->bos; }
int32_t dq_tok_eos(const dq_tok *t) { return t->eos; }
int32_t dq_tok_eot(const dq_tok *t) { return t->eot; }
int32_t dq_tok_unk(const dq_tok *t) { return t->unk; }
int32_t dq_tok_pad(const dq_tok *t) { return t->pad; }
int32_t dq_tok_sep(const dq_tok *t) { return t->sep; }
bool dq_tok_add_bos(const dq_tok *t) { return t->add_bos; }
bool dq_tok_add_eos(const dq_tok *t) { return t->add_eos; }

bool dq_tok_is_eog(const dq_tok *t, int32_t id) {
  for (int i = 0; i < t->n_eog; i++)
    if (t->eog[i] == id)
      return true;
  return false;
}

dq_token_type dq_tok_type(const dq_tok *t, int32_t id) {
  return id >= 0 && id < t->n_vocab ? (dq_token_type)t->types[id]
                                    : (dq_token_type)0;
}

const char *dq_tok_text(const dq_tok *t, int32_t id) {
  return id >= 0 && id < t->n_vocab ? t->text[id] : NULL;
}

int32_t dq_tok_find(const dq_tok *t, const char *text) {
  return text ? tok_map_get(&t->vocab, text, (uint32_t)strlen(text)) : -1;
}

/* ---- encoding ------------------------------------------------------------ */

/* Longest special token starting at s[0..n), allowed by parse_special;
 * returns its id and length, or -1. */
static int32_t match_special(const dq_tok *t, const uint8_t *s, size_t n,
                             bool parse_special, size_t *len) {
  uint32_t node = 0;
  int32_t best = -1;
  for (size_t i = 0; i < n; i++) {
    uint32_t ch = t->trie[node].first_child;
    while (ch && t->trie[ch].byte != s[i])
      ch = t->trie[ch].next_sibling;
    if (!ch)
      break;
    node = ch;
    int32_t id = t->trie[node].id;
    if (id >= 0 && (parse_special || t->types[id] == DQ_TOKEN_USER_DEFINED)) {
      best = id;
      *len = i + 1;
    }
  }
  return best;
}

static dq_status encode_raw(dq_tok *t, const char *text, size_t n,
                            bool first, tok_out *o) {
  switch (t->algo) {
  case DQ_TOK_BPE:
    return tok_bpe_encode(t, text, n, o);
  case DQ_TOK_SPM: {
    /* llama.cpp: a space goes before text that starts the input or follows
     * a special token, when the model asks for a space prefix. */
    if (!t->add_space_prefix || !first)
      return tok_spm_encode(t, text, n, o);
    char *buf = malloc(n + 1);
    if (!buf)
      return DQ_ERR_NOMEM;
    buf[0] = ' ';
    memcpy(buf + 1, text, n);
    dq_status s = tok_spm_encode(t, buf, n + 1, o);
    free(buf);
    return s;
  }
  case DQ_TOK_WPM:
    return tok_wpm_encode(t, text, n, o);
  }
  return DQ_ERR_INTERNAL;
}

dq_status dq_tok_encode(dq_tok *t, const char *text, size_t n_bytes,
                        bool add_special, bool parse_special, int32_t **ids,
                        size_t *n_ids) {
  tok_out o = {0};
  dq_status s = DQ_OK;
  if (!t || !ids || !n_ids || (!text && n_bytes))
    return DQ_ERR_ARG;
  *ids = NULL;
  *n_ids = 0;
  bool want_bos = add_special && (t->algo == DQ_TOK_WPM ? t->bos >= 0
                                                         : t->add_bos);
  bool want_eos = add_special && (t->algo == DQ_TOK_WPM ? t->sep >= 0
                                                         : t->add_eos);
  if (want_bos && tok_out_push(&o, t->bos))
    goto nomem;
  const uint8_t *u = (const uint8_t *)text;
  size_t start = 0, i = 0;
  bool prev_special = true;
  while (i < n_bytes) {
    size_t len = 0;
    int32_t id = t->n_trie > 1
                     ? match_special(t, u + i, n_bytes - i, parse_special, &len)
                     : -1;
    if (id < 0) {
      i++;
      continue;
    }
    if (i > start &&
        (s = encode_raw(t, text + start, i - start, prev_special, &o)))
      goto fail;
    if (tok_out_push(&o, id))
      goto nomem;
    prev_special = true;
    i += len;
    start = i;
  }
  if (n_bytes > start &&
      (s = encode_raw(t, text + start, n_bytes - start, prev_special, &o)))
    goto fail;
  if (want_eos && tok_out_push(&o, t->algo == DQ_TOK_WPM ? t->sep : t->eos))
    goto nomem;
  if (!o.ids && !(o.ids = malloc(sizeof *o.ids)))
    goto nomem;
  *ids = o.ids;
  *n_ids = o.n;
  return DQ_OK;
nomem:
  s = DQ_ERR_NOMEM;
fail:
  dq_error_set(&t->err, s, "tokenizer: encoding %zu bytes failed: %s",
               n_bytes, dq_status_str(s));
  free(o.ids);
  return s;
}

/* ---- decoding ------------------------------------------------------------ */

static int put(char *buf, size_t cap, size_t at, const void *src, size_t n) {
  if (at < cap)
    memcpy(buf + at, src, at + n <= cap ? n : cap - at);
  return (int)n;
}

int dq_tok_piece(const dq_tok *t, int32_t id, bool render_special, char *buf,
                 size_t cap) {
  if (id < 0 || id >= t->n_vocab)
    return -1;
  const char *s = t->text[id];
  uint32_t n = t->text_len[id];
  switch (t->types[id]) {
  case DQ_TOKEN_CONTROL:
    return render_special ? put(buf, cap, 0, s, n) : 0;
  case DQ_TOKEN_UNKNOWN:
    return put(buf, cap, 0, "\xe2\x96\x85", 3); /* U+2585, as llama.cpp */
  case DQ_TOKEN_USER_DEFINED:
    return put(buf, cap, 0, s, n);
  case DQ_TOKEN_UNUSED:
    return 0;
  case DQ_TOKEN_BYTE:
    if (n == 6 && s[0] == '<' && s[1] == '0' && s[2] == 'x') {
      uint8_t b = (uint8_t)strtoul(s + 3, NULL, 16);
      return put(buf, cap, 0, &b, 1);
    }
    return put(buf, cap, 0, s, n);
  default:
    break;
  }
  size_t at = 0;
  if (t->algo == DQ_TOK_BPE) {
    /* GPT-2 alphabet back to bytes; characters outside it pass through */
    for (uint32_t i = 0; i < n;) {
      uint32_t cp;
      uint32_t k = tok_utf8_decode((const uint8_t *)s + i, n - i, &cp);
      if (cp < 324 && t->chr_byte[cp] >= 0) {
        uint8_t b = (uint8_t)t->chr_byte[cp];
        at += (size_t)put(buf, cap, at, &b, 1);
      } else {
        at += (size_t)put(buf, cap, at, s + i, k);
      }
      i += k;
    }
    return (int)at;
  }
  /* llama / bert: U+2581 is a space */
  for (uint32_t i = 0; i < n;) {
    if (i + 3 <= n && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
      at += (size_t)put(buf, cap, at, " ", 1);
      i += 3;
    } else {
      at += (size_t)put(buf, cap, at, s + i, 1);
      i++;
    }
  }
  return (int)at;
}

/* Whether decoding drops the space before the first word. */
static bool strips_first_space(const dq_tok *t) {
  return t->algo == DQ_TOK_WPM || (t->algo == DQ_TOK_SPM && t->add_space_prefix);
}

dq_status dq_tok_decode(dq_tok *t, const int32_t *ids, size_t n_ids,
                        bool render_special, char **text, size_t *n_bytes) {
  size_t cap = 64, len = 0;
  char *out = malloc(cap);
  if (!out)
    return DQ_ERR_NOMEM;
  for (size_t i = 0; i < n_ids; i++) {
    int k = dq_tok_piece(t, ids[i], render_special, out + len, cap - len - 1);
    if (k < 0) {
      free(out);
      return dq_error_set(&t->err, DQ_ERR_ARG,
                          "tokenizer: id %d at position %zu is outside the "
                          "vocabulary (%d tokens)",
                          ids[i], i, t->n_vocab);
    }
    if ((size_t)k > cap - len - 1) {
      while ((size_t)k > cap - len - 1)
        cap *= 2;
      char *p = realloc(out, cap);
      if (!p) {
        free(out);
        return DQ_ERR_NOMEM;
      }
      out = p;
      dq_tok_piece(t, ids[i], render_special, out + len, cap - len - 1);
    }
    if (len == 0 && k > 0 && out[0] == ' ' && strips_first_space(t)) {
      memmove(out, out + 1, (size_t)k - 1);
      k--;
    }
    len += (size_t)k;
  }
  out[len] = '\0';
  *text = out;
  if (n_bytes)
    *n_bytes = len;
  return DQ_OK;
}

void dq_tok_stream_init(dq_tok_stream *s, bool render_special) {
  memset(s, 0, sizeof *s);
  s->render_special = render_special;
}

/* Length of the longest prefix of b[0..n) made of complete UTF-8 characters
 * (invalid bytes count as complete, one byte each). */
static size_t complete_prefix(const uint8_t *b, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint32_t k = tok_utf8_len(b[i]);
    if (k == 1) {
      i++;
      continue;
    }
    if (i + k > n) {
      /* incomplete only if every following byte is a continuation */
      for (size_t j = i + 1; j < n; j++)
        if ((b[j] & 0xc0) != 0x80)
          return n; /* broken: emit as is */
      return i;
    }
    i += k;
  }
  return n;
}

dq_status dq_tok_stream_push(const dq_tok *t, dq_tok_stream *s, int32_t id,
                             char *out, size_t cap, size_t *n_out) {
  char piece[DQ_TOK_MAX_TOKEN_BYTES + 8];
  *n_out = 0;
  int k = dq_tok_piece(t, id, s->render_special, piece, sizeof piece);
  if (k < 0)
    return DQ_ERR_ARG;
  if ((size_t)k > sizeof piece)
    k = (int)sizeof piece;
  size_t skip = 0;
  if (!s->started && s->n_pending == 0 && k > 0 && piece[0] == ' ' &&
      strips_first_space(t))
    skip = 1;
  size_t total = s->n_pending + (size_t)k - skip;
  if (total > cap)
    return DQ_ERR_FULL;
  memcpy(out, s->pending, s->n_pending);
  memcpy(out + s->n_pending, piece + skip, (size_t)k - skip);
  size_t ok = complete_prefix((const uint8_t *)out, total);
  if (total - ok > sizeof s->pending)
    ok = total; /* cannot be a UTF-8 prefix: let it through */
  s->n_pending = (uint32_t)(total - ok);
  memcpy(s->pending, out + ok, s->n_pending);
  if (k > 0)
    s->started = true;
  *n_out = ok;
  return DQ_OK;
}

size_t dq_tok_stream_flush(dq_tok_stream *s, char *out, size_t cap) {
  size_t n = 0;
  if (s->n_pending && cap >= 3) {
    memcpy(out, "\xef\xbf\xbd", 3);
    n = 3;
  }
  s->n_pending = 0;
  return n;
}
