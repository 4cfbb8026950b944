/*
 * engine.c - the public face of the runtime (engine.h): opening a model
 * (GGUF + backend + weights + tokenizer), model info, tokenize/detokenize
 * wrappers, embeddings, and dq_generate (prefill, sample, stream, stop
 * strings) on top of dq_seq and dq_sampler, with early exit (speculate.c)
 * as the optional way of producing the next tokens.
 *
 * Not here: the layers themselves (forward.c), tensor binding (model.c),
 * the GGUF reader and tokenizers (gguf.c, tokenizer*.c by their owners).
 */
#include "model.h"
#include "speculate.h"
#include "tok_internal.h" /* tok_utf8_sanitize */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 once tests/cuda/device-check.sh has passed on a GPU: --backend auto
 * then picks the CUDA backend when a device answers. */
#define CUDA_VALIDATED 0

/* Why reading n bytes of weights into huge-page memory may not pay here
 * (transparent huge pages off, or more than half the available memory),
 * or "" when it should. */
static void weights_read_doubt(uint64_t n, char *why, size_t why_n) {
  char buf[128] = "";
  why[0] = 0;
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f))
      buf[0] = 0;
    fclose(f);
  }
  if (!buf[0] || strstr(buf, "[never]")) {
    snprintf(why, why_n, "transparent huge pages are %s here",
             buf[0] ? "off" : "not available");
    return;
  }
  unsigned long long avail_kb = 0;
  if ((f = fopen("/proc/meminfo", "r"))) {
    char line[128];
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &avail_kb) == 1)
        break;
    fclose(f);
  }
  if (avail_kb && n / 1024 > avail_kb / 2)
    snprintf(why, why_n,
             "the weights (%llu MB) are more than half the available memory "
             "(%llu MB)",
             (unsigned long long)(n >> 20), avail_kb >> 10);
}

/* The CPU backend's weights: left in the mapping, or read into huge-page
 * memory (dq_weights_mode, DOCQA_WEIGHTS). */
static dq_status cpu_weights(dq_model *m, const char *path) {
  dq_weights_mode mode = m->opts.weights;
  const char *env = getenv("DOCQA_WEIGHTS");
  if (env && *env) {
    if (!strcmp(env, "map"))
      mode = DQ_WEIGHTS_MAP;
    else if (!strcmp(env, "read"))
      mode = DQ_WEIGHTS_READ;
    else
      return dq_error_set(&m->err, DQ_ERR_ARG,
                          "DOCQA_WEIGHTS must be map or read, not '%s'", env);
  }
  if (mode != DQ_WEIGHTS_READ)
    return DQ_OK;
  char why[160];
  weights_read_doubt(dq_gguf_file_bytes(m->gguf), why, sizeof why);
  if (why[0])
    dq_log(m->log, DQ_LOG_WARN,
           "%s: reading the weights into memory although %s", path, why);
  double t0 = dq_now_ms();
  uint64_t n = 0;
  dq_error e = {0};
  dq_status s = dq_gguf_read_data(m->gguf, &n, &e);
  if (s == DQ_ERR_NOMEM) {
    dq_log(m->log, DQ_LOG_WARN, "%s; the weights stay in the file's mapping",
           e.msg);
    return DQ_OK;
  }
  if (s) {
    m->err = e;
    return s;
  }
  m->weights_read = 1;
  dq_log(m->log, DQ_LOG_INFO,
         "%s: weights read into memory advised for huge pages (%llu MB in "
         "%.2f s)",
         path, (unsigned long long)(n >> 20), (dq_now_ms() - t0) / 1000.0);
  return DQ_OK;
}

void dq_model_opts_init(dq_model_opts *o) {
  memset(o, 0, sizeof *o);
  o->backend = DQ_BACKEND_AUTO;
  o->kv_type = DQ_KV_F16;
}

dq_status dq_model_open(const char *path, const dq_model_opts *o,
                        dq_model **out, dq_error *err) {
  *out = NULL;
  dq_model_opts def;
  if (!o) {
    dq_model_opts_init(&def);
    o = &def;
  }
  if (!path)
    return dq_error_set(err, DQ_ERR_ARG, "no model path given");
  dq_model *m = calloc(1, sizeof *m);
  if (!m)
    return dq_error_set(err, DQ_ERR_NOMEM, "out of memory");
  m->opts = *o;
  m->log = o->log;
  const char *exact = getenv("DOCQA_EMBED_EXACT");
  if (exact && *exact && strcmp(exact, "0") != 0)
    m->opts.q8_at_load = 0;
  dq_status s = dq_gguf_open(path, &m->gguf, &m->err);
  if (s)
    goto fail;
  /* AUTO: CUDA when this build has it and a device answers, else the CPU;
   * the log says which and why. A device that is present but fails to
   * start is an error, never a silent switch to the CPU. Until the CUDA
   * backend has passed tests/cuda on a GPU (CUDA_VALIDATED), AUTO stays on
   * the CPU and says so: wrong numbers would not announce themselves. */
  dq_backend_kind kind = o->backend;
  if (kind == DQ_BACKEND_AUTO) {
    dq_cuda_info ci;
    dq_cuda_probe(&ci);
    if (ci.n_devices > 0 && !ci.error[0] && !CUDA_VALIDATED) {
      kind = DQ_BACKEND_CPU;
      dq_log(m->log, DQ_LOG_INFO,
             "backend auto: using cpu (device %d: %s is present, but the "
             "cuda backend has not yet been checked on a GPU: --backend "
             "cuda to use it)",
             o->cuda_device, ci.device_name);
    } else if (ci.n_devices > 0 && !ci.error[0]) {
      kind = DQ_BACKEND_CUDA;
      dq_log(m->log, DQ_LOG_INFO, "backend auto: using cuda (device %d: %s)",
             o->cuda_device, ci.device_name);
    } else {
      kind = DQ_BACKEND_CPU;
      dq_log(m->log, DQ_LOG_INFO, "backend auto: using cpu (%s)",
             ci.built ? (ci.error[0] ? ci.error : "no CUDA device found")
                      : "built without CUDA");
    }
  }
  if (kind == DQ_BACKEND_CUDA)
    s = dq_backend_cuda_init(o->cuda_device, &m->be, &m->err);
  else
    s = dq_backend_cpu_init(o->n_threads, &m->be, &m->err);
  if (s)
    goto fail;
  if (m->be->i.notice && m->be->i.notice(m->be->ctx))
    dq_log(m->log, DQ_LOG_WARN, "%s backend: %s", be_name(m->be),
           m->be->i.notice(m->be->ctx));
  if (dq_backend_cpu_caps(m->be) && (s = cpu_weights(m, path)))
    goto fail;
  if ((s = dq_model_load_weights(m)))
    goto fail;
  dq_model_set_graphs(m, o->cuda_graphs);
  const char *name = NULL;
  if (dq_gguf_get_str(m->gguf, "general.name", &name, NULL) != DQ_OK)
    name = "";
  m->name = name;
  m->n_ctx_default = o->n_ctx > 0 ? o->n_ctx
                                  : (m->hp.n_ctx_train < 4096 ? m->hp.n_ctx_train
                                                              : 4096);
  if ((s = dq_tok_glue_open(m)))
    goto fail;
  const dq_cpu_caps *caps = dq_backend_cpu_caps(m->be);
  dq_log(m->log, DQ_LOG_INFO,
         "%s: %s, %d layers, n_embd %d, %d heads (%d kv), vocab %d, backend "
         "%s%s%s", /* cpu: ", kernels avx2 (avx2 avxvnni)" */
         path, m->hp.arch_name, m->hp.n_layer, m->hp.n_embd, m->hp.n_head,
         m->hp.n_head_kv, m->hp.n_vocab, be_name(m->be),
         caps ? ", kernels " : "", caps ? caps->desc : "");
  if (m->hp.n_expert)
    dq_log(m->log, DQ_LOG_INFO,
           "%s: %d experts (%d per token%s), expert width %d, %d dense "
           "layers first%s",
           path, m->hp.n_expert, m->hp.moe.n_used,
           m->hp.moe.n_group > 1 ? ", two-level routing" : "",
           m->hp.n_ff_exp, m->hp.n_layer_dense,
           m->hp.mla ? ", latent attention" : "");
  *out = m;
  return DQ_OK;
fail:
  if (err) {
    err->code = m->err.code ? m->err.code : s;
    memcpy(err->msg, m->err.msg, sizeof err->msg);
  }
  dq_model_free(m);
  return s;
}

void dq_model_free(dq_model *m) {
  if (!m)
    return;
  dq_tok_glue_close(m);
  dq_model_unload_weights(m);
  dq_backend_free(m->be);
  dq_gguf_close(m->gguf);
  free(m);
}

const char *dq_model_errmsg(const dq_model *m) {
  return m ? dq_error_msg(&m->err) : "no model";
}

void dq_model_graph_stats(const dq_model *m, dq_graph_stats *st) {
  memset(st, 0, sizeof *st);
  st->auto_choice = -1;
  if (!m || !m->be->i.graph_stats)
    return;
  m->be->i.graph_stats(m->be->ctx, st);
  if (m->graph_mode == DQ_GRAPHS_AUTO) {
    st->auto_choice = m->gtune.choice;
    st->us_graph = m->gtune.med[1] * 1e6;
    st->us_direct = m->gtune.med[0] * 1e6;
  }
}

void dq_model_set_graphs(dq_model *m, dq_graphs_mode mode) {
  if (!m)
    return;
  m->graph_mode = m->be->i.graph_begin ? mode : DQ_GRAPHS_OFF;
  dq_graph_tune_init(&m->gtune);
}

void dq_model_set_fused(dq_model *m, int on) {
  if (m)
    m->no_fused = !on;
}

void dq_model_get_info(const dq_model *m, dq_model_info *info) {
  memset(info, 0, sizeof *info);
  const dq_hparams *hp = &m->hp;
  info->arch = hp->arch_name;
  info->name = m->name ? m->name : "";
  info->backend = be_name(m->be);
  const dq_cpu_caps *caps = dq_backend_cpu_caps(m->be);
  info->cpu_path = caps ? caps->desc : "";
  info->chat_template = m->chat_template ? m->chat_template : "";
  info->weights = !caps ? "uploaded" : m->weights_read ? "read" : "mapped";
  info->is_encoder = hp->arch == DQ_ARCH_BERT;
  info->n_q8_at_load = m->n_requant;
  info->n_ctx_train = hp->n_ctx_train;
  info->n_ctx = m->n_ctx_default;
  info->n_embd = hp->n_embd;
  info->n_vocab = hp->n_vocab;
  info->n_layer = hp->n_layer;
  info->n_head = hp->n_head;
  info->n_head_kv = hp->n_head_kv;
  info->head_dim = hp->head_dim;
  info->n_ff = hp->n_ff;
  info->n_expert = hp->n_expert;
  info->n_expert_used = hp->moe.n_used;
  info->n_expert_group = hp->moe.n_group > 1 ? hp->moe.n_group : 1;
  info->n_expert_group_used =
      hp->moe.n_group > 1 ? hp->moe.n_group_used : info->n_expert_group;
  info->n_layer_dense = hp->n_expert ? hp->n_layer_dense : hp->n_layer;
  info->n_ff_exp = hp->n_ff_exp;
  info->kv_lora_rank = hp->mla ? hp->kv_lora_rank : 0;
  info->bos = m->bos;
  info->eos = m->eos;
}

/* ---- embeddings ---------------------------------------------------------- */

int dq_model_embed_dim(const dq_model *m) { return m ? m->hp.n_embd : 0; }

dq_status dq_model_embed_tokens(dq_model *m, const int32_t *tokens, int n,
                                float *out) {
  if (!m || !out)
    return DQ_ERR_ARG;
  if (m->hp.arch != DQ_ARCH_BERT)
    return dq_error_set(&m->err, DQ_ERR_UNSUPPORTED,
                        "%s (%s) is not an embedding model", m->name,
                        m->hp.arch_name);
  return dq_forward_encode(m, tokens, n, out);
}

dq_status dq_model_embed(dq_model *m, const char *const *texts, int n_texts,
                         float *out) {
  if (!m || !texts || n_texts < 0 || !out)
    return DQ_ERR_ARG;
  for (int i = 0; i < n_texts; i++) {
    int32_t *toks = NULL;
    int n = 0;
    dq_status s = dq_model_tokenize(m, texts[i], strlen(texts[i]), 1, &toks, &n);
    if (s)
      return s;
    if (n > m->hp.n_ctx_train) {
      dq_log(m->log, DQ_LOG_INFO, "embed: text %d cut from %d to %d tokens", i,
             n, m->hp.n_ctx_train);
      toks[m->hp.n_ctx_train - 1] = toks[n - 1]; /* keep the final SEP */
      n = m->hp.n_ctx_train;
    }
    s = dq_model_embed_tokens(m, toks, n, out + (size_t)i * m->hp.n_embd);
    free(toks);
    if (s)
      return s;
  }
  return DQ_OK;
}

/* ---- generation ---------------------------------------------------------- */

void dq_generate_opts_init(dq_generate_opts *o) {
  memset(o, 0, sizeof *o);
  o->max_tokens = 256;
  dq_sampler_opts_init(&o->sampling);
  dq_early_exit_opts_init(&o->early_exit);
}

void dq_generate_result_clear(dq_generate_result *r) {
  if (!r)
    return;
  free(r->text);
  free(r->expert_load);
  memset(r, 0, sizeof *r);
}

/* Length of the prefix of s[0..n) that ends on a UTF-8 character boundary. */
static size_t utf8_complete(const char *s, size_t n) {
  size_t i = n, back = 0;
  while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80) {
    i--;
    back++;
  }
  if (i == 0)
    return n;
  unsigned char c = (unsigned char)s[i - 1];
  size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  return back + 1 >= need ? n : i - 1;
}

/* The next token from the last evaluated one (its logits stay on the
 * backend: dq_sampler_sample_seq); errors named in m->err. */
static dq_status sample_next(dq_model *m, dq_sampler *sm, dq_seq *seq,
                             int32_t *tok) {
  dq_status s = dq_sampler_sample_seq(sm, seq, tok);
  if (s)
    dq_error_set(&m->err, s, "sampling: %s", dq_seq_errmsg(seq));
  return s;
}

/* 1 when `t` (blanks skipped) and one of no[] agree on their common
 * length: t begins that string, or that string begins t. */
static int starts_banned(const char *t, const char *const *no, int n_no) {
  t += strspn(t, " \t\r\n");
  size_t lt = strlen(t);
  if (!lt)
    return 0;
  for (int i = 0; i < n_no; i++) {
    size_t lb = no[i] ? strlen(no[i]) : 0;
    if (lb && strncmp(t, no[i], lt < lb ? lt : lb) == 0)
      return 1;
  }
  return 0;
}

/* The opening pick under o->no_start (see dq_generate_opts): gen[0..n_gen)
 * came before, all blank. */
static dq_status pick_opening(dq_model *m, dq_sampler *sm, dq_seq *seq,
                              const dq_generate_opts *o, int32_t *gen,
                              int n_gen, int32_t *tok) {
  int32_t ids[DQ_NO_START_CANDIDATES];
  float vals[DQ_NO_START_CANDIDATES];
  int k = m->hp.n_vocab < DQ_NO_START_CANDIDATES ? m->hp.n_vocab
                                                 : DQ_NO_START_CANDIDATES;
  dq_status s = dq_seq_top_k(seq, k, NULL, 0, 1.0f, ids, vals);
  if (s)
    return dq_error_set(&m->err, s, "sampling: %s", dq_seq_errmsg(seq));
  *tok = ids[0];
  for (int i = 0; i < k; i++) {
    char *t = NULL;
    gen[n_gen] = ids[i];
    if ((s = dq_model_detokenize(m, gen, n_gen + 1, &t)))
      return s;
    int bad = starts_banned(t, o->no_start, o->n_no_start);
    free(t);
    if (!bad) {
      *tok = ids[i];
      break;
    }
  }
  dq_sampler_accept(sm, *tok);
  return DQ_OK;
}

dq_status dq_generate(dq_model *m, const char *prompt,
                      const dq_generate_opts *o, dq_generate_result *res) {
  memset(res, 0, sizeof *res);
  if (!m || !prompt || !o)
    return DQ_ERR_ARG;
  if (!prompt[0])
    return dq_error_set(&m->err, DQ_ERR_ARG, "empty prompt");
  dq_status s;
  char *text = NULL;
  int32_t *ptoks = NULL, *gen = NULL;
  int n_prompt = 0;
  dq_seq *seq = NULL;
  dq_sampler *sm = NULL;
  dq_spec *spec = NULL;
  int32_t *queue = NULL; /* tokens a speculative cycle produced */
  int n_queue = 0, i_queue = 0;
  if (o->raw) {
    s = dq_model_tokenize(m, prompt, strlen(prompt), 1, &ptoks, &n_prompt);
  } else {
    char *chat = NULL;
    if ((s = dq_model_chat_prompt(m, o->system, prompt, &chat)))
      return s;
    s = dq_model_tokenize(m, chat, strlen(chat), 1, &ptoks, &n_prompt);
    free(chat);
  }
  if (s)
    return s;
  if (n_prompt == 0) {
    free(ptoks);
    return dq_error_set(&m->err, DQ_ERR_ARG, "the prompt has no tokens");
  }
  int max_new = o->max_tokens > 0 ? o->max_tokens : 256;
  int n_ctx = m->n_ctx_default;
  if (n_prompt >= n_ctx) {
    free(ptoks);
    return dq_error_set(&m->err, DQ_ERR_LIMIT,
                        "context overflow: the prompt has %d tokens, the "
                        "context holds %d",
                        n_prompt, n_ctx);
  }
  if (n_prompt + max_new < n_ctx)
    n_ctx = n_prompt + max_new;
  if ((s = dq_seq_new(m, n_ctx, &seq)))
    goto done;
  if (o->expert_stats && m->hp.n_expert &&
      (s = dq_seq_moe_stats_begin(seq))) {
    dq_error_set(&m->err, s, "%s", dq_seq_errmsg(seq));
    goto done;
  }
  if ((s = dq_sampler_new(&o->sampling, m->hp.n_vocab, &sm))) {
    dq_error_set(&m->err, s, "invalid sampling options");
    goto done;
  }
  for (int i = 0; i < n_prompt; i++)
    dq_sampler_accept(sm, ptoks[i]);
  if (o->early_exit.enabled) {
    if ((s = dq_spec_new(seq, &o->early_exit, ptoks, n_prompt, &spec)))
      goto done;
    queue = malloc(((size_t)o->early_exit.max_draft + 1) * sizeof *queue);
    if (!queue) {
      s = dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    dq_early_exit_stats es;
    dq_spec_stats(spec, &es);
    dq_log(m->log, DQ_LOG_INFO,
           "early exit: draft after layer %d of %d over %d candidate tokens, "
           "threshold %.2f, up to %d draft tokens per verify pass%s",
           es.exit_layer, es.n_layer, es.draft_vocab,
           (double)o->early_exit.threshold,
           o->early_exit.max_draft,
           o->early_exit.auto_off ? ", off again if it does not pay" : "");
  }
  gen = malloc((size_t)max_new * sizeof *gen);
  if (!gen) {
    s = dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  size_t max_stop = 0;
  for (int i = 0; i < o->n_stop; i++)
    if (o->stop[i] && strlen(o->stop[i]) > max_stop)
      max_stop = strlen(o->stop[i]);
  double t0 = dq_now_ms();
  if ((s = dq_seq_eval(seq, ptoks, n_prompt, DQ_LOGITS_SAMPLE))) {
    dq_error_set(&m->err, s, "%s", dq_seq_errmsg(seq));
    goto done;
  }
  double t1 = dq_now_ms();
  res->prefill_ms = t1 - t0;
  res->n_prompt_tokens = n_prompt;
  res->stop_reason = "max_tokens";
  size_t emitted = 0, text_len = 0;
  int n_gen = 0;
  int32_t tok;
  int opening = o->n_no_start > 0; /* nothing but blanks generated yet */
  if ((s = opening ? pick_opening(m, sm, seq, o, gen, 0, &tok)
                   : sample_next(m, sm, seq, &tok)))
    goto done;
  for (;;) {
    if (dq_model_is_eog(m, tok)) {
      res->stop_reason = "eog";
      break;
    }
    gen[n_gen++] = tok;
    free(text);
    text = NULL;
    if ((s = dq_model_detokenize(m, gen, n_gen, &text)))
      goto done;
    text_len = strlen(text);
    opening = opening && !text[strspn(text, " \t\r\n")];
    int stop_hit = 0;
    for (int i = 0; i < o->n_stop; i++) {
      const char *p = o->stop[i] && o->stop[i][0] ? strstr(text, o->stop[i])
                                                  : NULL;
      if (p && (size_t)(p - text) < text_len) {
        text_len = (size_t)(p - text);
        text[text_len] = '\0';
        stop_hit = 1;
      }
    }
    /* stream what can no longer turn into a stop string */
    size_t safe = utf8_complete(text, text_len);
    if (!stop_hit && max_stop > 1)
      safe = safe > max_stop - 1 ? utf8_complete(text, safe - (max_stop - 1))
                                 : 0;
    if (o->on_text && safe > emitted) {
      if (o->on_text(o->user, text + emitted, safe - emitted)) {
        emitted = safe;
        res->stop_reason = "callback";
        break;
      }
      emitted = safe;
    }
    if (stop_hit) {
      res->stop_reason = "stop_string";
      break;
    }
    if (n_gen >= max_new)
      break;
    if (i_queue < n_queue) { /* already verified by the full model */
      tok = queue[i_queue++];
      continue;
    }
    if (dq_seq_n_past(seq) >= dq_seq_n_ctx(seq)) {
      res->stop_reason = "context";
      break;
    }
    if (!opening && dq_spec_want(spec)) {
      if ((s = dq_spec_step(spec, sm, tok, max_new - n_gen, queue, &n_queue)))
        goto done;
      i_queue = 0;
      tok = queue[i_queue++];
      continue;
    }
    double ts = dq_now_ms();
    if ((s = dq_seq_eval(seq, &tok, 1, DQ_LOGITS_SAMPLE))) {
      dq_error_set(&m->err, s, "%s", dq_seq_errmsg(seq));
      goto done;
    }
    if ((s = opening ? pick_opening(m, sm, seq, o, gen, n_gen, &tok)
                     : sample_next(m, sm, seq, &tok)))
      goto done;
    dq_spec_plain_step(spec, dq_now_ms() - ts);
  }
  res->decode_ms = dq_now_ms() - t1;
  res->n_tokens = n_gen;
  dq_spec_stats(spec, &res->early_exit);
  if (!text)
    text = calloc(1, 1);
  if (!text) {
    s = dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (o->on_text && strlen(text) > emitted &&
      strcmp(res->stop_reason, "callback") != 0)
    o->on_text(o->user, text + emitted, strlen(text) - emitted);
  /* the text is valid UTF-8 (a cut or a model may leave stray bytes) */
  size_t clean_n;
  res->text = tok_utf8_sanitize(text, strlen(text), &clean_n);
  if (!res->text) {
    s = dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (o->expert_stats && m->hp.n_expert) {
    int X = m->hp.n_expert;
    res->expert_load = calloc((size_t)m->hp.n_layer * 2 * X, 4);
    if (!res->expert_load) {
      s = dq_error_set(&m->err, DQ_ERR_NOMEM, "out of memory");
      goto done;
    }
    res->n_expert = X;
    for (int l = 0; l < m->hp.n_layer; l++) {
      const uint32_t *r, *f;
      int n;
      if ((s = dq_seq_moe_load(seq, l, &r, &f, &n))) {
        dq_error_set(&m->err, s, "%s", dq_seq_errmsg(seq));
        goto done;
      }
      if (n) {
        memcpy(res->expert_load + (size_t)l * 2 * X, r, (size_t)X * 4);
        memcpy(res->expert_load + ((size_t)l * 2 + 1) * X, f, (size_t)X * 4);
      }
    }
  }
  s = DQ_OK;
done:
  free(text);
  free(gen);
  free(ptoks);
  free(queue);
  dq_spec_free(spec);
  dq_sampler_free(sm);
  dq_seq_free(seq);
  return s;
}
