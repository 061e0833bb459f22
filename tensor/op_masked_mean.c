/* The masked mean over one axis (see qkv/ops.h): mean-pooling the real
 * tokens of a padded batch. x is viewed as (outer, n, inner) around the axis
 * (axis.h) and the mask as (outer, n); result value (o, i) is
 * Σ_k mask[o, k] · x[o, k, i] / count[o], count[o] = Σ_k mask[o, k]. */
#include "axis.h"
#include "graph.h"

/* What backward needs: the view and each (o, k)'s weight, mask[o, k] / count[o]
 * (0 where the mask is clear, and everywhere in a row with nothing set). */
typedef struct masked_ctx {
    qkv__axis_view v;
    const qkv_real *weight; /* (outer, n), from the arena */
} masked_ctx;

/* weight[o, k] = mask[o, k] ? 1 / count[o] : 0; out[o, i] = the mean of the
 * set x[o, k, i], summed in double in order of k. */
static void masked_mean_forward(qkv_real *out, qkv_real *weight, const qkv_real *x,
                                const uint8_t *mask, qkv__axis_view v)
{
    for (size_t o = 0; o < v.outer; o++) {
        size_t count = 0;
        for (size_t k = 0; k < v.n; k++)
            count += mask[o * v.n + k] != 0;
        for (size_t k = 0; k < v.n; k++)
            weight[o * v.n + k] = mask[o * v.n + k] && count ? (qkv_real)(1.0 / (double)count) : 0;
    }
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m * v.n >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++) {
        size_t o = p / v.inner;
        const qkv_real *xp = x + o * v.n * v.inner + p % v.inner;
        double s = 0, count = 0;
        for (size_t k = 0; k < v.n; k++)
            if (mask[o * v.n + k]) {
                s += xp[k * v.inner];
                count++;
            }
        out[p] = count ? (qkv_real)(s / count) : 0;
    }
}

static void masked_mean_backward(qkv_node *n)
{
    const masked_ctx *c = n->ctx;
    qkv__spread_axis(n->in[0]->grad, n->out->grad, c->v, c->weight, 0);
}

qkv_tensor *qkv_masked_mean(qkv_arena *a, qkv_tensor *x, int axis, const uint8_t *mask)
{
    const char *fn = "qkv_masked_mean";
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 || qkv__null(fn, "mask", mask) ||
        (axis = qkv__axis(fn, "axis", x, axis)) < 0)
        return NULL;
    int shape[QKV_MAX_DIMS];
    int ndim = qkv__reduced_shape(x, axis, false, shape);
    masked_ctx c = {qkv__axis_view_of(x, axis), NULL};
    qkv_tensor *out = qkv_tensor_new(a, ndim, shape);
    qkv_real *weight = out ? qkv_arena_alloc(a, c.v.outer * c.v.n * sizeof *weight) : NULL;
    if (!weight)
        return NULL;
    masked_mean_forward(out->data, weight, x->data, mask, c.v);
    c.weight = weight;
    qkv_node *n = qkv__record(a, out, fn, masked_mean_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return out;
}
