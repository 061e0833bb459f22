/* What every transformer here shares: its config's size checks and the
 * ends around its blocks (see transformer.h). */
#include "transformer.h"

int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout)
{
    if (n_layer < 1 || n_layer > 256)
        return qkv_set_error("%s config: n_layer %d is not in [1, 256]", who, n_layer);
    if (n_embd < 1 || n_embd > 65536)
        return qkv_set_error("%s config: n_embd %d is not in [1, 65536]", who, n_embd);
    if (n_head < 1 || n_embd % n_head)
        return qkv_set_error("%s config: n_embd %d is not a multiple of n_head %d", who, n_embd,
                             n_head);
    if (!(dropout >= 0 && dropout <= QKV_DROPOUT_MAX))
        return qkv_set_error("%s config: dropout %g is not in [0, %g]", who, dropout,
                             QKV_DROPOUT_MAX);
    return 0;
}

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

qkv_tensor *qkv__tied_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_ctx *ctx,
                           qkv_tensor *x)
{
    /* wte is (V,C): logits = LN(x)·wteᵀ, the same matrix that embeds the tokens. */
    return qkv_matmul(ctx->arena, qkv_ln_forward(ln_f, ctx, x), wte->weight, false, true);
}
