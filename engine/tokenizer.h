/*
 * tokenizer.h - text <-> token ids for the models docqa ships, built from a
 * GGUF file's tokenizer.* metadata. Private to engine/.
 *
 * Three algorithms, chosen by `tokenizer.ggml.model`:
 *   "gpt2"  byte-level BPE (SmolLM2, Qwen2, Llama 3): the text is split by the
 *           pre-tokenizer regexes named by `tokenizer.ggml.pre` (PCRE2, JIT),
 *           each piece is mapped to GPT-2's byte alphabet and merged by the
 *           ranks in `tokenizer.ggml.merges`.
 *   "llama" SentencePiece-style BPE (Gemma): spaces become U+2581 "▁", adjacent
 *           pieces merge by highest `tokenizer.ggml.scores`, characters not in
 *           the vocabulary fall back to <0xXX> byte tokens.
 *   "bert"  WordPiece (MiniLM/BERT embedders): clean, lowercase, strip accents,
 *           split on whitespace/punctuation/CJK, greedy longest match with
 *           word-initial pieces stored as "▁word" and continuations plain.
 * Special tokens (types CONTROL/USER_DEFINED/UNKNOWN) are recognised in the
 * text first: USER_DEFINED always, CONTROL (e.g. "<|im_start|>") only with
 * parse_special. This mirrors llama.cpp's behaviour, which the fixtures in
 * tests/fixtures/tokenizer/ check, with one deliberate difference: llama.cpp
 * forces a few token texts (e.g. "</s>") to CONTROL by name; we keep the
 * type the file gives, which is what the model's own tokenizer does.
 *
 * Not here: chat templates (chat_template.h), sampling, the model.
 * Thread safety: a dq_tok is read-only after load except for its error
 * message; encode/decode from several threads is fine when they succeed.
 */
#ifndef DQ_ENGINE_TOKENIZER_H
#define DQ_ENGINE_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dq_tok dq_tok;

typedef enum {
  DQ_TOK_BPE = 1, /* "gpt2" */
  DQ_TOK_SPM = 2, /* "llama" */
  DQ_TOK_WPM = 3, /* "bert" */
} dq_tok_algo;

/* Token types as stored in tokenizer.ggml.token_type. */
typedef enum {
  DQ_TOKEN_NORMAL = 1,
  DQ_TOKEN_UNKNOWN = 2,
  DQ_TOKEN_CONTROL = 3,
  DQ_TOKEN_USER_DEFINED = 4,
  DQ_TOKEN_UNUSED = 5,
  DQ_TOKEN_BYTE = 6,
} dq_token_type;

/* Limits on what a file may ask of us (DQ_ERR_LIMIT beyond them). */
#define DQ_TOK_MAX_VOCAB (1 << 22)
#define DQ_TOK_MAX_TOKEN_BYTES 1024

/* Builds a tokenizer from g's tokenizer.* keys. Everything needed is copied:
 * g may be closed afterwards. Unknown `tokenizer.ggml.model` or `.pre` values
 * are refused by name (DQ_ERR_UNSUPPORTED); missing or mistyped keys give
 * the gguf reader's message. Free with dq_tok_free. */
dq_status dq_tok_load(dq_gguf *g, dq_tok **out, dq_error *err);
/* Accepts NULL. */
void dq_tok_free(dq_tok *t);
/* Message of the last failing call on t. */
const char *dq_tok_errmsg(const dq_tok *t);

dq_tok_algo dq_tok_algorithm(const dq_tok *t);
const char *dq_tok_model_name(const dq_tok *t); /* "gpt2", "llama", "bert" */
const char *dq_tok_pre_name(const dq_tok *t);   /* tokenizer.ggml.pre or "default" */
int32_t dq_tok_n_vocab(const dq_tok *t);

/* Special ids, -1 when the model has none. For bert, bos is [CLS] and
 * eos/sep is [SEP]. eot is the end-of-turn token of chat models
 * (<|im_end|>, <end_of_turn>, <|eot_id|>) when the vocabulary has one. */
int32_t dq_tok_bos(const dq_tok *t);
int32_t dq_tok_eos(const dq_tok *t);
int32_t dq_tok_eot(const dq_tok *t);
int32_t dq_tok_unk(const dq_tok *t);
int32_t dq_tok_pad(const dq_tok *t);
int32_t dq_tok_sep(const dq_tok *t);
bool dq_tok_add_bos(const dq_tok *t); /* tokenizer.ggml.add_bos_token */
bool dq_tok_add_eos(const dq_tok *t); /* tokenizer.ggml.add_eos_token */

/* True for tokens that end generation: eos, eot and the usual end markers
 * present in the vocabulary (<|endoftext|>, <|im_end|>, <end_of_turn>,
 * <|eot_id|>, <|end_of_text|>, <eos>). */
bool dq_tok_is_eog(const dq_tok *t, int32_t id);
/* Token type of id (DQ_TOKEN_*), 0 for an id out of range. */
dq_token_type dq_tok_type(const dq_tok *t, int32_t id);
/* The vocabulary string of id exactly as stored (byte-level alphabet for
 * gpt2, "▁" for spaces in llama/bert); NULL when out of range. Valid until
 * dq_tok_free. */
const char *dq_tok_text(const dq_tok *t, int32_t id);
/* Id whose vocabulary string is exactly `text`, or -1. */
int32_t dq_tok_find(const dq_tok *t, const char *text);

/* Encodes n_bytes of UTF-8 text. add_special adds what the model asks for
 * (BOS when add_bos_token, EOS when add_eos_token; for bert [CLS] ... [SEP]).
 * parse_special turns control-token text such as "<|im_start|>" into that
 * token instead of encoding its characters. *ids is malloc'd (caller frees
 * with free(), also when *n_ids is 0). Invalid UTF-8 is never refused: gpt2
 * reads it as U+FFFD (as llama.cpp), llama falls back to byte tokens, bert
 * drops it. Errors: DQ_ERR_NOMEM, DQ_ERR_ARG. */
dq_status dq_tok_encode(dq_tok *t, const char *text, size_t n_bytes,
                        bool add_special, bool parse_special, int32_t **ids,
                        size_t *n_ids);

/* The bytes one token stands for, as llama.cpp's token_to_piece: byte-level
 * decoding for gpt2, "▁" -> " " and <0xXX> -> byte for llama, "##"-less
 * pieces with a leading space for word starts for bert. Control tokens give
 * their text only when render_special, else nothing. Writes up to cap bytes
 * to buf (no NUL) and returns the full length (may exceed cap: call again
 * with a larger buffer), or -1 for an id out of range. A piece may be part
 * of a UTF-8 character: use dq_tok_stream for display. */
int dq_tok_piece(const dq_tok *t, int32_t id, bool render_special, char *buf,
                 size_t cap);

/* Decodes ids to UTF-8 text (malloc'd, NUL-terminated, caller frees).
 * Drops the space SentencePiece/WordPiece put before the first word. Byte
 * sequences that are not valid UTF-8 are kept as they are. */
dq_status dq_tok_decode(dq_tok *t, const int32_t *ids, size_t n_ids,
                        bool render_special, char **text, size_t *n_bytes);

/* Streaming detokenizer: feed ids one at a time, get back only complete
 * UTF-8 characters; bytes of a character split across tokens wait inside.
 * A plain value: zero it with dq_tok_stream_init, no free needed. */
typedef struct dq_tok_stream {
  uint8_t pending[8];
  uint32_t n_pending;
  bool started; /* a piece has been emitted (leading-space rule) */
  bool render_special;
} dq_tok_stream;

void dq_tok_stream_init(dq_tok_stream *s, bool render_special);
/* Appends the text that `id` completes to out[0..cap) and sets *n_out.
 * DQ_ERR_FULL (nothing consumed) when cap is too small: 4 + the longest
 * piece (DQ_TOK_MAX_TOKEN_BYTES + 8) always suffices. */
dq_status dq_tok_stream_push(const dq_tok *t, dq_tok_stream *s, int32_t id,
                             char *out, size_t cap, size_t *n_out);
/* Emits whatever is still pending (an incomplete character) as U+FFFD for
 * each stuck byte sequence. cap >= 8 suffices. */
size_t dq_tok_stream_flush(dq_tok_stream *s, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DQ_ENGINE_TOKENIZER_H */
