/*
 * chunk_test.h - helpers shared by the chunker tests: a dq_text built
 * directly from a string with one mark per line (no reader involved), and
 * lookups of symbols/references by name and kind.
 */
#ifndef DQ_CHUNK_TEST_H
#define DQ_CHUNK_TEST_H

#include "ingest.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

__attribute__((unused)) static dq_text *text_of(const char *s, dq_doc_kind kind,
                                                const char *lang) {
  dq_text *t = calloc(1, sizeof *t);
  t->n_bytes = strlen(s);
  t->text = malloc(t->n_bytes + 1);
  memcpy(t->text, s, t->n_bytes + 1);
  t->kind = kind;
  snprintf(t->lang, sizeof t->lang, "%s", lang ? lang : "");
  size_t cap = 1;
  for (size_t i = 0; i < t->n_bytes; i++)
    cap += s[i] == '\n';
  t->marks = calloc(cap, sizeof *t->marks);
  if (t->n_bytes) {
    uint32_t line = 1;
    t->marks[t->n_marks++] = (dq_srcmark){0, 1, 0};
    for (size_t i = 0; i + 1 < t->n_bytes; i++)
      if (s[i] == '\n')
        t->marks[t->n_marks++] = (dq_srcmark){i + 1, ++line, 0};
  }
  return t;
}

__attribute__((unused)) static dq_doc_parts *chunk_of(const dq_text *t,
                                                      const char *path,
                                                      uint32_t max_tokens,
                                                      uint32_t overlap) {
  dq_chunk_opts o = {.max_tokens = max_tokens, .overlap_tokens = overlap};
  dq_doc_parts *p = NULL;
  dq_error err = {0};
  CHECK_OK(dq_chunk_document(t, path, &o, &p, &err), dq_error_msg(&err));
  return p;
}

/* t through the contract chunker, whatever detection would say */
__attribute__((unused)) static dq_doc_parts *contract_of(const dq_text *t,
                                                         const char *path) {
  dq_chunk_opts o = {.force_kind = DQ_CHUNK_CONTRACT};
  dq_doc_parts *p = NULL;
  dq_error err = {0};
  CHECK_OK(dq_chunk_document(t, path, &o, &p, &err), dq_error_msg(&err));
  return p;
}

__attribute__((unused)) static const dq_symbol *
find_sym(const dq_doc_parts *p, const char *name, const char *kind) {
  for (size_t i = 0; p && i < p->n_symbols; i++)
    if (!strcmp(p->symbols[i].name, name) && !strcmp(p->symbols[i].kind, kind))
      return &p->symbols[i];
  return NULL;
}

/* The symbol with this name, kind and scope (several "area" methods). */
__attribute__((unused)) static const dq_symbol *
find_sym_in(const dq_doc_parts *p, const char *name, const char *kind,
            const char *scope) {
  for (size_t i = 0; p && i < p->n_symbols; i++)
    if (!strcmp(p->symbols[i].name, name) &&
        !strcmp(p->symbols[i].kind, kind) && !strcmp(p->symbols[i].scope, scope))
      return &p->symbols[i];
  return NULL;
}

__attribute__((unused)) static size_t count_syms(const dq_doc_parts *p,
                                                 const char *name,
                                                 const char *kind) {
  size_t n = 0;
  for (size_t i = 0; p && i < p->n_symbols; i++)
    n += !strcmp(p->symbols[i].name, name) &&
         (!kind || !strcmp(p->symbols[i].kind, kind));
  return n;
}

__attribute__((unused)) static const dq_ref *find_ref(const dq_doc_parts *p,
                                                      const char *name,
                                                      const char *kind,
                                                      uint32_t line) {
  for (size_t i = 0; p && i < p->n_refs; i++)
    if (!strcmp(p->refs[i].name, name) && !strcmp(p->refs[i].kind, kind) &&
        p->refs[i].line == line)
      return &p->refs[i];
  return NULL;
}

__attribute__((unused)) static size_t count_refs(const dq_doc_parts *p,
                                                 const char *name) {
  size_t n = 0;
  for (size_t i = 0; p && i < p->n_refs; i++)
    n += !strcmp(p->refs[i].name, name);
  return n;
}

/* Invariants of any result: ordered, within budget, on UTF-8 boundaries,
 * text equal to the range, lines/pages from dq_text_locate, and every
 * non-blank byte inside some chunk. */
__attribute__((unused)) static void
check_invariants(const dq_text *t, const dq_doc_parts *p, uint32_t max_tokens) {
  size_t covered_to = 0;
  for (size_t i = 0; i < p->n_chunks; i++) {
    const dq_chunk *k = &p->chunks[i];
    CHECK(k->byte_start < k->byte_end && k->byte_end <= t->n_bytes);
    CHECK_MSG(k->n_tokens <= max_tokens, "chunk %zu: %u tokens > %u", i,
              k->n_tokens, max_tokens);
    CHECK_EQ_INT(k->n_tokens, (k->byte_end - k->byte_start + 3) / 4);
    CHECK(((unsigned char)t->text[k->byte_start] & 0xC0) != 0x80);
    CHECK(k->byte_end == t->n_bytes ||
          ((unsigned char)t->text[k->byte_end] & 0xC0) != 0x80);
    CHECK(strlen(k->text) == k->byte_end - k->byte_start &&
          memcmp(k->text, t->text + k->byte_start, strlen(k->text)) == 0);
    uint32_t l, pg;
    dq_text_locate(t, k->byte_start, &l, &pg);
    CHECK_EQ_INT(k->line_start, l);
    CHECK_EQ_INT(k->page_start, pg);
    dq_text_locate(t, k->byte_end - 1, &l, &pg);
    CHECK_EQ_INT(k->line_end, l);
    CHECK_EQ_INT(k->page_end, pg);
    if (i > 0)
      CHECK(k->byte_start >= p->chunks[i - 1].byte_start);
    for (size_t b = covered_to; b < k->byte_start; b++)
      CHECK_MSG(strchr(" \t\r\n", t->text[b]) != NULL,
                "byte %zu (0x%02x) in no chunk", b, (unsigned char)t->text[b]);
    if (k->byte_end > covered_to)
      covered_to = k->byte_end;
  }
  for (size_t b = covered_to; b < t->n_bytes; b++)
    CHECK_MSG(strchr(" \t\r\n", t->text[b]) != NULL,
              "tail byte %zu in no chunk", b);
}

#define CHECK_SYM(p, name, kind, L_, C_, S_)                                   \
  do {                                                                         \
    const dq_symbol *s_ = find_sym(p, name, kind);                             \
    CHECK_MSG(s_ != NULL, "symbol %s (%s) missing", name, kind);               \
    if (s_) {                                                                  \
      CHECK_EQ_INT(s_->line, L_);                                              \
      CHECK_EQ_INT(s_->col, C_);                                               \
      CHECK_EQ_STR(s_->scope, S_);                                             \
    }                                                                          \
  } while (0)

#define CHECK_SYM_IN(p, name, kind, S_, L_, C_)                                \
  do {                                                                         \
    const dq_symbol *s_ = find_sym_in(p, name, kind, S_);                      \
    CHECK_MSG(s_ != NULL, "symbol %s (%s) in \"%s\" missing", name, kind, S_); \
    if (s_) {                                                                  \
      CHECK_EQ_INT(s_->line, L_);                                              \
      CHECK_EQ_INT(s_->col, C_);                                               \
    }                                                                          \
  } while (0)

#define CHECK_REF(p, name, kind, L_, C_, W_)                                   \
  do {                                                                         \
    const dq_ref *r_ = find_ref(p, name, kind, L_);                            \
    CHECK_MSG(r_ != NULL, "ref %s (%s) on line %d missing", name, kind,        \
              (int)(L_));                                                      \
    if (r_) {                                                                  \
      CHECK_EQ_INT(r_->col, C_);                                               \
      CHECK_EQ_STR(r_->caller, W_);                                            \
    }                                                                          \
  } while (0)

#define CHECK_CHUNK(p, i, l0, l1, sec)                                         \
  do {                                                                         \
    CHECK_MSG((p) && (size_t)(i) < (p)->n_chunks, "chunk %d missing",          \
              (int)(i));                                                       \
    if ((p) && (size_t)(i) < (p)->n_chunks) {                                  \
      CHECK_EQ_INT((p)->chunks[i].line_start, l0);                             \
      CHECK_EQ_INT((p)->chunks[i].line_end, l1);                               \
      CHECK_EQ_STR((p)->chunks[i].section, sec);                               \
    }                                                                          \
  } while (0)

#endif
