/* The ends around a transformer's blocks: the embeddings in, the norm and
 * the head out (see stack.h). */
#include "stack.h"
#include "tensor/check.h"

qkv_tensor *qkv__embed_tokens(const qkv_embed *wte, const qkv_embed *wpe, const qkv_ctx *ctx,
                              const int32_t *ids, int B, int T, int pos0, qkv_real p)
{
    qkv_tensor *x = qkv_embed_forward(wte, ctx, ids, QKV_SHAPE(B, T));
    if (wpe) {
        int32_t *pos = qkv_arena_alloc(ctx->arena, (size_t)T * sizeof *pos);
        if (!pos)
            return NULL;
        for (int t = 0; t < T; t++)
            pos[t] = pos0 + t;
        x = qkv_add(ctx->arena, x, qkv_embed_forward(wpe, ctx, pos, QKV_SHAPE(T)));
    }
    return qkv_dropout(ctx->arena, x, p, ctx->rng, ctx->train);
}

qkv_tensor *qkv__lm_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_linear *lm_head,
                         const qkv_ctx *ctx, qkv_tensor *x)
{
    if (lm_head)
        return qkv_linear_forward(lm_head, ctx, qkv_ln_forward(ln_f, ctx, x));
    /* wte is (V,C): logits = LN(x)·wteᵀ, the same matrix that embeds the tokens. */
    return qkv_matmul(ctx->arena, qkv_ln_forward(ln_f, ctx, x), wte->weight, false, true);
}

int qkv__check_ids(const char *fn, const char *what, const char *len, const char *limit,
                   const int32_t *ids, int B, int n, int pos0, int positions, int V)
{
    if (qkv__null(fn, what, ids))
        return -1;
    if (B < 1 || n < 1)
        return qkv_set_error("%s: B %d and %s %d must be >= 1", fn, B, len, n);
    if (n > positions - pos0)
        return qkv_set_error("%s: %d positions from %d exceed %s %d", fn, n, pos0, limit,
                             positions);
    for (long i = 0; i < (long)B * n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return qkv_set_error("%s: %s[%ld] is %d, not a token id in [0, %d)", fn, what, i,
                                 ids[i], V);
    return 0;
}
