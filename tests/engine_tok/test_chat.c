/*
 * test_chat.c - chat templates: the exact prompt text for each family
 * (written out by hand from the published templates), detection from Jinja
 * sources by marker, the override by name, and the errors for unknown
 * templates and roles.
 */
#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "test.h"

static const dq_chat_msg conv[] = {
    {"system", "Be brief."},
    {"user", "Hi there "},
    {"assistant", "Hello!"},
    {"user", "What is 2+2?"},
};

static void expect_render(dq_chat_tmpl t, const dq_chat_msg *m, size_t n,
                          bool gen, const char *want, int line) {
  char *out = NULL;
  size_t len = 0;
  dq_error err = {0};
  dq_status s = dq_chat_apply(t, m, n, gen, &out, &len, &err);
  CHECK_MSG(s == DQ_OK && out && strcmp(out, want) == 0 && len == strlen(want),
            "line %d: got\n%s\nexpected\n%s\n(%s)", line, out ? out : "(null)",
            want, dq_error_msg(&err));
  free(out);
}

int main(void) {
  expect_render(DQ_CHAT_CHATML, conv, 4, true,
                "<|im_start|>system\nBe brief.<|im_end|>\n"
                "<|im_start|>user\nHi there <|im_end|>\n"
                "<|im_start|>assistant\nHello!<|im_end|>\n"
                "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                "<|im_start|>assistant\n",
                __LINE__);
  expect_render(DQ_CHAT_CHATML, conv + 1, 1, false,
                "<|im_start|>user\nHi there <|im_end|>\n", __LINE__);
  expect_render(DQ_CHAT_GEMMA, conv, 4, true,
                "<start_of_turn>user\nBe brief.\n\nHi there<end_of_turn>\n"
                "<start_of_turn>model\nHello!<end_of_turn>\n"
                "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
                "<start_of_turn>model\n",
                __LINE__);
  expect_render(DQ_CHAT_LLAMA3, conv, 2, true,
                "<|start_header_id|>system<|end_header_id|>\n\nBe brief."
                "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
                "Hi there<|eot_id|><|start_header_id|>assistant"
                "<|end_header_id|>\n\n",
                __LINE__);
  expect_render(DQ_CHAT_CHATML, conv, 0, true, "<|im_start|>assistant\n",
                __LINE__);
  expect_render(DQ_CHAT_GEMMA, conv, 0, false, "", __LINE__);

  dq_chat_tmpl t = 0;
  dq_error err = {0};
  CHECK_OK(dq_chat_tmpl_detect("{% for m in messages %}{{'<|im_start|>' + "
                               "m['role']}}{% endfor %}",
                               &t, &err),
           dq_error_msg(&err));
  CHECK_EQ_INT(t, DQ_CHAT_CHATML);
  CHECK_OK(dq_chat_tmpl_detect("{{ bos_token }}<start_of_turn>", &t, &err), "");
  CHECK_EQ_INT(t, DQ_CHAT_GEMMA);
  CHECK_OK(dq_chat_tmpl_detect("<|start_header_id|>' + role", &t, &err), "");
  CHECK_EQ_INT(t, DQ_CHAT_LLAMA3);
  CHECK_EQ_INT(dq_chat_tmpl_detect("[INST] {{ m }} [/INST]", &t, &err),
               DQ_ERR_UNSUPPORTED);
  CHECK(strstr(dq_error_msg(&err), "unknown chat template"));
  CHECK_OK(dq_chat_tmpl_from_name("gemma", &t, &err), "");
  CHECK_EQ_INT(t, DQ_CHAT_GEMMA);
  CHECK_EQ_INT(dq_chat_tmpl_from_name("vicuna", &t, &err), DQ_ERR_NOTFOUND);
  CHECK(strstr(dq_error_msg(&err), "'vicuna'"));
  CHECK_EQ_STR(dq_chat_tmpl_name(DQ_CHAT_LLAMA3), "llama3");

  char *out = NULL;
  CHECK_OK(dq_chat_default_system(
               "{% if loop.first and messages[0]['role'] != 'system' %}{{ "
               "'<|im_start|>system\\nYou are SmolLM<|im_end|>\\n' }}"
               "{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
               "message['content'] + '<|im_end|>' + '\\n'}}",
               &out),
           "");
  CHECK_EQ_STR(out, "You are SmolLM");
  free(out);
  CHECK_OK(dq_chat_default_system("{{'<|im_start|>system\\n' + m + "
                                  "'<|im_end|>'}}",
                                  &out),
           "");
  CHECK(out == NULL);
  const dq_chat_msg bad[] = {{"tool", "x"}};
  CHECK_EQ_INT(dq_chat_apply(DQ_CHAT_CHATML, bad, 1, false, &out, NULL, &err),
               DQ_ERR_ARG);
  CHECK(out == NULL && strstr(dq_error_msg(&err), "'tool'"));
  const dq_chat_msg late_system[] = {{"user", "a"}, {"system", "b"}};
  CHECK_EQ_INT(dq_chat_apply(DQ_CHAT_GEMMA, late_system, 2, false, &out, NULL,
                             &err),
               DQ_ERR_ARG);
  return TEST_EXIT();
}
