/* embedding: gather rows of a table by id (see qkv/ops.h). */
#include <string.h>

#include "graph.h"

typedef struct emb_ctx {
    const int32_t *ids; /* the ids, copied into the arena */
    size_t n;           /* how many */
} emb_ctx;

/* out[i] = table[ids[i]] for each of n ids; table is (V, C), out (n, C). */
static void embedding_forward(qkv_real *out, const qkv_real *table, const int32_t *ids, size_t n,
                              int C)
{
#pragma omp parallel for schedule(static) if (n * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        memcpy(out + i * (size_t)C, table + (size_t)ids[i] * (size_t)C, (size_t)C * sizeof *out);
}

/* dtable[ids[i]] += dout[i] for each of n ids; dout is (n, C). Repeated ids add
 * up, so threads split the columns, not the ids: no two threads ever add into
 * the same value, and each value sums its ids in order, which gives the same
 * result at every thread count. */
static void embedding_backward_kernel(qkv_real *dtable, const qkv_real *dout, const int32_t *ids,
                                      size_t n, int C)
{
    enum { BLOCK = 16 }; /* columns per task: one cache line of floats */
    int blocks = (C + BLOCK - 1) / BLOCK;
#pragma omp parallel for schedule(static) if (n * (size_t)C >= QKV__PAR_MIN)
    for (int b = 0; b < blocks; b++) {
        int j0 = b * BLOCK, j1 = j0 + BLOCK < C ? j0 + BLOCK : C;
        for (size_t i = 0; i < n; i++) {
            qkv_real *d = dtable + (size_t)ids[i] * (size_t)C;
            const qkv_real *g = dout + i * (size_t)C;
            for (int j = j0; j < j1; j++)
                d[j] += g[j];
        }
    }
}

static void embedding_backward(qkv_node *n)
{
    const emb_ctx *c = n->ctx;
    qkv_tensor *table = n->in[0];
    embedding_backward_kernel(table->grad, n->out->grad, c->ids, c->n, qkv__cols(table));
}

qkv_tensor *qkv_embedding(qkv_arena *a, qkv_tensor *table, const int32_t *ids, int ndim,
                          const int *shape)
{
    if (qkv__check_inputs("qkv_embedding", a, "table", 1, &table) < 0 ||
        qkv__null("qkv_embedding", "shape", shape))
        return NULL;
    char s[64];
    if (table->ndim != 2) {
        qkv_set_error("qkv_embedding: the table must be 2-D (V, C), not shape %s",
                      qkv_shape_str(table, s, sizeof s));
        return NULL;
    }
    if (qkv__null("qkv_embedding", "ids", ids))
        return NULL;
    if (ndim < 1 || ndim > QKV_MAX_DIMS - 1) {
        qkv_set_error("qkv_embedding: ids must be given with 1 to %d dims (not %d)",
                      QKV_MAX_DIMS - 1, ndim);
        return NULL;
    }
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 1) {
            qkv_set_error("qkv_embedding: the ids' shape has extent %d in dim %d", shape[d], d);
            return NULL;
        }
    int V = table->shape[0], C = table->shape[1];
    int out_shape[QKV_MAX_DIMS];
    memcpy(out_shape, shape, (size_t)ndim * sizeof(int));
    out_shape[ndim] = C;
    qkv_tensor *y = qkv_tensor_new(a, ndim + 1, out_shape);
    if (!y)
        return NULL;
    size_t n = y->size / (size_t)C;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V) {
            qkv_set_error(
                "qkv_embedding: id %d at position %zu is outside [0, %d): the table %s has "
                "V = %d rows",
                (int)ids[i], i, V, qkv_shape_str(table, s, sizeof s), V);
            return NULL;
        }
    embedding_forward(y->data, table->data, ids, n, C);
    qkv_node *node = qkv__record(a, y, "embedding", embedding_backward, 1, &table);
    if (node) {
        int32_t *copy = qkv_arena_alloc(a, n * sizeof *copy);
        if (!copy)
            return NULL;
        memcpy(copy, ids, n * sizeof *copy);
        if (!qkv__set_ctx(a, node, &(emb_ctx){copy, n}, sizeof(emb_ctx)))
            return NULL;
    }
    return y;
}
