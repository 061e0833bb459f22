/* What every transformer here shares: its config's checks, its options'
 * flag word and the ends around its blocks (see transformer.h). */
#include "transformer.h"

int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout,
                           const qkv_model_options *opts)
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
    if (opts->rope && (n_embd / n_head) % 2 != 0)
        return qkv_set_error("%s config: rope needs an even head size, not %d (n_embd %d / "
                             "n_head %d)", who, n_embd / n_head, n_embd, n_head);
    return 0;
}

/* The options' names, in bit order, for messages. */
static const char *const option_names[QKV_N_MODEL_OPTIONS] = {
#define OPTION_NAME(field, flag, help) #field,
    QKV_MODEL_OPTIONS(OPTION_NAME)
#undef OPTION_NAME
};

uint32_t qkv__options_word(const qkv_model_options *opts)
{
    uint32_t word = 0, bit = 1;
#define OPTION_BIT(field, flag, help) word |= opts->field ? bit : 0, bit <<= 1;
    QKV_MODEL_OPTIONS(OPTION_BIT)
#undef OPTION_BIT
    return word;
}

int qkv__options_from_word(const char *who, uint32_t word, qkv_model_options *opts)
{
    if (word >> QKV_N_MODEL_OPTIONS)
        return qkv_set_error("%s config: the flag word is 0x%x; this qkv knows bits 0-%d (%s..%s)",
                             who, word, QKV_N_MODEL_OPTIONS - 1, option_names[0],
                             option_names[QKV_N_MODEL_OPTIONS - 1]);
    uint32_t bit = 1;
#define OPTION_FROM_BIT(field, flag, help) opts->field = (word & bit) != 0, bit <<= 1;
    QKV_MODEL_OPTIONS(OPTION_FROM_BIT)
#undef OPTION_FROM_BIT
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

qkv_tensor *qkv__lm_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_linear *lm_head,
                         const qkv_ctx *ctx, qkv_tensor *x)
{
    if (lm_head)
        return qkv_linear_forward(lm_head, ctx, qkv_ln_forward(ln_f, ctx, x));
    /* wte is (V,C): logits = LN(x)·wteᵀ, the same matrix that embeds the tokens. */
    return qkv_matmul(ctx->arena, qkv_ln_forward(ln_f, ctx, x), wte->weight, false, true);
}
