/* Linear: y = x·Wᵀ + b (see qkv/nn.h). */
#include "tensor/op_affine.h"
#include "internal.h"

int qkv_linear_init(qkv_linear *m, qkv_params *p, const char *name, int in, int out, bool bias,
                    qkv_real std)
{
    if (qkv__check_init("qkv_linear_init", m, p, name) < 0)
        return -1;
    *m = (qkv_linear){.in = in, .out = out};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(out, in), QKV_INIT_NORMAL, std);
    if (!m->weight ||
        (bias && !(m->bias = qkv__nn_param(p, name, "bias", QKV_SHAPE(out), QKV_INIT_ZEROS, 0))))
        return qkv__fail_in("qkv_linear_init");
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

/* 0 when x's last dim is the layer's input width, else -1 with a message. */
static int check_input(const char *fn, const qkv_linear *m, const qkv_ctx *ctx, const qkv_tensor *x)
{
    if (qkv__check_forward(fn, m, ctx, m ? m->weight : NULL) < 0 || qkv__check_input(fn, "x", x) < 0)
        return -1;
    if (x->shape[x->ndim - 1] == m->in)
        return 0;
    char sx[64], sw[64];
    return qkv_set_error("%s %s %s: input has shape %s; its last dim must be %d", fn,
                         m->weight->name ? m->weight->name : "weight",
                         qkv_shape_str(m->weight, sw, sizeof sw), qkv_shape_str(x, sx, sizeof sx),
                         m->in);
}

qkv_tensor *qkv_linear_forward(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    if (check_input("qkv_linear_forward", m, ctx, x) < 0)
        return NULL;
    /* W is stored (out, in): y = x·Wᵀ + b, one fused op. */
    return qkv__result("qkv_linear_forward", qkv_affine(ctx->arena, x, m->weight, m->bias));
}

qkv_tensor *qkv__linear_act(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x,
                            qkv_activation act)
{
    if (check_input("qkv_linear_forward", m, ctx, x) < 0) /* the messages the unfused forward gives */
        return NULL;
    return qkv__affine_act(ctx->arena, x, m->weight, m->bias, act);
}

/* Rows [first, first + count) of the parameter t, sharing its values and its
 * gradient, so what backward adds into the view lands in t's gradient. */
static qkv_tensor *rows_of(qkv_arena *a, const qkv_tensor *t, int first, int count)
{
    if (t->requires_grad && !t->grad) {
        qkv_set_error("linear: %s needs its gradient buffer (qkv_params_alloc) to be split",
                      t->name ? t->name : "the weight");
        return NULL;
    }
    qkv_tensor *v = qkv_arena_alloc(a, sizeof *v);
    if (!v)
        return NULL;
    size_t row = t->size / (size_t)t->shape[0];
    *v = *t;
    v->shape[0] = count;
    v->size = row * (size_t)count;
    v->data = t->data + (size_t)first * row;
    v->grad = t->grad ? t->grad + (size_t)first * row : NULL;
    return v;
}

qkv_tensor *qkv__linear_part(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x, int first,
                             int count)
{
    if (check_input("qkv_linear_forward", m, ctx, x) < 0)
        return NULL;
    qkv_arena *a = ctx->arena;
    qkv_tensor *w = rows_of(a, m->weight, first, count);
    qkv_tensor *b = m->bias ? rows_of(a, m->bias, first, count) : NULL;
    if (!w || (m->bias && !b))
        return NULL;
    return qkv_affine(a, x, w, b);
}
