/* concat and slice, along the last dim or any other (see qkv/ops.h). Around
 * the axis a tensor is (outer, n, inner) (axis.h), and indices [k0, k0+m)
 * of the axis are columns [k0·inner, (k0+m)·inner) of (outer, n·inner): both
 * ops are copies of column blocks. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "axis.h"
#include "graph.h"

/* For each of rows rows: dst[r, dst_off + j] (+)= src[r, src_off + j] for j < width,
 * where dst rows hold dst_cols values and src rows src_cols. */
static void copy_columns(qkv_real *dst, size_t dst_cols, size_t dst_off, const qkv_real *src,
                         size_t src_cols, size_t src_off, size_t width, size_t rows,
                         bool accumulate)
{
#pragma omp parallel for schedule(static) if (rows * width >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        qkv_real *d = dst + r * dst_cols + dst_off;
        const qkv_real *s = src + r * src_cols + src_off;
        if (accumulate)
            for (size_t j = 0; j < width; j++)
                d[j] += s[j];
        else
            memcpy(d, s, width * sizeof *d);
    }
}

/* The columns of t's (outer, n·inner) view around axis: n·inner. */
static size_t axis_cols(const qkv_tensor *t, int axis)
{
    qkv__axis_view v = qkv__axis_view_of(t, axis);
    return v.n * v.inner;
}

/* Each input's gradient is its block of columns of the output gradient. */
static void concat_backward(qkv_node *n)
{
    int axis = *(const int *)n->ctx;
    qkv_tensor *y = n->out;
    size_t rows = qkv__axis_view_of(y, axis).outer, off = 0;
    for (int i = 0; i < n->n_in; i++) {
        qkv_tensor *x = n->in[i];
        size_t w = axis_cols(x, axis);
        if (x->grad)
            copy_columns(x->grad, w, 0, y->grad, axis_cols(y, axis), off, w, rows, true);
        off += w;
    }
}

/* qkv_concat (last true: along the last dim, whatever axis says) and
 * qkv_concat_axis; fn names the caller in messages. */
static qkv_tensor *concat_in(const char *fn, qkv_arena *a, int n, qkv_tensor *const *xs,
                             int axis, bool last)
{
    if (n < 1) {
        qkv_set_error("%s: n is %d; it needs at least one tensor", fn, n);
        return NULL;
    }
    if (qkv__null(fn, "xs", xs))
        return NULL;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "xs[%d]", i);
        if (qkv__check_input(fn, name, xs[i]) < 0)
            return NULL;
    }
    const qkv_tensor *first = xs[0];
    if (qkv__null(fn, "arena", a) ||
        (axis = last ? first->ndim - 1 : qkv__axis(fn, "axis", first, axis)) < 0)
        return NULL;
    long long total = 0;
    for (int i = 0; i < n; i++) {
        const qkv_tensor *x = xs[i];
        bool agree = x->ndim == first->ndim;
        for (int d = 0; agree && d < x->ndim; d++)
            agree = d == axis || x->shape[d] == first->shape[d];
        if (!agree) {
            char what[48];
            snprintf(what, sizeof what, last ? "all dims but the last must agree"
                                             : "all dims but axis %d must agree", axis);
            return qkv__shape_error(fn, what, first, x);
        }
        total += x->shape[axis];
    }
    if (total > INT_MAX) {
        qkv_set_error("%s: the result would have %lld along dim %d", fn, total, axis);
        return NULL;
    }
    int shape[QKV_MAX_DIMS];
    memcpy(shape, first->shape, sizeof shape);
    shape[axis] = (int)total;
    qkv_tensor *y = qkv_tensor_new(a, first->ndim, shape);
    if (!y)
        return NULL;
    size_t rows = qkv__axis_view_of(y, axis).outer, off = 0;
    for (int i = 0; i < n; i++) {
        size_t w = axis_cols(xs[i], axis);
        copy_columns(y->data, axis_cols(y, axis), off, xs[i]->data, w, 0, w, rows, false);
        off += w;
    }
    qkv_node *node = qkv__record(a, y, fn, concat_backward, n, xs);
    if (node && !qkv__set_ctx(a, node, &axis, sizeof axis))
        return NULL;
    return y;
}

qkv_tensor *qkv_concat(qkv_arena *a, int n, qkv_tensor *const *xs)
{
    return concat_in("qkv_concat", a, n, xs, -1, true);
}

qkv_tensor *qkv_concat_axis(qkv_arena *a, int n, qkv_tensor *const *xs, int axis)
{
    return concat_in("qkv_concat_axis", a, n, xs, axis, false);
}

/* Where a slice lies: its axis and first index. */
typedef struct slice_ctx {
    int axis, start;
} slice_ctx;

static void slice_backward(qkv_node *n)
{
    const slice_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0], *y = n->out;
    qkv__axis_view v = qkv__axis_view_of(y, c->axis);
    copy_columns(x->grad, axis_cols(x, c->axis), (size_t)c->start * v.inner, y->grad,
                 v.n * v.inner, 0, v.n * v.inner, v.outer, true);
}

/* qkv_slice (last true: the columns of the last dim) and qkv_slice_axis. */
static qkv_tensor *slice_in(const char *fn, qkv_arena *a, qkv_tensor *x, int axis, int start,
                            int len, bool last)
{
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 ||
        (axis = last ? x->ndim - 1 : qkv__axis(fn, "axis", x, axis)) < 0)
        return NULL;
    int extent = x->shape[axis];
    if (start < 0 || len < 1 || start > extent - len) {
        char s[64], where[32];
        snprintf(where, sizeof where, last ? "the last dim" : "dim %d", axis);
        qkv_set_error("%s: %s [%d, %lld) are not a non-empty part of %s of shape %s", fn,
                      last ? "columns" : "indices", start, (long long)start + len, where,
                      qkv_shape_str(x, s, sizeof s));
        return NULL;
    }
    int shape[QKV_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = len;
    qkv_tensor *y = qkv_tensor_new(a, x->ndim, shape);
    if (!y)
        return NULL;
    qkv__axis_view v = qkv__axis_view_of(y, axis);
    copy_columns(y->data, v.n * v.inner, 0, x->data, axis_cols(x, axis),
                 (size_t)start * v.inner, v.n * v.inner, v.outer, false);
    slice_ctx c = {axis, start};
    qkv_node *n = qkv__record(a, y, fn, slice_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return y;
}

qkv_tensor *qkv_slice(qkv_arena *a, qkv_tensor *x, int start, int len)
{
    return slice_in("qkv_slice", a, x, -1, start, len, true);
}

qkv_tensor *qkv_slice_axis(qkv_arena *a, qkv_tensor *x, int axis, int start, int len)
{
    return slice_in("qkv_slice_axis", a, x, axis, start, len, false);
}
