/*
 * chat_template.c - chat prompt formats (chatml, gemma, llama3; layouts in
 * chat_template.h) and their detection from a model's Jinja template by
 * marker substrings. We never run Jinja: each family is written out by hand
 * from its published template, which is why only known families are
 * accepted and anything else is refused with a message saying so.
 */
#include "chat_template.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  dq_chat_tmpl t;
} names[] = {
    {"chatml", DQ_CHAT_CHATML},
    {"gemma", DQ_CHAT_GEMMA},
    {"llama3", DQ_CHAT_LLAMA3},
};

const char *dq_chat_tmpl_name(dq_chat_tmpl t) {
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].t == t)
      return names[i].name;
  return "unknown";
}

dq_status dq_chat_tmpl_from_name(const char *name, dq_chat_tmpl *out,
                                 dq_error *err) {
  for (size_t i = 0; name && i < sizeof names / sizeof *names; i++)
    if (strcmp(names[i].name, name) == 0) {
      *out = names[i].t;
      return DQ_OK;
    }
  return dq_error_set(err, DQ_ERR_NOTFOUND,
                      "unknown chat template '%s' (known: chatml, gemma, "
                      "llama3)",
                      name ? name : "(null)");
}

dq_status dq_chat_tmpl_detect(const char *src, dq_chat_tmpl *out,
                              dq_error *err) {
  if (src && strstr(src, "<|im_start|>"))
    *out = DQ_CHAT_CHATML;
  else if (src && strstr(src, "<start_of_turn>"))
    *out = DQ_CHAT_GEMMA;
  else if (src && strstr(src, "<|start_header_id|>"))
    *out = DQ_CHAT_LLAMA3;
  else
    return dq_error_set(err, DQ_ERR_UNSUPPORTED,
                        "unknown chat template (recognised: chatml "
                        "<|im_start|>, gemma <start_of_turn>, llama3 "
                        "<|start_header_id|>); choose one by name");
  return DQ_OK;
}

dq_status dq_chat_tmpl_for_model(dq_gguf *g, const char *override_name,
                                 dq_chat_tmpl *out, dq_error *err) {
  if (override_name)
    return dq_chat_tmpl_from_name(override_name, out, err);
  const char *src = NULL;
  if (!dq_gguf_has_key(g, "tokenizer.chat_template"))
    return dq_error_set(err, DQ_ERR_NOTFOUND,
                        "%s: no tokenizer.chat_template; choose a chat "
                        "template by name (chatml, gemma, llama3)",
                        dq_gguf_path(g));
  dq_status s = dq_gguf_get_str(g, "tokenizer.chat_template", &src, NULL);
  if (s)
    return dq_error_set(err, s, "%s", dq_gguf_errmsg(g));
  s = dq_chat_tmpl_detect(src, out, err);
  if (s)
    dq_error_prefix(err, "%s", dq_gguf_path(g));
  return s;
}

dq_status dq_chat_default_system(const char *src, char **out) {
  /* the newline after "system" is either a Jinja "\n" escape or a real one */
  static const char *const markers[] = {"<|im_start|>system\\n",
                                        "<|im_start|>system\n"};
  *out = NULL;
  for (size_t m = 0; src && m < 2; m++) {
    size_t mlen = strlen(markers[m]);
    for (const char *p = strstr(src, markers[m]); p;
         p = strstr(p + 1, markers[m])) {
      const char *text = p + mlen;
      const char *end = strstr(text, "<|im_end|>");
      size_t n = end ? (size_t)(end - text) : 0;
      /* a literal: no quote, brace or escape between the markers */
      if (!n || memchr(text, '\'', n) || memchr(text, '"', n) ||
          memchr(text, '{', n) || memchr(text, '\\', n))
        continue;
      *out = strndup(text, n);
      return *out ? DQ_OK : DQ_ERR_NOMEM;
    }
  }
  return DQ_OK;
}

/* Content without leading/trailing ASCII whitespace (llama3's | trim). */
static void sb_trimmed(dq_strbuf *b, const char *s) {
  size_t n = strlen(s);
  while (n && strchr(" \t\n\r\v\f", s[0]))
    s++, n--;
  while (n && strchr(" \t\n\r\v\f", s[n - 1]))
    n--;
  dq_strbuf_add(b, s, n);
}

static bool role_ok(const char *r) {
  return r && (strcmp(r, "system") == 0 || strcmp(r, "user") == 0 ||
               strcmp(r, "assistant") == 0);
}

dq_status dq_chat_apply(dq_chat_tmpl t, const dq_chat_msg *m, size_t n,
                        bool add_generation_prompt, char **out,
                        size_t *out_len, dq_error *err) {
  dq_strbuf b = {0};
  dq_status s = DQ_OK;
  *out = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!role_ok(m[i].role) || !m[i].content) {
      s = dq_error_set(err, DQ_ERR_ARG,
                       "chat message %zu: role '%s' is not system, user or "
                       "assistant (or content is NULL)",
                       i, m[i].role ? m[i].role : "(null)");
      goto fail;
    }
  }
  switch (t) {
  case DQ_CHAT_CHATML:
    for (size_t i = 0; i < n; i++) {
      dq_strbuf_adds(&b, "<|im_start|>");
      dq_strbuf_adds(&b, m[i].role);
      dq_strbuf_adds(&b, "\n");
      dq_strbuf_adds(&b, m[i].content);
      dq_strbuf_adds(&b, "<|im_end|>\n");
    }
    if (add_generation_prompt)
      dq_strbuf_adds(&b, "<|im_start|>assistant\n");
    break;
  case DQ_CHAT_GEMMA: {
    /* Gemma has no system role: its text opens the first user turn. */
    const char *system = NULL;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(m[i].role, "system") == 0) {
        if (i != 0) {
          s = dq_error_set(err, DQ_ERR_ARG,
                           "chat message %zu: gemma allows a system message "
                           "only first",
                           i);
          goto fail;
        }
        system = m[i].content;
        continue;
      }
      bool user = strcmp(m[i].role, "user") == 0;
      dq_strbuf_adds(&b, "<start_of_turn>");
      dq_strbuf_adds(&b, user ? "user" : "model");
      dq_strbuf_adds(&b, "\n");
      if (system && user) {
        dq_strbuf_adds(&b, system);
        dq_strbuf_adds(&b, "\n\n");
        system = NULL;
      }
      sb_trimmed(&b, m[i].content);
      dq_strbuf_adds(&b, "<end_of_turn>\n");
    }
    if (add_generation_prompt)
      dq_strbuf_adds(&b, "<start_of_turn>model\n");
    break;
  }
  case DQ_CHAT_LLAMA3:
    for (size_t i = 0; i < n; i++) {
      dq_strbuf_adds(&b, "<|start_header_id|>");
      dq_strbuf_adds(&b, m[i].role);
      dq_strbuf_adds(&b, "<|end_header_id|>\n\n");
      sb_trimmed(&b, m[i].content);
      dq_strbuf_adds(&b, "<|eot_id|>");
    }
    if (add_generation_prompt)
      dq_strbuf_adds(&b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    break;
  default:
    s = dq_error_set(err, DQ_ERR_ARG, "chat template %d is not known",
                     (int)t);
    goto fail;
  }
  if (!b.p)
    dq_strbuf_add(&b, "", 0);
  if (b.oom) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "chat prompt");
    goto fail;
  }
  *out = b.p;
  if (out_len)
    *out_len = b.n;
  return DQ_OK;
fail:
  free(b.p);
  return s;
}
