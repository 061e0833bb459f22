/* cumsum: running sums along one axis (see qkv/ops.h). */
#include "axis.h"
#include "graph.h"

/* out[o, k, i] = Σ_{j <= k} x[o, j, i] (reverse: Σ_{j >= k}, the backward's
 * sum), plus what out held when accumulating. Each (o, i) is one thread's
 * line, summed in double in order. */
static void running_sums(qkv_real *out, const qkv_real *x, qkv__axis_view v, bool reverse,
                         bool accumulate)
{
    size_t m = v.outer * v.inner;
#pragma omp parallel for schedule(static) if (m * v.n >= QKV__PAR_MIN)
    for (size_t p = 0; p < m; p++) {
        size_t base = p / v.inner * v.n * v.inner + p % v.inner;
        double s = 0;
        for (size_t t = 0; t < v.n; t++) {
            size_t q = base + (reverse ? v.n - 1 - t : t) * v.inner;
            s += x[q];
            out[q] = (accumulate ? out[q] : 0) + (qkv_real)s;
        }
    }
}

/* x[o, j, i] reaches every out[o, k, i] with k >= j: dx += the reverse running sum of dout. */
static void cumsum_backward(qkv_node *n)
{
    running_sums(n->in[0]->grad, n->out->grad, *(const qkv__axis_view *)n->ctx, true, true);
}

qkv_tensor *qkv_cumsum(qkv_arena *a, qkv_tensor *x, int axis)
{
    if (qkv__check_inputs("qkv_cumsum", a, "x", 1, &x) < 0 ||
        (axis = qkv__axis("qkv_cumsum", "axis", x, axis)) < 0)
        return NULL;
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
    qkv__axis_view v = qkv__axis_view_of(x, axis);
    running_sums(y->data, x->data, v, false, false);
    qkv_node *n = qkv__record(a, y, "qkv_cumsum", cumsum_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &v, sizeof v))
        return NULL;
    return y;
}
