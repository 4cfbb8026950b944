/*
 * test_ee_models.c - greedy output with early exit is the full model's:
 * on the fetched SmolLM2 (chat template) and Gemma 3 (plain completion)
 * models, dq_generate with early exit forced on (auto_off 0, so every step
 * is a draft + verify cycle) gives the same text and token count as without,
 * for several prompts, exit depths, draft lengths and both draft heads
 * (candidate rows and the whole vocabulary), including max_tokens of 1..3
 * (draft length capped by what is left). One Gemma prompt is longer than its
 * sliding window, so the rollback of rejected drafts crosses sliding-window
 * layers. Sampling: the same seed gives the same text, and the statistics
 * add up. dq_generate's no_start (the prompt labels an answer may not open
 * with): banning the first word of the greedy text changes its opening,
 * the text then does not begin with it, early exit gives that same text;
 * a ban that the greedy text does not meet leaves it as it was, bit for
 * bit. A missing model is skipped; exit 77 when none is present.
 */
#include "engine.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char models_dir[4096];

static void find_models_dir(void) {
  const char *m = getenv("DOCQA_MODELS"), *x = getenv("XDG_CACHE_HOME"),
             *h = getenv("HOME");
  if (m && m[0])
    snprintf(models_dir, sizeof models_dir, "%s", m);
  else if (x && x[0])
    snprintf(models_dir, sizeof models_dir, "%s/docqa/models", x);
  else
    snprintf(models_dir, sizeof models_dir, "%s/.cache/docqa/models",
             h ? h : ".");
}

typedef struct ee_case {
  float fraction;
  int max_draft, draft_vocab;
  float threshold;
} ee_case;

static const ee_case cases[] = {
    {0.67f, 8, 4096, 0.9f}, /* the defaults */
    {0.5f, 4, 0, 0.5f},     /* whole-vocabulary head, many rejections */
};

/* ban: a string the text may not begin with (no_start), or NULL */
static int generate(dq_model *m, const char *prompt, int raw, int max_tokens,
                    const ee_case *c, float temp, const char *ban,
                    dq_generate_result *res) {
  dq_generate_opts go;
  dq_generate_opts_init(&go);
  go.raw = raw;
  if (ban) {
    go.no_start = &ban;
    go.n_no_start = 1;
  }
  go.max_tokens = max_tokens;
  go.sampling.temp = temp;
  go.sampling.seed = 5;
  if (c) {
    go.early_exit.enabled = 1;
    go.early_exit.auto_off = 0;
    go.early_exit.layer_fraction = c->fraction;
    go.early_exit.max_draft = c->max_draft;
    go.early_exit.draft_vocab = c->draft_vocab;
    go.early_exit.threshold = c->threshold;
  }
  dq_status s = dq_generate(m, prompt, &go, res);
  CHECK_MSG(s == DQ_OK, "generate: %s", dq_model_errmsg(m));
  return s == DQ_OK;
}

static void same_as_plain(dq_model *m, const char *prompt, int raw,
                          int max_tokens) {
  dq_generate_result ref;
  if (!generate(m, prompt, raw, max_tokens, NULL, 0, NULL, &ref))
    return;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    dq_generate_result r;
    if (!generate(m, prompt, raw, max_tokens, &cases[i], 0, NULL, &r))
      continue;
    CHECK_MSG(strcmp(r.text, ref.text) == 0,
              "case %zu, prompt '%.40s': '%s' vs plain '%s'", i, prompt,
              r.text, ref.text);
    CHECK_EQ_INT(r.n_tokens, ref.n_tokens);
    CHECK_EQ_STR(r.stop_reason, ref.stop_reason);
    const dq_early_exit_stats *e = &r.early_exit;
    CHECK(e->enabled && !e->switched_off);
    CHECK(e->n_accepted <= e->n_drafted);
    /* every cycle yields its accepted tokens and one more; the first token
     * comes from the prefill */
    if (ref.n_tokens > 1)
      CHECK(e->n_cycles >= 1);
    CHECK(e->n_tokens == e->n_accepted + e->n_cycles);
    CHECK(e->n_tokens >= r.n_tokens - 1);
    fprintf(stderr,
            "  case %zu: %d tokens, %d passes, %d/%d drafts accepted\n", i,
            r.n_tokens, e->n_cycles, e->n_accepted, e->n_drafted);
    dq_generate_result_clear(&r);
  }
  dq_generate_result_clear(&ref);
}

static void sampling(dq_model *m, const char *prompt, int raw) {
  dq_generate_result a, b;
  if (!generate(m, prompt, raw, 24, &cases[1], 0.8f, NULL, &a))
    return;
  if (generate(m, prompt, raw, 24, &cases[1], 0.8f, NULL, &b)) {
    CHECK_EQ_STR(a.text, b.text);
    CHECK(a.n_tokens > 0);
    CHECK(a.early_exit.n_tokens == a.early_exit.n_accepted +
                                       a.early_exit.n_cycles);
    dq_generate_result_clear(&b);
  }
  dq_generate_result_clear(&a);
}

static void no_start(dq_model *m, const char *prompt, int raw) {
  dq_generate_result ref, r, e;
  if (!generate(m, prompt, raw, 16, NULL, 0, NULL, &ref))
    return;
  /* the greedy text's first word (blanks skipped) */
  const char *t = ref.text + strspn(ref.text, " \t\r\n");
  char word[64];
  size_t n = strcspn(t, " \t\r\n");
  if (n >= sizeof word)
    n = sizeof word - 1;
  memcpy(word, t, n);
  word[n] = '\0';
  CHECK_MSG(n > 0, "no first word in '%s'", ref.text);
  if (n > 0 && generate(m, prompt, raw, 16, NULL, 0, word, &r)) {
    const char *u = r.text + strspn(r.text, " \t\r\n");
    size_t lu = strlen(u);
    CHECK_MSG(lu > 0 && strncmp(u, word, lu < n ? lu : n) != 0,
              "'%s' banned, still begins '%s'", word, r.text);
    fprintf(stderr, "  no_start '%s': '%.30s' -> '%.30s'\n", word, ref.text,
            r.text);
    if (generate(m, prompt, raw, 16, &cases[0], 0, word, &e)) {
      CHECK_MSG(strcmp(e.text, r.text) == 0, "early exit '%s' vs '%s'",
                e.text, r.text);
      dq_generate_result_clear(&e);
    }
    dq_generate_result_clear(&r);
  }
  if (generate(m, prompt, raw, 16, NULL, 0, "Zebra-crossing:", &r)) {
    CHECK_EQ_STR(r.text, ref.text);
    dq_generate_result_clear(&r);
  }
  dq_generate_result_clear(&ref);
}

/* Under the sanitizers (SANITIZED, test.h) one prompt per model, fewer
 * tokens, no long prompt: the same code paths in a fraction of the time. */
static int run_model(const char *file, int raw, const char *const *prompts,
                     int n_prompts, const char *long_prompt) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", models_dir, file);
  if (access(path, R_OK) != 0) {
    fprintf(stderr, "SKIP %s: not found (scripts/fetch-models.sh)\n", path);
    return 0;
  }
  dq_model_opts mo;
  dq_model_opts_init(&mo);
  mo.backend = DQ_BACKEND_CPU;
  mo.n_threads = 1;
  dq_model *m = NULL;
  dq_error err = {0};
  if (dq_model_open(path, &mo, &m, &err) != DQ_OK) {
    CHECK_MSG(0, "open %s: %s", path, err.msg);
    return 1;
  }
  fprintf(stderr, "%s\n", file);
  for (int i = 0; i < (SANITIZED ? 1 : n_prompts); i++)
    same_as_plain(m, prompts[i], raw, SANITIZED ? 12 : 40);
  for (int n = 1; n <= 3; n++)
    same_as_plain(m, prompts[0], raw, n);
  if (long_prompt && !SANITIZED)
    same_as_plain(m, long_prompt, raw, 24);
  sampling(m, prompts[0], raw);
  no_start(m, prompts[SANITIZED ? 0 : 1], raw);
  dq_model_free(m);
  return 1;
}

int main(void) {
  find_models_dir();
  static const char *const chat[] = {
      "Write a short paragraph about the history of the Eiffel Tower.",
      "List three uses of a hash table.",
      "What does the C function memcpy do?",
  };
  static const char *const text[] = {
      "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was "
      "built",
      "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
      "Photosynthesis is the process by which plants",
  };
  /* longer than gemma3's 512-token sliding window */
  char *long_prompt = NULL;
  dq_strbuf lb = {0};
  for (int i = 0; i < 60; i++)
    dq_strbuf_printf(&lb, "Line %d: the tower is %d metres tall. ", i,
                     300 + i);
  dq_strbuf_adds(&lb, "In short, the tower is");
  long_prompt = lb.oom ? NULL : lb.p;
  int ran = run_model("smollm2-135m-instruct-q4_1.gguf", 0, chat, 3, NULL);
  ran += run_model("gemma3-270m-q4_k_m.gguf", 1, text, 3, long_prompt);
  free(long_prompt);
  if (!ran) {
    fprintf(stderr, "SKIP: no model found in %s\n", models_dir);
    return 77;
  }
  return TEST_EXIT();
}
