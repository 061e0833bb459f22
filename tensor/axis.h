/* Internal: an axis argument, checked and counted from the front, and the
 * view every op over one axis takes of its input. Not installed. */
#ifndef QKV_AXIS_H
#define QKV_AXIS_H

#include "qkv/tensor.h"

/* x as (outer, n, inner) around one axis: outer the product of the dims
 * before it, n its extent, inner the product of the dims after it. Value
 * (o, k, i) is at (o·n + k)·inner + i. */
typedef struct qkv__axis_view {
    size_t outer, n, inner;
} qkv__axis_view;

/* axis counted from the front (0..ndim-1), given 0..ndim-1 or -ndim..-1
 * (-1: the last dim); -1 with a message naming fn, arg and x's shape when it
 * is outside both. */
int qkv__axis(const char *fn, const char *arg, const qkv_tensor *x, int axis);

/* The view of x around axis (counted from the front). */
qkv__axis_view qkv__axis_view_of(const qkv_tensor *x, int axis);

/* Into shape, x's shape with axis reduced: extent 1 with keepdim, else
 * dropped (a 1-D x gives (1)); returns the result's ndim. */
int qkv__reduced_shape(const qkv_tensor *x, int axis, bool keepdim, int *shape);

/* The backward of a reduction over the axis of view v: dx[o, k, i] +=
 * w · g[o, i], w = weight[o·n + k] or, with weight NULL, factor
 * (op_reduce_axis.c). */
void qkv__spread_axis(qkv_real *dx, const qkv_real *g, qkv__axis_view v, const qkv_real *weight,
                      qkv_real factor);

#endif
