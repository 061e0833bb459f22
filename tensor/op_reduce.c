/* sum and mean of all values (see qkv/ops.h). */
#include "graph.h"

static void reduce_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    qkv_real g = n->out->grad[0] * *(qkv_real *)n->ctx; /* ctx: 1 for sum, 1/size for mean */
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++)
        x->grad[i] += g;
}

static qkv_tensor *reduce(qkv_arena *a, qkv_tensor *x, const char *op, qkv_real factor)
{
    if (qkv__check_inputs(op, a, "x", 1, &x) < 0)
        return NULL;
    qkv_tensor *out = qkv_tensor_new(a, QKV_SHAPE(1));
    if (!out)
        return NULL;
    double s = 0; /* double: a long float sum loses digits */
#pragma omp parallel for reduction(+ : s) schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++)
        s += x->data[i];
    out->data[0] = (qkv_real)(s * factor);
    qkv_node *n = qkv__record(a, out, op, reduce_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &factor, sizeof factor))
        return NULL;
    return out;
}

qkv_tensor *qkv_sum(qkv_arena *a, qkv_tensor *x) { return reduce(a, x, "qkv_sum", 1); }

qkv_tensor *qkv_mean(qkv_arena *a, qkv_tensor *x)
{
    return reduce(a, x, "qkv_mean", x ? (qkv_real)1 / (qkv_real)x->size : 0);
}
