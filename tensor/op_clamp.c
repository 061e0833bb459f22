/* clamp: x held to [lo, hi] (see qkv/ops.h). */
#include "graph.h"

typedef struct clamp_ctx {
    qkv_real lo, hi;
} clamp_ctx;

/* dx += dy where lo <= x <= hi: a value that was held to a bound does not
 * move with x, so it passes no gradient (at a bound itself x passes, as PyTorch's). */
static void clamp_backward(qkv_node *n)
{
    const clamp_ctx *c = n->ctx;
    const qkv_real *x = n->in[0]->data, *dy = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
#pragma omp parallel for schedule(static) if (n->out->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < n->out->size; i++)
        dx[i] += x[i] >= c->lo && x[i] <= c->hi ? dy[i] : 0;
}

qkv_tensor *qkv_clamp(qkv_arena *a, qkv_tensor *x, qkv_real lo, qkv_real hi)
{
    const char *fn = "qkv_clamp";
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0)
        return NULL;
    if (!(lo <= hi)) { /* also rejects a NaN bound */
        qkv_set_error("%s: lo %g must be at most hi %g (and neither NaN)", fn, (double)lo,
                      (double)hi);
        return NULL;
    }
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
    clamp_ctx c = {lo, hi};
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++)
        y->data[i] = x->data[i] < lo ? lo : x->data[i] > hi ? hi : x->data[i];
    qkv_node *n = qkv__record(a, y, fn, clamp_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return y;
}
