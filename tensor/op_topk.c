/* topk and sort over the last dim (see qkv/ops.h): the order is found here,
 * and the values are picked by it through the gather node (gather.h), whose
 * backward sends each value's gradient back to where it came from. */
#include <stdlib.h>

#include "gather.h"
#include "graph.h"

/* One value of a row and where it stood. */
typedef struct ranked {
    qkv_real v;
    int32_t at;
} ranked;

/* -1, 0, 1 as u is below, level with or above w, a NaN above every number
 * (as qkv_max_axis has it); then the earlier index first, so ties keep their
 * order in both directions. */
static int compare(const ranked *u, const ranked *w, int dir)
{
    bool un = u->v != u->v, wn = w->v != w->v;
    int c = un != wn ? (un ? 1 : -1) : un || u->v == w->v ? 0 : u->v < w->v ? -1 : 1;
    return c ? dir * c : (u->at > w->at) - (u->at < w->at);
}
static int ascending(const void *u, const void *w) { return compare(u, w, 1); }
static int descending(const void *u, const void *w) { return compare(u, w, -1); }

/* The first k indices of each row of x (rows, cols) in the order asked, into
 * ids (rows, k); scratch holds cols entries. */
static void rank_rows(int32_t *ids, ranked *scratch, const qkv_tensor *x, int k, bool desc)
{
    size_t rows = qkv__rows(x), cols = (size_t)qkv__cols(x);
    for (size_t r = 0; r < rows; r++) {
        for (size_t j = 0; j < cols; j++)
            scratch[j] = (ranked){x->data[r * cols + j], (int32_t)j};
        qsort(scratch, cols, sizeof *scratch, desc ? descending : ascending);
        for (int j = 0; j < k; j++)
            ids[r * (size_t)k + (size_t)j] = scratch[j].at;
    }
}

/* The k first values of each row in the order asked, their indices into *indices. */
static qkv_tensor *ranked_values(qkv_arena *a, const char *fn, qkv_tensor *x, int k, bool desc,
                                 int32_t **indices)
{
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0)
        return NULL;
    if (k < 1 || k > qkv__cols(x)) {
        char s[64];
        qkv_set_error("%s: k %d must be in [1, %d], the last dim of %s", fn, k, qkv__cols(x),
                      qkv_shape_str(x, s, sizeof s));
        return NULL;
    }
    /* The row being sorted lives in the arena too: one row, until the next reset. */
    int32_t *ids = qkv_arena_alloc(a, qkv__rows(x) * (size_t)k * sizeof *ids);
    ranked *scratch = ids ? qkv_arena_alloc(a, (size_t)qkv__cols(x) * sizeof *scratch) : NULL;
    if (!scratch)
        return NULL;
    rank_rows(ids, scratch, x, k, desc);
    qkv_tensor *y = qkv__take(a, fn, x, -1, k, ids, true);
    if (y && indices)
        *indices = ids;
    return y;
}

qkv_tensor *qkv_topk(qkv_arena *a, qkv_tensor *x, int k, int32_t **indices)
{
    return ranked_values(a, "qkv_topk", x, k, true, indices);
}

qkv_tensor *qkv_sort(qkv_arena *a, qkv_tensor *x, bool descending, int32_t **indices)
{
    return ranked_values(a, "qkv_sort", x, x ? qkv__cols(x) : 0, descending, indices);
}
