/* index_select and gather: values picked along one axis by index (see
 * qkv/ops.h and gather.h). */
#include "axis.h"
#include "gather.h"
#include "graph.h"

typedef struct take_ctx {
    qkv__axis_view v;   /* x around the axis */
    size_t n;           /* picks per row: the result's extent on the axis */
    const int32_t *ids; /* n, or outer·n·inner with per_value */
    bool per_value;
} take_ctx;

/* Where value (o, j, i) of the result comes from in x. */
static inline size_t source(const take_ctx *c, size_t o, size_t j, size_t i)
{
    size_t q = (o * c->n + j) * c->v.inner + i;
    return (o * c->v.n + (size_t)c->ids[c->per_value ? q : j]) * c->v.inner + i;
}

/* dx[source] += dy. Rows o are the parallel tasks: picks never cross from one
 * row of x to another, so repeated ids only meet within a thread. */
static void take_backward(qkv_node *nd)
{
    const take_ctx *c = nd->ctx;
    const qkv_real *g = nd->out->grad;
    qkv_real *dx = nd->in[0]->grad;
#pragma omp parallel for schedule(static) if (nd->out->size >= QKV__PAR_MIN)
    for (size_t o = 0; o < c->v.outer; o++)
        for (size_t j = 0; j < c->n; j++)
            for (size_t i = 0; i < c->v.inner; i++)
                dx[source(c, o, j, i)] += g[(o * c->n + j) * c->v.inner + i];
}

qkv_tensor *qkv__take(qkv_arena *a, const char *fn, qkv_tensor *x, int axis, int n,
                      const int32_t *ids, bool per_value)
{
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 || qkv__null(fn, "ids", ids) ||
        (axis = qkv__axis(fn, "axis", x, axis)) < 0)
        return NULL;
    if (n < 1) {
        qkv_set_error("%s: n must be at least 1, not %d", fn, n);
        return NULL;
    }
    int shape[QKV_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++)
        shape[d] = d == axis ? n : x->shape[d];
    take_ctx c = {qkv__axis_view_of(x, axis), (size_t)n, NULL, per_value};
    size_t count = per_value ? c.v.outer * c.n * c.v.inner : c.n;
    for (size_t q = 0; q < count; q++)
        if (ids[q] < 0 || (size_t)ids[q] >= c.v.n) {
            qkv_set_error("%s: ids[%zu] = %d is outside [0, %zu), the extent of axis %d", fn, q,
                          (int)ids[q], c.v.n, axis);
            return NULL;
        }
    qkv_tensor *out = qkv_tensor_new(a, x->ndim, shape);
    int32_t *kept = out ? qkv_arena_alloc(a, count * sizeof *kept) : NULL;
    if (!kept)
        return NULL;
    for (size_t q = 0; q < count; q++)
        kept[q] = ids[q];
    c.ids = kept;
    for (size_t o = 0; o < c.v.outer; o++)
        for (size_t j = 0; j < c.n; j++)
            for (size_t i = 0; i < c.v.inner; i++)
                out->data[(o * c.n + j) * c.v.inner + i] = x->data[source(&c, o, j, i)];
    qkv_node *nd = qkv__record(a, out, fn, take_backward, 1, &x);
    if (nd && !qkv__set_ctx(a, nd, &c, sizeof c))
        return NULL;
    return out;
}

qkv_tensor *qkv_index_select(qkv_arena *a, qkv_tensor *x, int axis, int n, const int32_t *ids)
{
    return qkv__take(a, "qkv_index_select", x, axis, n, ids, false);
}

qkv_tensor *qkv_gather(qkv_arena *a, qkv_tensor *x, int axis, int n, const int32_t *ids)
{
    return qkv__take(a, "qkv_gather", x, axis, n, ids, true);
}
