/* Internal: the one masked-softmax kernel, shared by qkv_softmax,
 * qkv_softmax_masked and qkv_attention (defined in op_softmax.c). Not installed. */
#ifndef QKV_SOFTMAX_KERNEL_H
#define QKV_SOFTMAX_KERNEL_H

#include "graph.h"
#include "qkv/ops.h"

/* 0 when mask suits scores of t's number of dims; otherwise -1 with a message
 * naming op and t's shape. causal needs (..., Tq, Tk); key_valid needs a batch
 * dim first, (B, ..., Tq, Tk). mask may be NULL. */
int qkv__check_mask(const char *op, const qkv_mask *mask, const qkv_tensor *t);

/* y = softmax(scale·x + mask) over each row of x, viewed as (rows, tk).
 * The rows are the queries of (batch, ..., tq) scores: row r is query r % tq
 * of batch entry r / (rows / batch), which picks key_valid's row. Masked keys
 * get weight exactly 0; a row with every key masked is all zeros. mask may be
 * NULL (then batch and tq are unused). y may be x. Parallel over rows. */
void qkv__softmax_forward(qkv_real *y, const qkv_real *x, const qkv_mask *mask, qkv_real scale,
                          size_t rows, int batch, int tq, int tk);

/* The backward of the forward above, from its output y and dy = dL/dy:
 * dx = scale · y ⊙ (dy − Σ y·dy) per row, added into dx when accumulate, else
 * written (then dx may be dy). Where y is 0 (masked) the term is exactly 0. */
void qkv__softmax_backward(qkv_real *dx, const qkv_real *dy, const qkv_real *y, qkv_real scale,
                           bool accumulate, size_t rows, int tk);

/* One row of qkv__softmax_backward: the first n values of dx, dy and y. */
void qkv__softmax_backward_row(qkv_real *dx, const qkv_real *dy, const qkv_real *y, qkv_real scale,
                               bool accumulate, int n);

#endif
