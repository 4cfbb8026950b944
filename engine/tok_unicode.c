/*
 * tok_unicode.c - the little Unicode the tokenizers need beyond PCRE2:
 * UTF-8 decoding/encoding that never fails (invalid bytes decode as U+FFFD,
 * one byte at a time; sanitising a string the same way) and the character
 * classes and normal forms of BERT's normaliser (clean text, strip accents,
 * lowercase), looked up in tables
 * generated from Python's unicodedata (tok_unicode_tables.h). Hangul
 * syllables are decomposed arithmetically instead of tabulated.
 */
#include <stdint.h>

#include "tok_internal.h"
#include "tok_unicode_tables.h"

#include <stdlib.h>
#include <string.h>

uint32_t tok_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
  uint8_t c = s[0];
  uint32_t len = tok_utf8_len(c);
  if (len == 1 || len > n) {
    *cp = c < 0x80 ? c : 0xFFFD;
    return 1;
  }
  uint32_t v = c & (0x7f >> len);
  for (uint32_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) {
      *cp = 0xFFFD;
      return 1;
    }
    v = v << 6 | (s[i] & 0x3f);
  }
  /* overlong forms and surrogates are invalid too */
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min_cp[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *cp = 0xFFFD;
    return 1;
  }
  *cp = v;
  return len;
}

uint32_t tok_utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

int tok_cp_class(uint32_t cp) {
  size_t lo = 0, hi = sizeof tok_cp_ranges / sizeof tok_cp_ranges[0];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < tok_cp_ranges[mid][0])
      hi = mid;
    else if (cp > tok_cp_ranges[mid][1])
      lo = mid + 1;
    else
      return (int)tok_cp_ranges[mid][2];
  }
  return TOK_CP_OTHER;
}

int tok_cp_bert_norm(uint32_t cp, uint32_t out[4]) {
  if (cp >= 0xAC00 && cp <= 0xD7A3) {
    uint32_t s = cp - 0xAC00;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    if (s % 28 == 0)
      return 2;
    out[2] = 0x11A7 + s % 28;
    return 3;
  }
  if (tok_cp_class(cp) == TOK_CP_MARK)
    return 0;
  size_t lo = 0, hi = sizeof tok_cp_norm / sizeof tok_cp_norm[0];
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (cp < tok_cp_norm[mid][0])
      hi = mid;
    else if (cp > tok_cp_norm[mid][0])
      lo = mid + 1;
    else {
      int n = 0;
      while (n < 4 && tok_cp_norm[mid][1 + n])
        out[n] = tok_cp_norm[mid][1 + n], n++;
      return n;
    }
  }
  out[0] = cp;
  return 1;
}

char *tok_utf8_sanitize(const char *text, size_t n, size_t *out_n) {
  char *buf = malloc(3 * n + 1);
  if (!buf)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    uint32_t k = tok_utf8_decode((const uint8_t *)text + i, n - i, &cp);
    if (cp == 0xFFFD && !(k == 3 && memcmp(text + i, "\xef\xbf\xbd", 3) == 0)) {
      memcpy(buf + o, "\xef\xbf\xbd", 3);
      o += 3;
    } else {
      memcpy(buf + o, text + i, k);
      o += k;
    }
    i += k;
  }
  buf[o] = 0;
  *out_n = o;
  return buf;
}
