/* Generation from the GPT, with or without its key/value cache: the GPT
 * as a stack's qkv_lm (decode/stack_lm.c) for the model-agnostic loop in
 * decode/generate.c (see qkv/gpt.h). */
#include "tensor/check.h"
#include "decode/decode.h"
#include "internal.h"

qkv_lm *qkv_gpt_lm_new(const qkv_gpt *m, bool use_cache)
{
    if (qkv__null("qkv_gpt_lm_new", "m", m))
        return NULL;
    /* The GPT's modules are a stack's: generation runs the stack's forward. */
    qkv_stack view = {.cfg = {.vocab_size = m->cfg.vocab_size, .block_size = m->cfg.block_size,
                              .block = m->block},
                      .wte = m->wte, .wpe = m->wpe, .h = m->h, .ln_f = m->ln_f,
                      .lm_head = m->lm_head};
    return qkv__stack_lm_new("qkv_gpt_lm_new", &view, use_cache);
}

void qkv_gpt_lm_free(qkv_lm *lm)
{
    qkv__stack_lm_free("qkv_gpt_lm_free", "qkv_gpt_lm_new", lm);
}

int qkv_gpt_generate(const qkv_gpt *m, const int32_t *prompt, int n_prompt, int n_new,
                     const qkv_sample_opts *opts, qkv_rng *rng, bool use_cache, qkv_emit_fn emit,
                     void *ud)
{
    const char *fn = "qkv_gpt_generate";
    if (qkv__null(fn, "m", m))
        return -1;
    qkv_lm *lm = qkv_gpt_lm_new(m, use_cache);
    if (!lm)
        return qkv__fail_in(fn);
    int rc = qkv__generate(fn, lm, prompt, n_prompt, n_new, opts, rng, emit, ud);
    qkv_gpt_lm_free(lm);
    return rc;
}
