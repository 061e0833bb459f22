/* sum, mean and max over one axis, and argmax (see qkv/ops.h). x is viewed
 * as (outer, n, inner) around the axis (axis.h); each result value (o, i) is
 * one thread's, which walks k = 0..n-1 in order: the same sums at any thread
 * count. */
#include "axis.h"
#include "graph.h"

/* What backward needs: the view, and the sum's factor (1, or 1/n for the
 * mean) or the max's index per result value. */
typedef struct reduce_ctx {
    qkv__axis_view v;
    qkv_real factor;      /* sum, mean */
    const int32_t *index; /* max: which k each result value came from */
} reduce_ctx;

/* out[o, i] = factor · Σ_k x[o, k, i], summed in double (a long float sum loses digits). */
static void sum_forward(qkv_real *out, const qkv_real *x, qkv__axis_view v, qkv_real factor)
{
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m * v.n >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++) {
        const qkv_real *xp = x + p / v.inner * v.n * v.inner + p % v.inner;
        double s = 0;
        for (size_t k = 0; k < v.n; k++)
            s += xp[k * v.inner];
        out[p] = (qkv_real)(s * factor);
    }
}

void qkv__spread_axis(qkv_real *dx, const qkv_real *g, qkv__axis_view v, const qkv_real *weight,
                      qkv_real factor)
{
    size_t size = v.outer * v.n * v.inner;
#pragma omp parallel for schedule(static) if (size >= QKV__PAR_MIN)
    for (size_t q = 0; q < size; q++)
        dx[q] += (weight ? weight[q / v.inner] : factor) *
                 g[q / (v.n * v.inner) * v.inner + q % v.inner];
}

static void sum_backward(qkv_node *n)
{
    const reduce_ctx *c = n->ctx;
    qkv__spread_axis(n->in[0]->grad, n->out->grad, c->v, NULL, c->factor);
}

/* index[o, i] = the first k with the largest x[o, k, i] (a NaN counts as the
 * largest: the first NaN wins); out[o, i] = that value, when out is not NULL. */
static void max_forward(qkv_real *out, int32_t *index, const qkv_real *x, qkv__axis_view v)
{
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m * v.n >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++) {
        const qkv_real *xp = x + p / v.inner * v.n * v.inner + p % v.inner;
        size_t best = 0;
        for (size_t k = 1; k < v.n && xp[best * v.inner] == xp[best * v.inner]; k++) {
            qkv_real t = xp[k * v.inner];
            if (t > xp[best * v.inner] || t != t)
                best = k;
        }
        index[p] = (int32_t)best;
        if (out)
            out[p] = xp[best * v.inner];
    }
}

/* dx[o, index[o, i], i] += dout[o, i]: one target per result value, so no races. */
static void max_backward(qkv_node *n)
{
    const reduce_ctx *c = n->ctx;
    qkv__axis_view v = c->v;
    const qkv_real *g = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++)
        dx[(p / v.inner * v.n + (size_t)c->index[p]) * v.inner + p % v.inner] += g[p];
}

typedef enum { R_SUM, R_MEAN, R_MAX } reduction;

static qkv_tensor *reduce_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim, reduction r)
{
    static const char *name[] = {"qkv_sum_axis", "qkv_mean_axis", "qkv_max_axis"};
    if (qkv__check_inputs(name[r], a, "x", 1, &x) < 0 ||
        (axis = qkv__axis(name[r], "axis", x, axis)) < 0)
        return NULL;
    int shape[QKV_MAX_DIMS];
    int ndim = qkv__reduced_shape(x, axis, keepdim, shape);
    qkv_tensor *out = qkv_tensor_new(a, ndim, shape);
    reduce_ctx c = {qkv__axis_view_of(x, axis), r == R_MEAN ? (qkv_real)1 / (qkv_real)x->shape[axis] : 1,
                    NULL};
    int32_t *index = r == R_MAX && out ? qkv_arena_alloc(a, out->size * sizeof *index) : NULL;
    if (!out || (r == R_MAX && !index))
        return NULL;
    if (r == R_MAX)
        max_forward(out->data, index, x->data, c.v);
    else
        sum_forward(out->data, x->data, c.v, c.factor);
    c.index = index;
    qkv_node *n = qkv__record(a, out, name[r], r == R_MAX ? max_backward : sum_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return out;
}

qkv_tensor *qkv_sum_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim)
{
    return reduce_axis(a, x, axis, keepdim, R_SUM);
}

qkv_tensor *qkv_mean_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim)
{
    return reduce_axis(a, x, axis, keepdim, R_MEAN);
}

qkv_tensor *qkv_max_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim)
{
    return reduce_axis(a, x, axis, keepdim, R_MAX);
}

int32_t *qkv_argmax(qkv_arena *a, qkv_tensor *x, int axis)
{
    if (qkv__check_inputs("qkv_argmax", a, "x", 1, &x) < 0 ||
        (axis = qkv__axis("qkv_argmax", "axis", x, axis)) < 0)
        return NULL;
    qkv__axis_view v = qkv__axis_view_of(x, axis);
    int32_t *index = qkv_arena_alloc(a, v.outer * v.inner * sizeof *index);
    if (index)
        max_forward(NULL, index, x->data, v);
    return index;
}
