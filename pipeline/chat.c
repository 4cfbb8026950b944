/*
 * chat.c - `docqa chat`: multi-turn sessions stored in the index.
 *
 * A session is turns (user/assistant) plus a rolling summary that covers
 * every turn up to some id. Each prompt holds the summary (system part), the
 * question first, the passages (within ask's passage budget), the user's
 * questions of the most recent `keep_turns` turns verbatim, and the
 * question again. When the turns after the summary exceed `history_budget`
 * tokens, the oldest of them (all but the last keep_turns) are folded into
 * the summary by the model. So the prompt is bounded by summary +
 * keep_turns questions + the passage budget, whatever the session length,
 * and pl_answer drops passages that would overflow the context.
 * Everything is in SQLite, so a restart (or Ctrl-C) loses nothing that was
 * answered.
 */
#include "pipeline_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Folding prompt and limits. A summary longer than this many tokens is cut
 * by the model's max_tokens, which bounds it. */
#define SUMMARY_MAX_TOKENS 160

struct dq_chat {
  dq_chat_opts o;
  dq_index *idx;
  dq_model *m;
  int64_t session;
  char *name;
  int n_ctx;
  const char *backend; /* static: "cpu" or "cuda" */
  int last_prompt_tokens;
  dq_error err;
};

static char *xstrdup(const char *s) { return strdup(s ? s : ""); }

dq_status dq_chat_open(const dq_chat_opts *o, const char *name,
                       dq_chat **out, dq_error *err) {
  *out = NULL;
  if (!name || !name[0])
    return dq_error_set(err, DQ_ERR_ARG, "a session name is needed (--session NAME)");
  dq_chat *c = calloc(1, sizeof *c);
  if (!c)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  c->o = *o;
  c->name = xstrdup(name);
  dq_status s = c->name ? DQ_OK : dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  if (s != DQ_OK)
    goto fail;
  s = pl_decoder_open(o->model, "language", "chat", o->backend, o->n_threads,
                      o->log, &c->m, err);
  if (s != DQ_OK)
    goto fail;
  dq_model_info mi;
  dq_model_get_info(c->m, &mi);
  c->n_ctx = mi.n_ctx;
  c->backend = strcmp(mi.backend, "cuda") == 0 ? "cuda" : "cpu";
  s = pl_index_open(o->index_dir, 0, o->log, &c->idx, err);
  if (s != DQ_OK)
    goto fail;
  s = dq_index_session_open(c->idx, name, 1, &c->session);
  if (s != DQ_OK) {
    dq_error_set(err, s, "%s", dq_index_errmsg(c->idx));
    goto fail;
  }
  *out = c;
  return DQ_OK;
fail:
  dq_chat_close(c);
  return s;
}

void dq_chat_close(dq_chat *c) {
  if (!c)
    return;
  dq_index_close(c->idx);
  dq_model_free(c->m);
  free(c->name);
  free(c);
}

void dq_chat_usage(const dq_chat *c, int *prompt_tokens, int *n_ctx) {
  *prompt_tokens = c->last_prompt_tokens;
  *n_ctx = c->n_ctx;
}

static dq_status idx_fail(dq_chat *c, dq_status s, dq_error *err) {
  return dq_error_set(err, s, "%s", dq_index_errmsg(c->idx));
}

/* Appends "User: text\n" style lines for turns[from..n) to *buf; with
 * users_only, the user's turns alone. */
static int append_turns(char **buf, const dq_turn *t, size_t from, size_t n,
                        int users_only) {
  dq_strbuf b = {0};
  if (*buf)
    dq_strbuf_adds(&b, *buf);
  for (size_t i = from; i < n; i++) {
    if (users_only && strcmp(t[i].role, "user") != 0)
      continue;
    dq_strbuf_printf(&b, "%s: %s\n",
                     strcmp(t[i].role, "user") == 0 ? "User" : "Assistant",
                     t[i].text);
  }
  if (b.oom) {
    free(b.p);
    return -1;
  }
  free(*buf);
  *buf = b.p;
  return 0;
}

/* Folds turns[0..n_fold) (after the current summary) into a new summary. */
static dq_status fold(dq_chat *c, const char *old_summary, const dq_turn *t,
                      size_t n_fold, dq_error *err) {
  char *conv = NULL;
  if (append_turns(&conv, t, 0, n_fold, 0) != 0)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  size_t need = strlen(conv) + (old_summary ? strlen(old_summary) : 0) + 256;
  char *prompt = malloc(need);
  if (!prompt) {
    free(conv);
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  }
  snprintf(prompt, need,
           "Summary so far: %s\n\nNew conversation:\n%s\nWrite a short "
           "summary of the whole conversation: the questions asked and the "
           "facts found, in at most four sentences.",
           old_summary && old_summary[0] ? old_summary : "(none)", conv);
  free(conv);
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  go.max_tokens = SUMMARY_MAX_TOKENS;
  dq_generate_result gr = {0};
  dq_status s = dq_generate(c->m, prompt, &go, &gr);
  free(prompt);
  if (s != DQ_OK)
    return dq_error_set(err, s, "summarising: %s", dq_model_errmsg(c->m));
  int32_t *tok = NULL;
  int nt = 0;
  if (dq_model_tokenize(c->m, gr.text, strlen(gr.text), 0, &tok, &nt) != DQ_OK)
    nt = 0;
  free(tok);
  s = dq_index_summary_set(c->idx, c->session, t[n_fold - 1].id, gr.text, nt);
  dq_generate_result_clear(&gr);
  if (s != DQ_OK)
    return idx_fail(c, s, err);
  dq_log(c->o.log, DQ_LOG_INFO, "folded %zu older turns into the summary",
         n_fold);
  return DQ_OK;
}

/* A question that leans on the conversation: short (under 8 words), or
 * opening with "and"/"what about", or using a pronoun that needs an
 * antecedent. */
static int is_follow_up(const char *q) {
  static const char *const cues[] = {"it",   "its",  "that", "this", "those",
                                     "these", "they", "them", "there", "he",
                                     "she",  "such", NULL};
  int words = 0;
  char w[32];
  const char *p = q;
  while (*p) {
    while (*p && !isalpha((unsigned char)*p))
      p++;
    size_t len = 0;
    while (isalpha((unsigned char)p[len]))
      len++;
    if (!len)
      break;
    if (len < sizeof w) {
      for (size_t i = 0; i < len; i++)
        w[i] = (char)tolower((unsigned char)p[i]);
      w[len] = '\0';
      if (words == 0 && (!strcmp(w, "and") || !strcmp(w, "also")))
        return 1;
      for (int i = 0; cues[i]; i++)
        if (!strcmp(w, cues[i]))
          return 1;
    }
    words++;
    p += len;
  }
  return words < 8 || strncasecmp(q, "what about", 10) == 0;
}

/* The code name a stored answer opens its facts with (ask.c index_facts:
 * "From the index: tax_compute_line (function), ..." or "From the index:
 * tax_compute_line is called in ..."), or NULL: none, or a defined term or
 * section (a follow-up's "it" is then the document more often than the
 * term). malloc'd. */
static char *facts_subject(const char *answer) {
  size_t lead = strlen(PL_FACTS_LEAD);
  if (!answer || strncmp(answer, PL_FACTS_LEAD, lead) != 0)
    return NULL;
  const char *p = answer + lead;
  size_t n = strcspn(p, " ");
  const char *after = p + n;
  if (n == 0 || n > 128 || (strncmp(after, " (", 2) && strncmp(after, " is ", 4)))
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)p[i]) && !strchr("_.:#>-$", p[i]))
      return NULL;
  if (!strncmp(after, " (term)", 7) || !strncmp(after, " (section)", 10))
    return NULL;
  return strndup(p, n);
}

/* What a follow-up calls the previous answer's code name. */
static const char *const it_words[] = {
    "this function", "that function", "this method", "that method",
    "this macro",    "that macro",    "it",          NULL};

/* question with its first of it_words (whole words, any case) replaced by
 * name, or NULL when it has none. malloc'd. */
static char *resolve_it(const char *question, const char *name) {
  for (const char *p = question; *p; p++) {
    if (p > question && isalnum((unsigned char)p[-1]))
      continue;
    for (int k = 0; it_words[k]; k++) {
      size_t w = strlen(it_words[k]);
      if (strncasecmp(p, it_words[k], w) != 0 || isalnum((unsigned char)p[w]) ||
          p[w] == '\'')
        continue;
      size_t a = (size_t)(p - question);
      size_t len = strlen(question) - w + strlen(name) + 1;
      char *r = malloc(len);
      if (r)
        snprintf(r, len, "%.*s%s%s", (int)a, question, name, p + w);
      return r;
    }
  }
  return NULL;
}

dq_status dq_chat_turn(dq_chat *c, const char *question, dq_text_fn_pl on_text,
                       void *user, dq_ask_result *res, dq_error *err) {
  memset(res, 0, sizeof *res);
  res->attention = "full";
  res->backend = c->backend;
  double t_start = dq_now_ms();
  if (!question || !question[strspn(question, " \t\r\n")])
    return dq_error_set(err, DQ_ERR_ARG, "the question is empty");
  int keep = c->o.keep_turns > 0 ? c->o.keep_turns : 4;
  char *summary = NULL, *recent = NULL, *query = NULL, *resolved = NULL;
  int64_t upto = 0;
  dq_turn *t = NULL;
  size_t n = 0;
  dq_hit *hits = NULL;
  size_t n_hits = 0;
  dq_status s = dq_index_summary_get(c->idx, c->session, &summary, &upto);
  if (s == DQ_ERR_NOTFOUND) {
    summary = NULL;
    upto = 0;
  } else if (s != DQ_OK) {
    s = idx_fail(c, s, err);
    goto done;
  }
  s = dq_index_turns_list(c->idx, c->session, upto, &t, &n);
  if (s != DQ_OK) {
    s = idx_fail(c, s, err);
    goto done;
  }
  /* The recent turns in the prompt are the user's questions: with the
   * assistant's answers there, the 135M model copied its last answer for
   * 4 of 12 follow-ups of tests/eval/chat.py and answered 6; with the
   * questions alone, 1 and 10 (the summary keeps what was answered). */
  size_t from = n > (size_t)keep ? n - (size_t)keep : 0;
  if (n && append_turns(&recent, t, from, n, 1) != 0) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* Follow-ups ("and the notice period?", "what does it say?") are
   * resolved for retrieval by adding the previous user question to the
   * query; a self-contained question is searched alone. */
  const char *prev = NULL;
  dq_turn *all = NULL; /* every turn, when the last question was folded */
  size_t n_all = 0;
  /* "Which function calls it?" ("... this function?") after an answer
   * whose facts open with a code name asks about that name: "Which
   * function calls tax_compute_line?" is searched, asked, and its facts
   * given. */
  if (is_follow_up(question) && n && !strcmp(t[n - 1].role, "assistant")) {
    char *name = facts_subject(t[n - 1].text);
    if (name) {
      resolved = resolve_it(question, name);
      free(name);
      if (resolved)
        dq_log(c->o.log, DQ_LOG_INFO, "follow-up read as: %s", resolved);
    }
  }
  const char *asked = resolved ? resolved : question;
  if (is_follow_up(question)) {
    for (size_t i = n; i-- > 0;)
      if (!strcmp(t[i].role, "user")) {
        prev = t[i].text;
        break;
      }
    /* the summary may have folded the previous question (few turns kept
     * verbatim): it is still in the index */
    if (!prev && upto > 0 &&
        dq_index_turns_list(c->idx, c->session, 0, &all, &n_all) == DQ_OK)
      for (size_t i = n_all; i-- > 0;)
        if (!strcmp(all[i].role, "user")) {
          prev = all[i].text;
          break;
        }
  }
  size_t qlen = strlen(asked) + (prev ? strlen(prev) : 0) + 2;
  query = malloc(qlen);
  if (query)
    snprintf(query, qlen, "%s%s%s", asked, prev ? " " : "", prev ? prev : "");
  int extended = prev != NULL;
  dq_turns_free(all, n_all); /* prev may point into it: after the copy */
  if (!query) {
    s = dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  double t0 = dq_now_ms();
  dq_search_job job = {0};
  job.index_dir = c->o.index_dir;
  job.embed_model = c->o.embed_model;
  job.backend = c->o.backend;
  job.n_threads = c->o.n_threads;
  job.k = c->o.k ? c->o.k : 4;
  job.log = c->o.log;
  job.config = c->o.config;
  s = dq_search_run(&job, query, &hits, &n_hits, &res->retrieval, err);
  if (s != DQ_OK)
    goto done;
  res->ms_retrieve = dq_now_ms() - t0;
  pl_answer_in in = {0};
  in.question = asked;
  in.summary = summary;
  in.recent = recent;
  /* a follow-up's query holds the previous question: its names ("how does
   * the NDA define Derived Materials") are not what this one asks */
  in.facts_named = extended;
  in.max_tokens = c->o.max_tokens;
  /* ask's budget: passages cut to their lines about the question, room
   * for the quote again before the question (whole chunks filling the
   * context: 2 of the 12 follow-ups answered, 3.1 s a turn; so: 6, 1.5 s) */
  in.passage_tokens = DQ_ASK_PASSAGE_TOKENS;
  in.on_text = on_text;
  in.user = user;
  in.log = c->o.log;
  dq_early_exit_opts ee;
  dq_config_early_exit(c->o.config, &ee);
  in.early_exit = &ee;
  s = pl_answer(c->m, &in, hits, n_hits, res, err);
  if (s != DQ_OK)
    goto done;
  c->last_prompt_tokens = res->n_prompt_tokens;
  s = dq_index_turn_add(c->idx, c->session, "user", question, 0, NULL);
  if (s == DQ_OK)
    s = dq_index_turn_add(c->idx, c->session, "assistant", res->answer,
                          res->n_answer_tokens, NULL);
  if (s != DQ_OK) {
    s = idx_fail(c, s, err);
    goto done;
  }
  /* Fold when the unsummarised turns (now n + 2) exceed the budget. */
  dq_turns_free(t, n);
  t = NULL;
  n = 0;
  s = dq_index_turns_list(c->idx, c->session, upto, &t, &n);
  if (s != DQ_OK) {
    s = idx_fail(c, s, err);
    goto done;
  }
  int budget = c->o.history_budget > 0 ? c->o.history_budget : c->n_ctx / 4;
  long used = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t *tok = NULL;
    int nt = 0;
    if (dq_model_tokenize(c->m, t[i].text, strlen(t[i].text), 0, &tok, &nt) != DQ_OK)
      nt = (int)(strlen(t[i].text) / 3);
    free(tok);
    used += nt + 4;
  }
  if (used > budget && n > (size_t)keep)
    s = fold(c, summary, t, n - (size_t)keep, err);
done:
  dq_turns_free(t, n);
  dq_hits_free(hits, n_hits);
  free(summary);
  free(recent);
  free(query);
  free(resolved);
  res->ms_total = dq_now_ms() - t_start;
  if (s != DQ_OK)
    dq_ask_result_clear(res);
  return s;
}

dq_status dq_chat_summary(dq_chat *c, char **text, dq_error *err) {
  int64_t upto = 0;
  dq_status s = dq_index_summary_get(c->idx, c->session, text, &upto);
  if (s == DQ_ERR_NOTFOUND) {
    *text = strdup("");
    return *text ? DQ_OK : dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  }
  return s == DQ_OK ? DQ_OK : idx_fail(c, s, err);
}

dq_status dq_chat_history(dq_chat *c, dq_turn **turns, size_t *n,
                          dq_error *err) {
  dq_status s = dq_index_turns_list(c->idx, c->session, 0, turns, n);
  return s == DQ_OK ? DQ_OK : idx_fail(c, s, err);
}

dq_status dq_chat_reset(dq_chat *c, dq_error *err) {
  dq_status s = dq_index_session_delete(c->idx, c->name);
  if (s == DQ_OK)
    s = dq_index_session_open(c->idx, c->name, 1, &c->session);
  return s == DQ_OK ? DQ_OK : idx_fail(c, s, err);
}
