/* x^p for a constant exponent p (see qkv/ops.h), with libm's pow (<tgmath.h>
 * picks powf or pow by qkv_real). */
#include <tgmath.h>

#include "graph.h"

/* dx += dy · p·x^(p-1); p = 0 gives 0 everywhere (x^0 is the constant 1, and
 * 0·0^-1 would be NaN at x = 0). */
static void pow_backward(qkv_node *n)
{
    qkv_real p = *(const qkv_real *)n->ctx;
    const qkv_real *x = n->in[0]->data, *dy = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
    if (p == 0)
        return;
#pragma omp parallel for schedule(static) if (n->out->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < n->out->size; i++)
        dx[i] += dy[i] * p * pow(x[i], p - 1);
}

qkv_tensor *qkv_pow(qkv_arena *a, qkv_tensor *x, qkv_real p)
{
    if (qkv__check_inputs("qkv_pow", a, "x", 1, &x) < 0 ||
        qkv__not_finite("qkv_pow", "p", (double)p))
        return NULL;
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++)
        y->data[i] = pow(x->data[i], p);
    qkv_node *n = qkv__record(a, y, "qkv_pow", pow_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &p, sizeof p))
        return NULL;
    return y;
}
