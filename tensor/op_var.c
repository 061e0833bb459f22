/* var_axis: the variance over one axis (see qkv/ops.h). */
#include "axis.h"
#include "graph.h"

typedef struct var_ctx {
    qkv__axis_view v;
    const qkv_real *mean; /* each line's mean, (outer, inner) */
    qkv_real denom;       /* n - correction */
} var_ctx;

/* mean[o, i] and out[o, i] = Σ_k (x[o, k, i] - mean)² / denom, in double, two passes. */
static void var_forward(qkv_real *out, qkv_real *mean, const qkv_real *x, const var_ctx *c)
{
    qkv__axis_view v = c->v;
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m * v.n >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++) {
        const qkv_real *xp = x + p / v.inner * v.n * v.inner + p % v.inner;
        double s = 0, ss = 0;
        for (size_t k = 0; k < v.n; k++)
            s += xp[k * v.inner];
        double mu = s / (double)v.n;
        for (size_t k = 0; k < v.n; k++)
            ss += (xp[k * v.inner] - mu) * (xp[k * v.inner] - mu);
        mean[p] = (qkv_real)mu;
        out[p] = (qkv_real)(ss / c->denom);
    }
}

/* dx[o, k, i] += dout[o, i] · 2 (x[o, k, i] - mean[o, i]) / denom (the mean's
 * own change sums to 0 over the line, so it drops out). */
static void var_backward(qkv_node *n)
{
    const var_ctx *c = n->ctx;
    qkv__axis_view v = c->v;
    const qkv_real *x = n->in[0]->data, *g = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
    size_t size = v.outer * v.n * v.inner;
#pragma omp parallel for schedule(static) if (size >= QKV__PAR_MIN)
    for (size_t q = 0; q < size; q++) {
        size_t p = q / (v.n * v.inner) * v.inner + q % v.inner;
        dx[q] += g[p] * 2 * (x[q] - c->mean[p]) / c->denom;
    }
}

qkv_tensor *qkv_var_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim, int correction)
{
    const char *fn = "qkv_var_axis";
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 || (axis = qkv__axis(fn, "axis", x, axis)) < 0)
        return NULL;
    if (correction < 0 || correction >= x->shape[axis]) {
        qkv_set_error("%s: correction %d must be in [0, %d), below the extent of axis %d", fn,
                      correction, x->shape[axis], axis);
        return NULL;
    }
    int shape[QKV_MAX_DIMS];
    int ndim = qkv__reduced_shape(x, axis, keepdim, shape);
    qkv_tensor *out = qkv_tensor_new(a, ndim, shape);
    qkv_real *mean = out ? qkv_arena_alloc(a, out->size * sizeof *mean) : NULL;
    if (!mean)
        return NULL;
    var_ctx c = {qkv__axis_view_of(x, axis), mean, (qkv_real)(x->shape[axis] - correction)};
    var_forward(out->data, mean, x->data, &c);
    qkv_node *n = qkv__record(a, out, fn, var_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return out;
}
