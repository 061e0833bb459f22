/* where: each value from x or y by a condition (see qkv/ops.h). */
#include <string.h>

#include "graph.h"

/* dx += dy where cond, dy += dy where not: each value came from one of them. */
static void where_backward(qkv_node *n)
{
    const uint8_t *cond = n->ctx;
    const qkv_real *g = n->out->grad;
    qkv_real *dx = n->in[0]->grad, *dy = n->in[1]->grad;
#pragma omp parallel for schedule(static) if (n->out->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < n->out->size; i++) {
        if (dx && cond[i])
            dx[i] += g[i];
        if (dy && !cond[i])
            dy[i] += g[i];
    }
}

qkv_tensor *qkv_where(qkv_arena *a, const uint8_t *cond, qkv_tensor *x, qkv_tensor *y)
{
    const char *fn = "qkv_where";
    qkv_tensor *in[2] = {x, y};
    if (qkv__check_inputs(fn, a, "x y", 2, in) < 0 || qkv__null(fn, "cond", cond))
        return NULL;
    if (!qkv_same_shape(x, y))
        return qkv__shape_error(fn, "x and y must have the same shape", x, y);
    qkv_tensor *out = qkv__like(a, x);
    uint8_t *kept = out ? qkv_arena_alloc(a, x->size) : NULL;
    if (!kept)
        return NULL;
    memcpy(kept, cond, x->size);
    for (size_t i = 0; i < x->size; i++)
        out->data[i] = cond[i] ? x->data[i] : y->data[i];
    qkv_node *n = qkv__record(a, out, fn, where_backward, 2, in);
    if (n)
        n->ctx = kept;
    return out;
}
