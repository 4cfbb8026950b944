/*
 * tok_internal.h - what the tokenizer files (tok_vocab.c, tok_bpe.c,
 * tok_spm.c, tok_wpm.c, tok_unicode.c) share: the dq_tok struct, a string
 * hash map, an id output buffer and the per-algorithm entry points. Private
 * to those files; everyone else uses tokenizer.h.
 */
#ifndef DQ_ENGINE_TOK_INTERNAL_H
#define DQ_ENGINE_TOK_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer.h"

/* Open-addressing map from byte strings (pointer + length, owned elsewhere)
 * to int32 values. A slot holds hash bits << 32 | (entry index + 1); 0 is
 * empty. */
typedef struct {
  const char **keys;
  uint32_t *key_lens;
  int32_t *vals;
  uint32_t n, cap_entries;
  uint64_t *slots;
  uint64_t mask;
} tok_map;

int tok_map_init(tok_map *m, uint32_t n_entries);
void tok_map_free(tok_map *m);
/* Inserts key -> val unless key is present (first insertion wins, as in
 * llama.cpp's token_to_id). Returns 0, or -1 when full. */
int tok_map_put(tok_map *m, const char *key, uint32_t len, int32_t val);
/* Value for key, or -1. */
int32_t tok_map_get(const tok_map *m, const char *key, uint32_t len);

/* Growable id buffer. */
typedef struct {
  int32_t *ids;
  size_t n, cap;
} tok_out;
int tok_out_push(tok_out *o, int32_t id);

/* Word -> ids cache for one long encode call: natural text repeats words,
 * and a hit skips the merge loop. Bounded; when full it stops taking words.
 * Every function accepts a NULL cache (then nothing is cached). */
#define TOK_CACHE_MIN_BYTES 8192 /* shorter inputs go without a cache */
typedef struct tok_cache tok_cache;
tok_cache *tok_cache_new(void); /* NULL when out of memory */
void tok_cache_free(tok_cache *c);
/* 1 and the word's ids appended to o on a hit, 0 on a miss, -1 on OOM. */
int tok_cache_get(tok_cache *c, const char *w, size_t n, tok_out *o);
void tok_cache_put(tok_cache *c, const char *w, size_t n, const int32_t *ids,
                   size_t n_ids);

/* Trie over the bytes of special tokens, for leftmost-longest matching. */
typedef struct {
  uint32_t first_child, next_sibling; /* node indices, 0 = none */
  int32_t id;                         /* token ending here, or -1 */
  uint8_t byte;
} tok_trie_node;

#define TOK_MAX_REGEX 4

struct dq_tok {
  dq_tok_algo algo;
  char model[16];
  char pre[64];
  int32_t n_vocab;
  char **text;        /* [n_vocab] NUL-terminated copies */
  uint32_t *text_len; /* [n_vocab] */
  float *scores;      /* [n_vocab], 0 when the file has none */
  uint8_t *types;     /* [n_vocab] dq_token_type */
  char *pool;         /* backing store of text[] */
  tok_map vocab;      /* text -> id */
  uint32_t max_token_len;

  int32_t bos, eos, eot, unk, pad, sep;
  bool add_bos, add_eos, add_space_prefix;
  int32_t eog[8];
  int n_eog;

  tok_trie_node *trie; /* node 0 is the root */
  uint32_t n_trie;

  /* gpt2 */
  tok_map merges;        /* "left right" -> rank */
  char *merge_pool;
  pcre2_code *re[TOK_MAX_REGEX];
  int n_re;
  bool ignore_merges; /* look whole words up before merging (Llama 3) */
  char byte_chr[256][4];  /* byte -> GPT-2 alphabet char (UTF-8) */
  uint8_t byte_chr_len[256];
  int16_t chr_byte[324];  /* GPT-2 alphabet code point -> byte, -1 */
  /* llama: text may be cut before a "▁" that follows a character other
   * than "▁" and these (no vocabulary entry spans such a cut) */
  bool spm_split;
  uint32_t spm_keep[16];
  int n_spm_keep;
  /* llama (byte fallback) and gpt2 (single-byte tokens) */
  int32_t byte_tok[256];

  dq_error err;
};

/* Per-algorithm encoders of one raw-text fragment (no specials inside). */
dq_status tok_bpe_init(dq_tok *t, dq_gguf *g, dq_error *err);
void tok_bpe_free(dq_tok *t);
dq_status tok_bpe_encode(dq_tok *t, const char *text, size_t n, tok_out *o);
dq_status tok_spm_encode(dq_tok *t, const char *text, size_t n, tok_out *o);
dq_status tok_wpm_encode(dq_tok *t, const char *text, size_t n, tok_out *o);

/* UTF-8 helpers (tok_unicode.c). */
/* Length of the UTF-8 sequence starting with byte c (1 for invalid). */
static inline uint32_t tok_utf8_len(uint8_t c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3
                        : (c >> 3) == 30 ? 4 : 1;
}
/* Decodes one code point at s[0..n) into *cp; returns bytes used (>= 1).
 * Invalid sequences yield U+FFFD for one byte. */
uint32_t tok_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);
/* Encodes cp into out (4 bytes room); returns length. */
uint32_t tok_utf8_encode(uint32_t cp, char *out);
/* Copy of text[0..n) with every invalid UTF-8 sequence replaced by U+FFFD,
 * NUL-terminated (*out_n bytes before the NUL); malloc'd, NULL when out of
 * memory. */
char *tok_utf8_sanitize(const char *text, size_t n, size_t *out_n);

/* BERT normalisation data (tok_unicode.c, generated from Python's
 * unicodedata by scripts/make-tokenizer-fixtures.py --unicode-tables). */
enum { TOK_CP_OTHER = 0, TOK_CP_SPACE, TOK_CP_CONTROL, TOK_CP_PUNCT, TOK_CP_MARK };
int tok_cp_class(uint32_t cp);
/* lower(strip_accents(NFD(cp))): writes up to 4 code points, returns count
 * (0 when the character vanishes, e.g. a combining mark). */
int tok_cp_bert_norm(uint32_t cp, uint32_t out[4]);

#endif /* DQ_ENGINE_TOK_INTERNAL_H */
