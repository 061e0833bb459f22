/* LayerNorm module: the qkv_layernorm op with learned scale and shift; or the
 * qkv_rmsnorm op with a learned scale (see qkv/nn.h). */
#include "internal.h"

int qkv_ln_init(qkv_ln *m, qkv_params *p, const char *name, int dim, bool bias)
{
    if (qkv__check_init("qkv_ln_init", m, p, name) < 0)
        return -1;
    *m = (qkv_ln){.eps = (qkv_real)1e-5};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(dim), QKV_INIT_ONES, 0);
    if (!m->weight ||
        (bias && !(m->bias = qkv__nn_param(p, name, "bias", QKV_SHAPE(dim), QKV_INIT_ZEROS, 0))))
        return qkv__fail_in("qkv_ln_init");
    return 0;
}

int qkv_rmsnorm_init(qkv_ln *m, qkv_params *p, const char *name, int dim)
{
    if (qkv__check_init("qkv_rmsnorm_init", m, p, name) < 0)
        return -1;
    if (qkv_ln_init(m, p, name, dim, false) < 0)
        return qkv__fail_in("qkv_rmsnorm_init");
    m->rms = true;
    return 0;
}

qkv_tensor *qkv_ln_forward(const qkv_ln *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    if (qkv__check_forward("qkv_ln_forward", m, ctx, m ? m->weight : NULL) < 0 ||
        qkv__check_input("qkv_ln_forward", "x", x) < 0)
        return NULL;
    if (m->rms)
        return qkv__result("qkv_ln_forward", qkv_rmsnorm(ctx->arena, x, m->weight, m->eps));
    return qkv__result("qkv_ln_forward", qkv_layernorm(ctx->arena, x, m->weight, m->bias, m->eps));
}
