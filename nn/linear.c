/* Linear: y = x·Wᵀ + b (see qkv/nn.h). */
#include "internal.h"

int qkv_linear_init(qkv_linear *m, qkv_params *p, const char *name, int in, int out, bool bias,
                    qkv_real std)
{
    *m = (qkv_linear){.in = in, .out = out};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(out, in), QKV_INIT_NORMAL, std);
    if (!m->weight)
        return -1;
    if (bias && !(m->bias = qkv__nn_param(p, name, "bias", QKV_SHAPE(out), QKV_INIT_ZEROS, 0)))
        return -1;
    return 0;
}

int qkv__linear_sub(qkv_linear *m, qkv_params *p, const char *prefix, const char *suffix, int in,
                    int out, bool bias, qkv_real std)
{
    char name[QKV_PARAM_NAME_MAX];
    if (qkv__nn_name(name, prefix, suffix) < 0)
        return -1;
    return qkv_linear_init(m, p, name, in, out, bias, std);
}

qkv_tensor *qkv_linear_forward(const qkv_linear *m, const qkv_run *r, qkv_tensor *x)
{
    if (!x)
        return NULL;
    if (x->shape[x->ndim - 1] != m->in) {
        char sx[64], sw[64];
        qkv_set_error("linear %s %s: input has shape %s; its last dim must be %d",
                      m->weight->name ? m->weight->name : "weight",
                      qkv_shape_str(m->weight, sw, sizeof sw), qkv_shape_str(x, sx, sizeof sx),
                      m->in);
        return NULL;
    }
    /* W is stored (out, in): y = x·Wᵀ + b, one fused op. */
    return qkv_affine(r->arena, x, m->weight, m->bias);
}
