/*
 * test_tok_toy.c - the three tokenizers on tiny vocabularies written into
 * GGUF files by gguf_writer.h, with expected ids worked out by hand (the
 * derivations are in the comments). Runs without any model file.
 */
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_writer.h"
#include "test.h"
#include "tokenizer.h"

static dq_tok *load(gw *w, dq_status want, const char *needle) {
  size_t len;
  uint8_t *buf = gw_finish(w, &len);
  gw_free(w);
  dq_gguf *g = NULL;
  dq_tok *t = NULL;
  dq_error err = {0};
  CHECK_OK(dq_gguf_open_mem(buf, len, "toy.gguf", &g, &err),
           dq_error_msg(&err));
  if (g) {
    dq_status s = dq_tok_load(g, &t, &err);
    CHECK_MSG(s == want, "dq_tok_load: %d (%s), expected %d", (int)s,
              dq_error_msg(&err), (int)want);
    if (needle)
      CHECK_MSG(strstr(dq_error_msg(&err), needle), "\"%s\" lacks \"%s\"",
                dq_error_msg(&err), needle);
  }
  dq_gguf_close(g); /* the tokenizer must not depend on g */
  free(buf);
  return t;
}

/* Encodes and compares with the expected ids. */
static void expect_ids(dq_tok *t, const char *text, bool add_special,
                       bool parse_special, const int32_t *want, size_t n_want,
                       int line) {
  int32_t *ids = NULL;
  size_t n = 0;
  dq_status s = dq_tok_encode(t, text, strlen(text), add_special,
                              parse_special, &ids, &n);
  bool same = s == DQ_OK && n == n_want &&
              (n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
  if (!same) {
    char got[256] = "", exp[256] = "";
    for (size_t i = 0; i < n && strlen(got) < 200; i++)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%d ", ids[i]);
    for (size_t i = 0; i < n_want; i++)
      snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%d ", want[i]);
    CHECK_MSG(same, "line %d: \"%s\": got [%s], expected [%s]", line, text,
              got, exp);
  } else {
    CHECK(same);
  }
  free(ids);
}
#define EXPECT_IDS(t, text, add, parse, ...)                                   \
  do {                                                                         \
    const int32_t want_[] = {__VA_ARGS__};                                     \
    expect_ids(t, text, add, parse, want_, sizeof want_ / sizeof *want_,       \
               __LINE__);                                                      \
  } while (0)

static void expect_decode(dq_tok *t, const int32_t *ids, size_t n,
                          bool special, const char *want, int line) {
  char *text = NULL;
  size_t len = 0;
  dq_status s = dq_tok_decode(t, ids, n, special, &text, &len);
  CHECK_MSG(s == DQ_OK && text && strcmp(text, want) == 0 &&
                len == strlen(want),
            "line %d: decoded \"%s\", expected \"%s\"", line,
            text ? text : "(null)", want);
  free(text);
}
#define EXPECT_DECODE(t, special, want, ...)                                   \
  do {                                                                         \
    const int32_t ids_[] = {__VA_ARGS__};                                      \
    expect_decode(t, ids_, sizeof ids_ / sizeof *ids_, special, want,          \
                  __LINE__);                                                   \
  } while (0)

/* ---- byte-level BPE -------------------------------------------------------
 * vocab: 0 <|endoftext|> (control), 1 <|im_start|> (control), 2 a, 3 b, 4 c,
 * 5 d, 6 Ġ (space), 7 ab, 8 abc, 9 Ġa, 10 <u> (user-defined), 11 Ċ (newline),
 * 12 "1", 13 "2", 14 "12", 15 Ã, 16 © ("é" is C3 A9: bytes map to Ã and ©)
 * merges by rank: "a b", "ab c", "Ġ a", "1 2" */
static gw bpe_file(const char *pre) {
  static const char *toks[] = {"<|endoftext|>", "<|im_start|>", "a", "b",
                               "c", "d", "\xc4\xa0", "ab", "abc",
                               "\304\240a", "<u>", "\xc4\x8a", "1", "2",
                               "12", "\xc3\x83", "\xc2\xa9"};
  static const int32_t types[] = {3, 3, 1, 1, 1, 1, 1, 1, 1,
                                  1, 4, 1, 1, 1, 1, 1, 1};
  static const char *merges[] = {"a b", "ab c", "\xc4\xa0 a", "1 2"};
  gw w;
  gw_init(&w);
  gw_add_str(&w, "tokenizer.ggml.model", "gpt2");
  gw_add_str(&w, "tokenizer.ggml.pre", pre);
  gw_add_arr_str(&w, "tokenizer.ggml.tokens", toks, 17);
  gw_add_arr_i32(&w, "tokenizer.ggml.token_type", types, 17);
  gw_add_arr_str(&w, "tokenizer.ggml.merges", merges, 4);
  gw_add_u32(&w, "tokenizer.ggml.bos_token_id", 0);
  gw_add_u32(&w, "tokenizer.ggml.eos_token_id", 0);
  return w;
}

static void test_bpe(void) {
  gw w = bpe_file("gpt2");
  gw_add_bool(&w, "tokenizer.ggml.add_bos_token", 1);
  dq_tok *t = load(&w, DQ_OK, NULL);
  if (!t)
    return;
  CHECK_EQ_INT(dq_tok_algorithm(t), DQ_TOK_BPE);
  CHECK_EQ_INT(dq_tok_n_vocab(t), 17);
  /* "abc" | " abd": a+b (rank 0) then ab+c (rank 1) -> abc; "Ġabd": a+b
   * (rank 0) wins over Ġ+a (rank 2), then no "Ġ ab" or "ab d" merge. */
  EXPECT_IDS(t, "abc abd", false, false, 8, 6, 7, 5);
  EXPECT_IDS(t, "abc abd", true, false, 0, 8, 6, 7, 5);
  EXPECT_IDS(t, " a", false, false, 9);
  /* gpt2 regex: " ?\p{N}+" keeps "12" whole -> merge "1 2" */
  EXPECT_IDS(t, "12", false, false, 14);
  /* "\n" before a letter is not matched by "\s+(?!\S)": its own piece */
  EXPECT_IDS(t, "a\nb", false, false, 2, 11, 3);
  /* specials: control only when parsing them, user-defined always */
  EXPECT_IDS(t, "<|im_start|>ab", false, true, 1, 7);
  /* raw: "<|", "im", "_", "start" (only 'a' known), "|>", "ab" */
  EXPECT_IDS(t, "<|im_start|>ab", false, false, 2, 7);
  EXPECT_IDS(t, "a<u>b", false, false, 2, 10, 3);
  /* é = C3 A9 -> Ã © */
  EXPECT_IDS(t, "\xc3\xa9", false, false, 15, 16);
  /* invalid UTF-8 becomes U+FFFD (EF BF BD), none of whose bytes is in the
   * vocabulary here, so it vanishes */
  EXPECT_IDS(t, "a\xff" "b", false, false, 2, 3);
  {
    int32_t *ids = NULL;
    size_t n = 99;
    CHECK_OK(dq_tok_encode(t, "", 0, false, false, &ids, &n), "");
    CHECK(n == 0 && ids != NULL);
    free(ids);
  }
  EXPECT_DECODE(t, false, "abc abd", 8, 6, 7, 5);
  EXPECT_DECODE(t, false, "ab", 1, 7);
  EXPECT_DECODE(t, true, "<|im_start|>ab", 1, 7);
  EXPECT_DECODE(t, false, "a<u>\xc3\xa9", 2, 10, 15, 16);
  CHECK_EQ_INT(dq_tok_find(t, "abc"), 8);
  CHECK_EQ_INT(dq_tok_find(t, "zzz"), -1);
  CHECK(dq_tok_is_eog(t, 0));
  CHECK(!dq_tok_is_eog(t, 1));
  {
    int32_t bad = 17;
    char *text = NULL;
    CHECK_EQ_INT(dq_tok_decode(t, &bad, 1, false, &text, NULL), DQ_ERR_ARG);
    CHECK(strstr(dq_tok_errmsg(t), "17"));
  }
  /* streaming: "é" split over two tokens comes out whole */
  {
    dq_tok_stream st;
    dq_tok_stream_init(&st, false);
    char out[64];
    size_t n = 0;
    CHECK_OK(dq_tok_stream_push(t, &st, 2, out, sizeof out, &n), "");
    CHECK(n == 1 && out[0] == 'a');
    CHECK_OK(dq_tok_stream_push(t, &st, 15, out, sizeof out, &n), "");
    CHECK_EQ_INT(n, 0);
    CHECK_OK(dq_tok_stream_push(t, &st, 16, out, sizeof out, &n), "");
    CHECK(n == 2 && memcmp(out, "\xc3\xa9", 2) == 0);
    CHECK_OK(dq_tok_stream_push(t, &st, 15, out, sizeof out, &n), "");
    CHECK_EQ_INT(dq_tok_stream_flush(&st, out, sizeof out), 3);
    CHECK(memcmp(out, "\xef\xbf\xbd", 3) == 0);
    CHECK_EQ_INT(dq_tok_stream_push(t, &st, 2, out, 0, &n), DQ_ERR_FULL);
  }
  dq_tok_free(t);

  /* smollm splits every digit first, so "12" cannot merge */
  w = bpe_file("smollm");
  t = load(&w, DQ_OK, NULL);
  if (t) {
    EXPECT_IDS(t, "12", false, false, 12, 13);
    EXPECT_IDS(t, "abc abd", true, false, 8, 6, 7, 5); /* no add_bos key */
  }
  dq_tok_free(t);
  /* qwen2 also splits digits one by one */
  w = bpe_file("qwen2");
  t = load(&w, DQ_OK, NULL);
  if (t)
    EXPECT_IDS(t, "12", false, false, 12, 13);
  dq_tok_free(t);
  /* llama-bpe: \p{N}{1,3} keeps "12" together */
  w = bpe_file("llama-bpe");
  t = load(&w, DQ_OK, NULL);
  if (t)
    EXPECT_IDS(t, "12", false, false, 14);
  dq_tok_free(t);

  w = bpe_file("weird-pre");
  CHECK(load(&w, DQ_ERR_UNSUPPORTED, "'weird-pre'") == NULL);
  gw_init(&w);
  gw_add_str(&w, "tokenizer.ggml.model", "rwkv");
  {
    const char *one[] = {"a"};
    gw_add_arr_str(&w, "tokenizer.ggml.tokens", one, 1);
  }
  CHECK(load(&w, DQ_ERR_UNSUPPORTED, "'rwkv'") == NULL);
  gw_init(&w);
  gw_add_str(&w, "tokenizer.ggml.model", "gpt2");
  CHECK(load(&w, DQ_ERR_NOTFOUND, "tokenizer.ggml.tokens") == NULL);
  w = bpe_file("gpt2");
  gw_add_u32(&w, "tokenizer.ggml.unknown_token_id", 99);
  CHECK(load(&w, DQ_ERR_CORRUPT, "unknown_token_id = 99") == NULL);
}

/* ---- SentencePiece --------------------------------------------------------
 * vocab: 0 <unk> (unknown), 1 <s>, 2 </s> (control), 3..258 <0x00>..<0xFF>
 * (byte), then with scores: 259 ▁ -1, 260 a -2, 261 b -3, 262 ▁a -4,
 * 263 ab -1.5, 264 ▁ab -0.5, 265 c -3. */
static gw spm_file(int add_space_prefix, int cross) {
  static char names[256][8];
  const char *toks[267];
  int32_t types[267];
  float scores[267] = {0};
  size_t n = cross ? 267 : 266;
  toks[0] = "<unk>", types[0] = 2;
  toks[1] = "<s>", types[1] = 3;
  toks[2] = "</s>", types[2] = 3;
  for (int b = 0; b < 256; b++) {
    snprintf(names[b], sizeof names[b], "<0x%02X>", b);
    toks[3 + b] = names[b];
    types[3 + b] = 6;
  }
  const char *rest[] = {"\xe2\x96\x81", "a", "b", "\342\226\201a", "ab",
                        "\342\226\201ab", "c"};
  const float sc[] = {-1, -2, -3, -4, -1.5f, -0.5f, -3};
  for (int i = 0; i < 7; i++) {
    toks[259 + i] = rest[i];
    types[259 + i] = 1;
    scores[259 + i] = sc[i];
  }
  toks[266] = "b\342\226\201"; /* "b▁": a piece spanning a word start */
  types[266] = 1;
  scores[266] = 10;
  gw w;
  gw_init(&w);
  gw_add_str(&w, "tokenizer.ggml.model", "llama");
  gw_add_arr_str(&w, "tokenizer.ggml.tokens", toks, n);
  gw_add_arr_f32(&w, "tokenizer.ggml.scores", scores, n);
  gw_add_arr_i32(&w, "tokenizer.ggml.token_type", types, n);
  gw_add_u32(&w, "tokenizer.ggml.bos_token_id", 1);
  gw_add_u32(&w, "tokenizer.ggml.eos_token_id", 2);
  gw_add_u32(&w, "tokenizer.ggml.unknown_token_id", 0);
  gw_add_bool(&w, "tokenizer.ggml.add_space_prefix", add_space_prefix);
  return w;
}

static void test_spm(void) {
  gw w = spm_file(1, 0);
  dq_tok *t = load(&w, DQ_OK, NULL);
  if (!t)
    return;
  CHECK_EQ_INT(dq_tok_algorithm(t), DQ_TOK_SPM);
  /* " ab c" -> ▁ a b ▁ c: best pair ab (-1.5), then ▁+ab (-0.5); "▁a"
   * (-4) is stale by then; "b▁", "▁c" are not in the vocabulary. */
  EXPECT_IDS(t, "ab c", false, false, 264, 259, 265);
  EXPECT_IDS(t, "ab c", true, false, 1, 264, 259, 265); /* add_bos default */
  /* é is not in the vocabulary: byte fallback C3 A9 */
  EXPECT_IDS(t, "\xc3\xa9", false, false, 259, 3 + 0xC3, 3 + 0xA9);
  /* a control token in the text, then the space prefix again after it */
  EXPECT_IDS(t, "a</s>a", false, true, 262, 2, 262);
  EXPECT_IDS(t, "", true, false, 1);
  EXPECT_DECODE(t, false, "ab c", 1, 264, 259, 265);
  EXPECT_DECODE(t, false, "\xc3\xa9", 259, 3 + 0xC3, 3 + 0xA9);
  EXPECT_DECODE(t, true, "<s> ab c", 1, 264, 259, 265);
  {
    dq_tok_stream st;
    dq_tok_stream_init(&st, false);
    char out[64];
    size_t n = 0;
    CHECK_OK(dq_tok_stream_push(t, &st, 259, out, sizeof out, &n), "");
    CHECK_EQ_INT(n, 0); /* the leading space is dropped */
    CHECK_OK(dq_tok_stream_push(t, &st, 3 + 0xC3, out, sizeof out, &n), "");
    CHECK_EQ_INT(n, 0);
    CHECK_OK(dq_tok_stream_push(t, &st, 3 + 0xA9, out, sizeof out, &n), "");
    CHECK(n == 2 && memcmp(out, "\xc3\xa9", 2) == 0);
    CHECK_OK(dq_tok_stream_push(t, &st, 264, out, sizeof out, &n), "");
    CHECK(n == 3 && memcmp(out, " ab", 3) == 0);
  }
  char piece[8];
  CHECK_EQ_INT(dq_tok_piece(t, 264, false, piece, sizeof piece), 3);
  CHECK(memcmp(piece, " ab", 3) == 0);
  CHECK_EQ_INT(dq_tok_piece(t, 2, false, piece, sizeof piece), 0);
  CHECK_EQ_INT(dq_tok_piece(t, 266, false, piece, sizeof piece), -1);
  dq_tok_free(t);

  /* without a space prefix (Gemma) "ab c" -> ab ▁ c */
  w = spm_file(0, 0);
  t = load(&w, DQ_OK, NULL);
  if (t) {
    EXPECT_IDS(t, "ab c", false, false, 263, 259, 265);
    EXPECT_DECODE(t, false, "ab c", 263, 259, 265);
    /* "ab▁ab" cut before the second word: ab | ▁ab */
    EXPECT_IDS(t, "ab ab", false, false, 263, 264);
  }
  dq_tok_free(t);
  /* with "b▁" (score 10) in the vocabulary the text must not be cut there:
   * a b ▁ a b -> b▁ first (10), then a+b (-1.5) -> a, b▁, ab */
  w = spm_file(0, 1);
  t = load(&w, DQ_OK, NULL);
  if (t)
    EXPECT_IDS(t, "ab ab", false, false, 260, 266, 263);
  dq_tok_free(t);
}

/* ---- WordPiece ------------------------------------------------------------
 * vocab: 0 [PAD] 1 [UNK] 2 [CLS] 3 [SEP] (control), 4 ▁hello, 5 ▁un, 6 aff,
 * 7 able, 8 ▁, (comma), 9 ▁world, 10 ▁cafe, 11 ▁!, 12 s, 13 ▁a */
static void test_wpm(void) {
  static const char *toks[] = {
      "[PAD]", "[UNK]", "[CLS]", "[SEP]", "\xe2\x96\x81hello",
      "\xe2\x96\x81un", "aff", "able", "\xe2\x96\x81,", "\xe2\x96\x81world",
      "\342\226\201cafe", "\xe2\x96\x81!", "s", "\342\226\201a"};
  static const int32_t types[] = {3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  gw w;
  gw_init(&w);
  gw_add_str(&w, "tokenizer.ggml.model", "bert");
  gw_add_arr_str(&w, "tokenizer.ggml.tokens", toks, 14);
  gw_add_arr_i32(&w, "tokenizer.ggml.token_type", types, 14);
  gw_add_u32(&w, "tokenizer.ggml.bos_token_id", 2);
  gw_add_u32(&w, "tokenizer.ggml.eos_token_id", 3);
  gw_add_u32(&w, "tokenizer.ggml.unknown_token_id", 1);
  gw_add_u32(&w, "tokenizer.ggml.seperator_token_id", 3);
  gw_add_u32(&w, "tokenizer.ggml.padding_token_id", 0);
  dq_tok *t = load(&w, DQ_OK, NULL);
  if (!t)
    return;
  CHECK_EQ_INT(dq_tok_algorithm(t), DQ_TOK_WPM);
  /* lowercased, punctuation split off, un+aff+able by longest match */
  EXPECT_IDS(t, "Hello, UNAFFABLE world!", false, false, 4, 8, 5, 6, 7, 9,
             11);
  EXPECT_IDS(t, "Hello, UNAFFABLE world!", true, false, 2, 4, 8, 5, 6, 7, 9,
             11, 3);
  /* accents stripped (precomposed and combining), then continuation "s" */
  EXPECT_IDS(t, "Caf\xc3\xa9s", false, false, 10, 12);
  EXPECT_IDS(t, "a\xcc\x81", false, false, 13);
  /* a word with an unmatched rest is one [UNK]; CJK is its own word */
  EXPECT_IDS(t, "xyz hello", false, false, 1, 4);
  EXPECT_IDS(t, "hello\xe4\xb8\xadhello", false, false, 4, 1, 4);
  /* control characters vanish, tabs/newlines separate */
  EXPECT_IDS(t, "hel\x01lo\tworld\n", false, false, 4, 9);
  EXPECT_IDS(t, "[CLS]hello", false, true, 2, 4);
  EXPECT_IDS(t, "", true, false, 2, 3);
  EXPECT_DECODE(t, false, "hello unaffable world !", 4, 5, 6, 7, 9, 11);
  dq_tok_free(t);
}

int main(void) {
  test_bpe();
  test_spm();
  test_wpm();
  return TEST_EXIT();
}
