/*
 * model_tok.c - the model's text side: wraps the tokenizer (tokenizer.h,
 * owned by its engineer) behind engine.h's dq_model_tokenize /
 * dq_model_detokenize / dq_model_is_eog, and builds a one-turn chat prompt.
 *
 * Chat prompts go through chat_template.h (the tokenizer engineer's
 * module): the family comes from `tokenizer.chat_template`, or, for files
 * without one (base models), from the vocabulary's turn markers. A
 * template's built-in default system message (SmolLM2's, Qwen2.5's) is added the way
 * its Jinja source does when the caller gives none.
 */
#include "model.h"
#include "chat_template.h"
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dq_status dq_tok_glue_open(dq_model *m) {
  dq_tok *t = NULL;
  if (!dq_gguf_has_key(m->gguf, "tokenizer.ggml.model")) {
    /* weights without a vocabulary still run on token ids */
    m->tok = NULL;
    m->bos = m->eos = -1;
    m->chat_template = "";
    dq_log(m->log, DQ_LOG_WARN, "%s: no tokenizer in the file; only token "
           "ids can be used", dq_gguf_path(m->gguf));
    return DQ_OK;
  }
  dq_status s = dq_tok_load(m->gguf, &t, &m->err);
  if (s)
    return s;
  m->tok = t;
  m->bos = dq_tok_bos(t);
  m->eos = dq_tok_eos(t);
  const char *tmpl = NULL;
  if (dq_gguf_get_str(m->gguf, "tokenizer.chat_template", &tmpl, NULL))
    tmpl = NULL;
  dq_chat_tmpl ct = 0;
  dq_error cerr = {0};
  m->chat_tmpl = 0;
  m->chat_template = "";
  m->chat_default_system = NULL;
  if (m->hp.arch == DQ_ARCH_BERT)
    return DQ_OK;
  if (tmpl && dq_chat_tmpl_detect(tmpl, &ct, &cerr) == DQ_OK)
    m->chat_tmpl = (int)ct;
  else if (!tmpl && dq_tok_find(t, "<start_of_turn>") >= 0)
    m->chat_tmpl = DQ_CHAT_GEMMA;
  else if (!tmpl && dq_tok_find(t, "<|im_start|>") >= 0)
    m->chat_tmpl = DQ_CHAT_CHATML;
  if (m->chat_tmpl)
    m->chat_template = dq_chat_tmpl_name((dq_chat_tmpl)m->chat_tmpl);
  else
    dq_log(m->log, DQ_LOG_INFO, "%s: no known chat template; prompts are "
           "used as plain text", dq_gguf_path(m->gguf));
  if (tmpl && strstr(tmpl, "You are a helpful AI assistant named SmolLM"))
    m->chat_default_system =
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face";
  else if (tmpl && strstr(tmpl, "You are Qwen, created by Alibaba Cloud. You "
                                "are a helpful assistant."))
    m->chat_default_system =
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
  return DQ_OK;
}

void dq_tok_glue_close(dq_model *m) {
  dq_tok_free(m->tok);
  m->tok = NULL;
}

dq_status dq_model_tokenize(dq_model *m, const char *text, size_t len,
                            int add_special, int32_t **tokens, int *n_tokens) {
  *tokens = NULL;
  *n_tokens = 0;
  if (!m || !text)
    return DQ_ERR_ARG;
  if (!m->tok)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s has no tokenizer", dq_gguf_path(m->gguf));
  size_t n = 0;
  dq_status s = dq_tok_encode(m->tok, text, len, add_special != 0, true,
                              tokens, &n);
  if (s)
    return dq_error_set(&m->err, s, "tokenize: %s", dq_tok_errmsg(m->tok));
  if (n > (size_t)1 << 30) {
    free(*tokens);
    *tokens = NULL;
    return dq_error_set(&m->err, DQ_ERR_LIMIT, "tokenize: %zu tokens", n);
  }
  *n_tokens = (int)n;
  return DQ_OK;
}

dq_status dq_model_detokenize(dq_model *m, const int32_t *tokens, int n,
                              char **text) {
  *text = NULL;
  if (!m || (n > 0 && !tokens) || n < 0)
    return DQ_ERR_ARG;
  if (!m->tok)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s has no tokenizer", dq_gguf_path(m->gguf));
  size_t nb = 0;
  dq_status s = dq_tok_decode(m->tok, tokens, (size_t)n, false, text, &nb);
  if (s)
    return dq_error_set(&m->err, s, "detokenize: %s", dq_tok_errmsg(m->tok));
  return DQ_OK;
}

int dq_model_is_eog(const dq_model *m, int32_t token) {
  return m && m->tok && dq_tok_is_eog(m->tok, token);
}

dq_status dq_model_chat_prompt(dq_model *m, const char *system,
                               const char *user, char **prompt) {
  *prompt = NULL;
  if (!m || !user)
    return DQ_ERR_ARG;
  if (!m->chat_tmpl) {
    size_t n = (system ? strlen(system) + 2 : 0) + strlen(user) + 1;
    char *p = malloc(n);
    if (!p)
      return dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
    snprintf(p, n, "%s%s%s", system ? system : "", system ? "\n\n" : "",
             user);
    *prompt = p;
    return DQ_OK;
  }
  dq_chat_msg msgs[2];
  size_t n = 0;
  if (!system)
    system = m->chat_default_system;
  if (system)
    msgs[n++] = (dq_chat_msg){"system", system};
  msgs[n++] = (dq_chat_msg){"user", user};
  return dq_chat_apply((dq_chat_tmpl)m->chat_tmpl, msgs, n, true, prompt, NULL,
                       &m->err);
}
