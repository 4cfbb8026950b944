/*
 * chat_template.h - turning a conversation into the prompt text a chat model
 * was trained on, for the template families docqa ships models for:
 *
 *   chatml  (SmolLM2, Qwen2.5)  <|im_start|>role\ncontent<|im_end|>\n ...
 *                               generation prompt: <|im_start|>assistant\n
 *   gemma   (Gemma 2/3)         <start_of_turn>user\ncontent<end_of_turn>\n
 *                               assistant is "model"; a system message is
 *                               prepended to the first user turn ("\n\n");
 *                               generation prompt: <start_of_turn>model\n
 *   llama3  (Llama 3.x)         <|start_header_id|>role<|end_header_id|>\n\n
 *                               content<|eot_id|>  (content trimmed)
 *                               generation prompt: assistant header
 *
 * The BOS token is not written: the tokenizer adds it (add_special). The
 * family is chosen from the model's `tokenizer.chat_template` (a Jinja
 * source we do not execute) by marker substrings, as llama.cpp's
 * llm_chat_detect_template does, or by name. Private to engine/.
 */
#ifndef DQ_ENGINE_CHAT_TEMPLATE_H
#define DQ_ENGINE_CHAT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "gguf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DQ_CHAT_CHATML = 1,
  DQ_CHAT_GEMMA = 2,
  DQ_CHAT_LLAMA3 = 3,
} dq_chat_tmpl;

typedef struct dq_chat_msg {
  const char *role;    /* "system", "user" or "assistant" */
  const char *content; /* UTF-8, NUL-terminated */
} dq_chat_msg;

/* "chatml", "gemma", "llama3". */
const char *dq_chat_tmpl_name(dq_chat_tmpl t);
/* By name ("chatml", "gemma", "llama3"); DQ_ERR_NOTFOUND naming the
 * unknown name and the known ones. */
dq_status dq_chat_tmpl_from_name(const char *name, dq_chat_tmpl *out,
                                 dq_error *err);
/* From a Jinja template source by its markers; DQ_ERR_UNSUPPORTED when none
 * is recognised ("unknown chat template"). */
dq_status dq_chat_tmpl_detect(const char *jinja_src, dq_chat_tmpl *out,
                              dq_error *err);
/* For a model: `override_name` when not NULL, else detection on the file's
 * tokenizer.chat_template; a file without one is an error that says to pass
 * a template name. */
dq_status dq_chat_tmpl_for_model(dq_gguf *g, const char *override_name,
                                 dq_chat_tmpl *out, dq_error *err);

/* The system message a ChatML template inserts when the conversation has
 * none (SmolLM2: "You are a helpful AI assistant named SmolLM, ...", Qwen2.5:
 * "You are Qwen, ..."), found as a literal '<|im_start|>system\n...<|im_end|>'
 * string in the Jinja source. *out is malloc'd (caller frees), or NULL when
 * the template has no such default; DQ_ERR_NOMEM is the only error. */
dq_status dq_chat_default_system(const char *jinja_src, char **out);

/* Renders messages[0..n) and, when add_generation_prompt, the opening of
 * the assistant's turn. *out is malloc'd, NUL-terminated (caller frees);
 * *out_len (may be NULL) its length. Unknown roles are DQ_ERR_ARG; gemma
 * refuses a system message that is not first. */
dq_status dq_chat_apply(dq_chat_tmpl t, const dq_chat_msg *messages,
                        size_t n, bool add_generation_prompt, char **out,
                        size_t *out_len, dq_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DQ_ENGINE_CHAT_TEMPLATE_H */
