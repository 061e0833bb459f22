/* MLP: the position-wise feed-forward part of a block (see qkv/nn.h). */
#include "internal.h"

int qkv_mlp_init(qkv_mlp *m, qkv_params *p, const char *name, const qkv_block_config *cfg)
{
    if (qkv__check_init("qkv_mlp_init", m, p, name) < 0 ||
        qkv__check_config("qkv_mlp_init", name, cfg) < 0)
        return -1;
    int C = cfg->n_embd;
    *m = (qkv_mlp){.dropout = cfg->dropout, .opts = cfg->opts};
    bool bias = !cfg->opts.no_bias;
    if (qkv__linear_sub(&m->c_fc, p, name, "c_fc", C, 4 * C, bias, qkv__init_std(cfg)) < 0 ||
        qkv__linear_sub(&m->c_proj, p, name, "c_proj", 4 * C, C, bias, qkv__resid_std(cfg)) < 0)
        return -1;
    return 0;
}

qkv_tensor *qkv_mlp_forward(const qkv_mlp *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    if (qkv__check_forward("qkv_mlp_forward", m, ctx, m ? m->c_fc.weight : NULL) < 0 ||
        qkv__check_dropout("qkv_mlp_forward", ctx, m->dropout) < 0 ||
        qkv__check_input("qkv_mlp_forward", "x", x) < 0)
        return NULL;
    /* m->opts may have changed since qkv_mlp_init checked it: the value picks the op. */
    if (m->opts.activation >= QKV_N_ACTIVATIONS) {
        qkv_set_error("qkv_mlp_forward: opts.activation is %d, not one of its %d values",
                      m->opts.activation, QKV_N_ACTIVATIONS);
        return NULL;
    }
    /* Widen to 4C, bend with the activation (fused into the product), project back to C. */
    qkv_tensor *h = qkv__linear_act(&m->c_fc, ctx, x, (qkv_activation)m->opts.activation);
    qkv_tensor *y = qkv_linear_forward(&m->c_proj, ctx, h);
    return qkv__result("qkv_mlp_forward", qkv_dropout(ctx->arena, y, m->dropout, ctx->rng, ctx->train));
}
