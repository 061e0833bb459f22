/* reshape, transpose and permute (see qkv/ops.h); concat and slice are op_concat.c. */
#include <stdio.h>
#include <string.h>

#include "axis.h"
#include "graph.h"

/* ---- reshape: a second tensor header over the same values ---- */

static void reshape_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    const qkv_real *g = n->out->grad;
    qkv_real *gx = x->grad;
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++)
        gx[i] += g[i];
}

qkv_tensor *qkv_reshape(qkv_arena *a, qkv_tensor *x, int ndim, const int *shape)
{
    if (qkv__check_inputs("qkv_reshape", a, "x", 1, &x) < 0 ||
        qkv__null("qkv_reshape", "shape", shape))
        return NULL;
    if (ndim < 1 || ndim > QKV_MAX_DIMS) {
        qkv_set_error("qkv_reshape: a shape has 1 to %d dimensions, not %d", QKV_MAX_DIMS, ndim);
        return NULL;
    }
    qkv_tensor want = {.ndim = ndim}; /* only for the error messages */
    memcpy(want.shape, shape, (size_t)ndim * sizeof(int));
    size_t size = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return qkv__shape_error("qkv_reshape", "extents must be >= 1", x, &want);
        if (size > x->size / (size_t)shape[i]) /* also keeps the product from overflowing */
            return qkv__shape_error("qkv_reshape", "the number of values differs", x, &want);
        size *= (size_t)shape[i];
    }
    if (size != x->size)
        return qkv__shape_error("qkv_reshape", "the number of values differs", x, &want);
    qkv_tensor *out = qkv_arena_calloc(a, sizeof *out);
    if (!out)
        return NULL;
    *out = want;
    out->data = x->data; /* shared: reshaping costs no copy */
    out->size = size;
    qkv__record(a, out, "reshape", reshape_backward, 1, &x);
    return out;
}

/* ---- permute and transpose: a copy with the dimensions reordered ---- */

/* dst (+)= src with its dims reordered: dst dim k is src dim perm[k]. src has
 * ndim (<= 4) dims of extents src_shape; both are contiguous. Each row of dst
 * (its last dim) belongs to one thread, so accumulating is race-free. */
static void permute_kernel(qkv_real *dst, const qkv_real *src, const int *src_shape,
                           const int *perm, int ndim, bool accumulate)
{
    /* Pad with leading extent-1 dims so one loop nest serves every ndim. */
    int pad = QKV_MAX_DIMS - ndim;
    size_t src_stride[QKV_MAX_DIMS], step = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        src_stride[i] = step;
        step *= (size_t)src_shape[i];
    }
    int ext[QKV_MAX_DIMS];       /* extents of dst */
    size_t stride[QKV_MAX_DIMS]; /* how far src moves when dst index k moves by one */
    for (int k = 0; k < QKV_MAX_DIMS; k++) {
        ext[k] = k < pad ? 1 : src_shape[perm[k - pad]];
        stride[k] = k < pad ? 0 : src_stride[perm[k - pad]];
    }
    size_t rows = (size_t)ext[0] * (size_t)ext[1] * (size_t)ext[2], cols = (size_t)ext[3];
#pragma omp parallel for schedule(static) if (rows * cols >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        size_t i2 = r % (size_t)ext[2], i1 = r / (size_t)ext[2] % (size_t)ext[1];
        size_t i0 = r / (size_t)ext[2] / (size_t)ext[1];
        const qkv_real *s = src + i0 * stride[0] + i1 * stride[1] + i2 * stride[2];
        qkv_real *d = dst + r * cols;
        if (accumulate)
            for (size_t j = 0; j < cols; j++)
                d[j] += s[j * stride[3]];
        else
            for (size_t j = 0; j < cols; j++)
                d[j] = s[j * stride[3]];
    }
}

/* Backward of a permutation is the inverse permutation of the output gradient. */
static void permute_backward(qkv_node *n)
{
    const int *perm = n->ctx;
    qkv_tensor *x = n->in[0], *y = n->out;
    int inverse[QKV_MAX_DIMS];
    for (int k = 0; k < x->ndim; k++)
        inverse[perm[k]] = k;
    permute_kernel(x->grad, y->grad, y->shape, inverse, x->ndim, true);
}

/* The op behind qkv_permute and qkv_transpose; op names the caller in messages. */
static qkv_tensor *permute_op(qkv_arena *a, qkv_tensor *x, const int *perm, const char *op)
{
    bool seen[QKV_MAX_DIMS] = {false};
    for (int k = 0; k < x->ndim; k++) {
        if (perm[k] < 0 || perm[k] >= x->ndim || seen[perm[k]]) {
            char sp[64], sx[64];
            int n = snprintf(sp, sizeof sp, "{");
            for (int i = 0; i < x->ndim; i++)
                n += snprintf(sp + n, sizeof sp - (size_t)n, i ? ",%d" : "%d", perm[i]);
            snprintf(sp + n, sizeof sp - (size_t)n, "}");
            qkv_set_error("%s: %s is not a permutation of the %d dims of shape %s", op, sp,
                          x->ndim, qkv_shape_str(x, sx, sizeof sx));
            return NULL;
        }
        seen[perm[k]] = true;
    }
    int shape[QKV_MAX_DIMS];
    for (int k = 0; k < x->ndim; k++)
        shape[k] = x->shape[perm[k]];
    qkv_tensor *y = qkv_tensor_new(a, x->ndim, shape);
    if (!y)
        return NULL;
    permute_kernel(y->data, x->data, x->shape, perm, x->ndim, false);
    qkv_node *n = qkv__record(a, y, op, permute_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, perm, (size_t)x->ndim * sizeof *perm))
        return NULL;
    return y;
}

qkv_tensor *qkv_permute(qkv_arena *a, qkv_tensor *x, const int *perm)
{
    if (qkv__check_inputs("qkv_permute", a, "x", 1, &x) < 0 ||
        qkv__null("qkv_permute", "perm", perm))
        return NULL;
    return permute_op(a, x, perm, "qkv_permute");
}

/* x with dims d0 and d1 (counted from the front) swapped, for op. */
static qkv_tensor *swap_dims(qkv_arena *a, qkv_tensor *x, int d0, int d1, const char *op)
{
    int perm[QKV_MAX_DIMS] = {0, 1, 2, 3};
    perm[d0] = d1;
    perm[d1] = d0;
    return permute_op(a, x, perm, op);
}

qkv_tensor *qkv_transpose(qkv_arena *a, qkv_tensor *x)
{
    if (qkv__check_inputs("qkv_transpose", a, "x", 1, &x) < 0)
        return NULL;
    if (x->ndim < 2) {
        char s[64];
        qkv_set_error("qkv_transpose: needs at least 2 dimensions, not shape %s",
                      qkv_shape_str(x, s, sizeof s));
        return NULL;
    }
    return swap_dims(a, x, x->ndim - 2, x->ndim - 1, "qkv_transpose");
}

qkv_tensor *qkv_transpose_axes(qkv_arena *a, qkv_tensor *x, int d0, int d1)
{
    const char *fn = "qkv_transpose_axes";
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 || (d0 = qkv__axis(fn, "d0", x, d0)) < 0 ||
        (d1 = qkv__axis(fn, "d1", x, d1)) < 0)
        return NULL;
    return swap_dims(a, x, d0, d1, fn);
}
