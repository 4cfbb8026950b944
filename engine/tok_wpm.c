/*
 * tok_wpm.c - WordPiece ("bert" tokenizers: all-MiniLM-L6-v2), following
 * Hugging Face's BertNormalizer + BertPreTokenizer + WordPiece, which the
 * embedding models were trained with:
 *   clean: drop NUL, U+FFFD and control/format/unassigned characters, map
 *          whitespace to a space;
 *   CJK ideographs become words of their own;
 *   normalise: NFD, drop nonspacing marks, lowercase (tok_unicode.c);
 *   split on spaces and punctuation (each punctuation character is a word);
 *   each word (<= 100 characters, else [UNK]) is cut greedily into the
 *   longest vocabulary pieces; the first piece is looked up as "▁piece"
 *   (our GGUF converter stores word starts that way and continuations
 *   without "##"); a word with an unmatched rest becomes one [UNK].
 */
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"

#define WPM_MAX_WORD_CHARS 100

static bool is_cjk(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* Tokenizes one word w[0..n) of n_chars characters ("▁" + w[0..3+n) in buf,
 * with the word starting at buf + 3). */
static int word_pieces(const dq_tok *t, char *buf, size_t n, size_t n_chars,
                       tok_out *o) {
  size_t mark = o->n;
  if (n_chars > WPM_MAX_WORD_CHARS)
    goto unk;
  const char *w = buf + 3;
  size_t start = 0;
  while (start < n) {
    size_t end = n;
    int32_t id = -1;
    while (end > start) {
      if (start == 0)
        id = tok_map_get(&t->vocab, buf, (uint32_t)(end + 3));
      else
        id = tok_map_get(&t->vocab, w + start, (uint32_t)(end - start));
      if (id >= 0)
        break;
      do /* back to the previous character boundary */
        end--;
      while (end > start && ((uint8_t)w[end] & 0xc0) == 0x80);
    }
    if (id < 0)
      goto unk;
    if (tok_out_push(o, id))
      return -1;
    start = end;
  }
  return 0;
unk:
  o->n = mark;
  return t->unk >= 0 ? tok_out_push(o, t->unk) : 0;
}

dq_status tok_wpm_encode(dq_tok *t, const char *text, size_t n, tok_out *o) {
  /* worst case: every byte becomes 4 code points of 4 bytes, plus "▁" */
  char *buf = malloc(16 * n + 8);
  if (!buf)
    return DQ_ERR_NOMEM;
  memcpy(buf, "\xe2\x96\x81", 3);
  size_t len = 0, n_chars = 0; /* current word, at buf + 3 */
  dq_status s = DQ_OK;
#define FLUSH()                                                                \
  do {                                                                         \
    if (len && word_pieces(t, buf, len, n_chars, o)) {                         \
      s = DQ_ERR_NOMEM;                                                        \
      goto done;                                                               \
    }                                                                          \
    len = n_chars = 0;                                                         \
  } while (0)
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    i += tok_utf8_decode((const uint8_t *)text + i, n - i, &cp);
    int cls = tok_cp_class(cp);
    if (cls == TOK_CP_CONTROL)
      continue;
    if (cls == TOK_CP_SPACE) {
      FLUSH();
      continue;
    }
    if (is_cjk(cp)) {
      FLUSH();
      len = tok_utf8_encode(cp, buf + 3);
      n_chars = 1;
      FLUSH();
      continue;
    }
    uint32_t norm[4];
    int k = tok_cp_bert_norm(cp, norm);
    for (int j = 0; j < k; j++) {
      if (tok_cp_class(norm[j]) == TOK_CP_PUNCT) {
        FLUSH();
        len = tok_utf8_encode(norm[j], buf + 3);
        n_chars = 1;
        FLUSH();
      } else {
        len += tok_utf8_encode(norm[j], buf + 3 + len);
        n_chars++;
      }
    }
  }
  FLUSH();
#undef FLUSH
done:
  free(buf);
  return s;
}
