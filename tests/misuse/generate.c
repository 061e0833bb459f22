/* Misuse cases for qkv/generate.h: sampling tokens, generating with any model. */
#include "misuse.h"

MISUSE(qkv_sample_opts_check, null) { FAILS_INT(qkv_sample_opts_check(NULL), "opts is NULL"); }
MISUSE(qkv_sample_opts_check, negative_temperature)
{
    FAILS_INT(qkv_sample_opts_check(&(qkv_sample_opts){.temperature = -1, .top_p = 1}),
              "temperature -1");
}
MISUSE(qkv_sample_token, null_logits)
{
    qkv_real scratch[10];
    FAILS_INT(qkv_sample_token(NULL, 5, &OPTS, rng(), scratch), "logits is NULL");
}
MISUSE(qkv_sample_token, null_opts)
{
    qkv_real logits[5] = {0}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, NULL, rng(), scratch), "opts is NULL");
}
MISUSE(qkv_sample_token, null_rng)
{
    qkv_real logits[5] = {0}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, NULL, scratch), "rng is NULL");
}
MISUSE(qkv_sample_token, null_scratch)
{
    qkv_real logits[5] = {0};
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, rng(), NULL), "scratch is NULL");
}
MISUSE(qkv_sample_token, zero_vocab)
{
    qkv_real logits[1] = {0}, scratch[2];
    FAILS_INT(qkv_sample_token(logits, 0, &OPTS, rng(), scratch), "V 0");
}
MISUSE(qkv_sample_token, negative_temperature)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = -1, .top_p = 1};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "temperature -1");
}
MISUSE(qkv_sample_token, top_p_nan)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = 1, .top_p = NAN};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "top_p");
}
MISUSE(qkv_sample_token, nan_logits)
{
    qkv_real logits[5] = {NAN, NAN, NAN, NAN, NAN}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, rng(), scratch), "logits");
}
MISUSE(qkv_sample_token, top_k_negative)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = 1, .top_k = -1, .top_p = 1};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "top_k -1");
}

static const int32_t PROMPT[2] = {1, 2};

MISUSE(qkv_generate, null_lm)
{
    FAILS_INT(qkv_generate(NULL, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm is NULL");
}
MISUSE(qkv_generate, null_logits_fn)
{
    qkv_lm lm = FLAT;
    lm.logits = NULL;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->logits is NULL");
}
MISUSE(qkv_generate, null_prompt)
{
    FAILS_INT(qkv_generate(&FLAT, NULL, 2, 3, &OPTS, rng(), NULL, NULL), "prompt is NULL");
}
MISUSE(qkv_generate, null_opts)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, 3, NULL, rng(), NULL, NULL), "opts is NULL");
}
MISUSE(qkv_generate, null_rng)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, 3, &OPTS, NULL, NULL, NULL), "rng is NULL");
}
MISUSE(qkv_generate, empty_prompt)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 0, 3, &OPTS, rng(), NULL, NULL), "got 0");
}
MISUSE(qkv_generate, negative_n_new)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, -1, &OPTS, rng(), NULL, NULL), "-1 new tokens");
}
MISUSE(qkv_generate, prompt_outside_vocab)
{
    FAILS_INT(qkv_generate(&FLAT, (int32_t[]){1, 5}, 2, 3, &OPTS, rng(), NULL, NULL), "token 5");
}
MISUSE(qkv_generate, context_0)
{
    qkv_lm lm = FLAT;
    lm.context = 0;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->context 0");
}
MISUSE(qkv_generate, vocab_int_min)
{
    qkv_lm lm = FLAT;
    lm.vocab_size = -2147483647 - 1;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->vocab_size");
}
MISUSE(qkv_generate, failing_model)
{
    qkv_lm lm = FLAT;
    lm.model = &lm;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "flat: asked to fail");
}
MISUSE(qkv_generate, logits_of_the_wrong_size)
{
    qkv_lm lm = FLAT;
    lm.vocab_size = 3;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "(1,5)", "vocab_size 3");
}
MISUSE(qkv_generate_text, null_lm)
{
    FAILS_INT(qkv_generate_text(NULL, tok(), "a", 3, &OPTS, rng(), NULL, NULL), "lm is NULL");
}
MISUSE(qkv_generate_text, null_tok)
{
    FAILS_INT(qkv_generate_text(&FLAT, NULL, "a", 3, &OPTS, rng(), NULL, NULL), "tok is NULL");
}
MISUSE(qkv_generate_text, null_prompt)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), NULL, 3, &OPTS, rng(), NULL, NULL), "prompt is NULL");
}
MISUSE(qkv_generate_text, empty_prompt)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), "", 3, &OPTS, rng(), NULL, NULL), "empty");
}
MISUSE(qkv_generate_text, vocab_mismatch)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), "a", 3, &OPTS, rng(), NULL, NULL), "3 tokens",
              "vocab_size is 5");
}
MISUSE(qkv_generate_text, prompt_outside_vocab)
{
    qkv_tokenizer t;
    qkv_tokenizer_build(&t, "abcde", 5);
    FAILS_INT(qkv_generate_text(&FLAT, &t, "az", 3, &OPTS, rng(), NULL, NULL), "'z'");
}
MISUSE(qkv_generate_text, null_opts)
{
    qkv_tokenizer t;
    qkv_tokenizer_build(&t, "abcde", 5);
    FAILS_INT(qkv_generate_text(&FLAT, &t, "a", 3, NULL, rng(), NULL, NULL), "opts is NULL");
}
MISUSE(qkv_generate_batch, null_out)
{
    FAILS_INT(qkv_generate_batch(&FLAT, 1, PROMPT, 2, 3, &OPTS, rng(), -1, NULL),
              "qkv_generate_batch", "out is NULL");
}
MISUSE(qkv_generate_batch, null_prompts)
{
    int32_t out[3];
    FAILS_INT(qkv_generate_batch(&FLAT, 1, NULL, 2, 3, &OPTS, rng(), -1, out), "prompts is NULL");
}
MISUSE(qkv_generate_batch, no_rows)
{
    int32_t out[3];
    FAILS_INT(qkv_generate_batch(&FLAT, 0, PROMPT, 2, 3, &OPTS, rng(), -1, out), "B 0");
}
MISUSE(qkv_generate_batch, stop_outside_vocab)
{
    int32_t out[3];
    FAILS_INT(qkv_generate_batch(&FLAT, 1, PROMPT, 2, 3, &OPTS, rng(), 5, out), "stop token 5",
              "vocabulary of 5");
}
MISUSE(qkv_generate_batch, failing_model)
{
    qkv_lm lm = FLAT;
    lm.model = &lm; /* FLAT's forward fails when its model is set */
    int32_t out[6];
    FAILS_INT(qkv_generate_batch(&lm, 2, (int32_t[]){1, 2, 3, 4}, 2, 3, &OPTS, rng(), -1, out),
              "qkv_generate_batch", "flat: asked to fail");
}
