/* Transformer blocks: pre-LayerNorm, every sub-layer added onto the residual
 * stream (see qkv/nn.h). */
#include "internal.h"

int qkv__norm_init(qkv_ln *m, qkv_params *p, const char *name, const qkv_block_config *cfg)
{
    return cfg->opts.norm == QKV_NORM_RMSNORM
               ? qkv_rmsnorm_init(m, p, name, cfg->n_embd)
               : qkv_ln_init(m, p, name, cfg->n_embd, !cfg->opts.no_bias);
}

/* The block's norm under the name "<prefix>.<suffix>". */
static int ln_sub(qkv_ln *m, qkv_params *p, const char *prefix, const char *suffix,
                  const qkv_block_config *cfg)
{
    char name[QKV_PARAM_NAME_MAX];
    if (qkv__nn_name(name, prefix, suffix) < 0)
        return -1;
    return qkv__norm_init(m, p, name, cfg);
}

int qkv_block_init(qkv_block *m, qkv_params *p, const char *name, const qkv_block_config *cfg,
                   bool causal)
{
    char attn[QKV_PARAM_NAME_MAX], mlp[QKV_PARAM_NAME_MAX];
    if (qkv__check_init("qkv_block_init", m, p, name) < 0 ||
        qkv__check_config("qkv_block_init", name, cfg) < 0 ||
        qkv__nn_name(attn, name, "attn") < 0 || qkv__nn_name(mlp, name, "mlp") < 0)
        return -1;
    if (ln_sub(&m->ln_1, p, name, "ln_1", cfg) < 0 ||
        qkv_self_attn_init(&m->attn, p, attn, cfg, causal) < 0 ||
        ln_sub(&m->ln_2, p, name, "ln_2", cfg) < 0 || qkv_mlp_init(&m->mlp, p, mlp, cfg) < 0)
        return -1;
    return 0;
}

/* x + mlp(ln(x)): the second half of every block. */
static qkv_tensor *mlp_residual(const qkv_ln *ln, const qkv_mlp *mlp, const qkv_ctx *ctx,
                                qkv_tensor *x)
{
    return qkv_add(ctx->arena, x, qkv_mlp_forward(mlp, ctx, qkv_ln_forward(ln, ctx, x)));
}

qkv_tensor *qkv_block_forward(const qkv_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                              const uint8_t *key_valid, qkv_tensor **weights)
{
    if (qkv__check_forward("qkv_block_forward", m, ctx, m ? m->ln_1.weight : NULL) < 0 ||
        qkv__check_btc("qkv_block_forward", x, m->attn.n_embd) < 0)
        return NULL;
    /* Positions exchange information through attention... */
    qkv_tensor *attn = qkv_self_attn_forward(&m->attn, ctx, qkv_ln_forward(&m->ln_1, ctx, x),
                                             key_valid, weights);
    /* ...then each one thinks about what it gathered, on its own. */
    return qkv__result("qkv_block_forward",
                       mlp_residual(&m->ln_2, &m->mlp, ctx, qkv_add(ctx->arena, x, attn)));
}

qkv_tensor *qkv_block_forward_cached(const qkv_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                                     qkv_kv_cache *c, int layer)
{
    if (qkv__check_forward("qkv_block_forward_cached", m, ctx, m ? m->ln_1.weight : NULL) < 0 ||
        qkv__null("qkv_block_forward_cached", "c", c))
        return NULL;
    qkv_tensor *attn =
        qkv_self_attn_forward_cached(&m->attn, ctx, qkv_ln_forward(&m->ln_1, ctx, x), c, layer);
    return qkv__result("qkv_block_forward_cached",
                       mlp_residual(&m->ln_2, &m->mlp, ctx, qkv_add(ctx->arena, x, attn)));
}

int qkv_cross_block_init(qkv_cross_block *m, qkv_params *p, const char *name,
                         const qkv_block_config *cfg, int n_mem)
{
    char attn[QKV_PARAM_NAME_MAX], cross[QKV_PARAM_NAME_MAX], mlp[QKV_PARAM_NAME_MAX];
    if (qkv__check_init("qkv_cross_block_init", m, p, name) < 0 ||
        qkv__check_config("qkv_cross_block_init", name, cfg) < 0 ||
        qkv__nn_name(attn, name, "attn") < 0 || qkv__nn_name(cross, name, "cross") < 0 ||
        qkv__nn_name(mlp, name, "mlp") < 0)
        return -1;
    if (ln_sub(&m->ln_1, p, name, "ln_1", cfg) < 0 ||
        qkv_self_attn_init(&m->attn, p, attn, cfg, true) < 0 ||
        ln_sub(&m->ln_2, p, name, "ln_2", cfg) < 0 ||
        qkv_cross_attn_init(&m->cross, p, cross, cfg, n_mem) < 0 ||
        ln_sub(&m->ln_3, p, name, "ln_3", cfg) < 0 || qkv_mlp_init(&m->mlp, p, mlp, cfg) < 0)
        return -1;
    return 0;
}

/* After the self-attention: h + cross(ln_2(h)) over the memory's keys and
 * values, then the MLP half. */
static qkv_tensor *cross_block_rest(const qkv_cross_block *m, const qkv_ctx *ctx, qkv_tensor *h,
                                    qkv_tensor *k, qkv_tensor *v, const uint8_t *mem_valid,
                                    qkv_tensor **cross_weights)
{
    qkv_tensor *cross = qkv_cross_attn_forward_kv(&m->cross, ctx, qkv_ln_forward(&m->ln_2, ctx, h), k,
                                                  v, mem_valid, cross_weights);
    return mlp_residual(&m->ln_3, &m->mlp, ctx, qkv_add(ctx->arena, h, cross));
}

qkv_tensor *qkv_cross_block_forward(const qkv_cross_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                                    qkv_tensor *memory, const uint8_t *mem_valid,
                                    qkv_tensor **self_weights, qkv_tensor **cross_weights)
{
    qkv_tensor *k, *v;
    if (qkv__check_forward("qkv_cross_block_forward", m, ctx, m ? m->ln_1.weight : NULL) < 0 ||
        qkv__check_same_batch("qkv_cross_block_forward", x, memory) < 0 ||
        qkv_cross_attn_memory(&m->cross, ctx, memory, &k, &v) < 0)
        return NULL;
    qkv_tensor *attn = qkv_self_attn_forward(&m->attn, ctx, qkv_ln_forward(&m->ln_1, ctx, x), NULL,
                                             self_weights);
    return qkv__result("qkv_cross_block_forward", cross_block_rest(m, ctx, qkv_add(ctx->arena, x, attn),
                                                                   k, v, mem_valid, cross_weights));
}

qkv_tensor *qkv_cross_block_forward_cached(const qkv_cross_block *m, const qkv_ctx *ctx,
                                           qkv_tensor *x, qkv_kv_cache *c, int layer,
                                           qkv_tensor *k, qkv_tensor *v,
                                           const uint8_t *mem_valid)
{
    const char *fn = "qkv_cross_block_forward_cached";
    if (qkv__check_forward(fn, m, ctx, m ? m->ln_1.weight : NULL) < 0 || qkv__null(fn, "c", c) ||
        qkv__check_input(fn, "k", k) < 0 || qkv__check_input(fn, "v", v) < 0)
        return NULL;
    qkv_tensor *attn =
        qkv_self_attn_forward_cached(&m->attn, ctx, qkv_ln_forward(&m->ln_1, ctx, x), c, layer);
    return qkv__result(fn,
                       cross_block_rest(m, ctx, qkv_add(ctx->arena, x, attn), k, v, mem_valid, NULL));
}
