/* LayerNorm module: the qkv_layernorm op with learned scale and shift; or the
 * qkv_rmsnorm op with a learned scale (see qkv/nn.h). */
#include "internal.h"

int qkv_ln_init(qkv_ln *m, qkv_params *p, const char *name, int dim, bool bias)
{
    *m = (qkv_ln){.eps = (qkv_real)1e-5};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(dim), QKV_INIT_ONES, 0);
    if (!m->weight)
        return -1;
    if (bias && !(m->bias = qkv__nn_param(p, name, "bias", QKV_SHAPE(dim), QKV_INIT_ZEROS, 0)))
        return -1;
    return 0;
}

int qkv_rmsnorm_init(qkv_ln *m, qkv_params *p, const char *name, int dim)
{
    if (!m || !p || !name)
        return qkv_set_error("rmsnorm_init: the %s is NULL", !m ? "module" : !p ? "params" : "name");
    if (qkv_ln_init(m, p, name, dim, false) < 0)
        return -1;
    m->rms = true;
    return 0;
}

qkv_tensor *qkv_ln_forward(const qkv_ln *m, const qkv_run *r, qkv_tensor *x)
{
    if (m->rms)
        return qkv_rmsnorm(r->arena, x, m->weight, m->eps);
    return qkv_layernorm(r->arena, x, m->weight, m->bias, m->eps);
}
