/* The GPT's exact evaluation (see qkv/gpt.h): qkv_eval_split over its windows. */
#include "qkv/gpt.h"
#include "tensor/check.h"

/* One window of the GPT: a batch of one row. */
static qkv_tensor *gpt_window(void *m, const qkv_ctx *ctx, const int32_t *x, const int32_t *y,
                              int T)
{
    return qkv_gpt_loss(m, ctx, x, y, 1, T);
}

int qkv_gpt_eval_split(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, int64_t max_tokens,
                       qkv_arena *arena, qkv_split_loss *out)
{
    const char *fn = "qkv_gpt_eval_split";
    if (qkv__null(fn, "m", m))
        return -1;
    /* The model is only read: qkv_eval_split hands it back to gpt_window as const. */
    int rc = qkv_eval_split(gpt_window, (void *)m, c, split, m->cfg.block_size, max_tokens, arena,
                            out);
    return rc < 0 ? qkv__fail_in(fn) : 0;
}
