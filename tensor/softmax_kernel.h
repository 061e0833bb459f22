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

/* -1 with a message naming op when a causal mask would leave queries with no
 * key at all: Tq > Tk (query i sees keys j <= i + Tk - Tq). */
int qkv__check_causal(const char *op, const qkv_mask *mask, int tq, int tk);

/* How many leading keys query i of tq may see: all tk without a causal mask;
 * under one the keys j <= i + (tk - tq), so the last query sees every key
 * (with tk > tq the extra keys are an earlier context); none when tk < tq and
 * i is early. */
int qkv__visible_keys(bool causal, int i, int tq, int tk);

/* y = softmax(scale·x + mask) over each row of x, viewed as (rows, tk).
 * The rows are the queries of (batch, ..., tq) scores: row r is query r % tq
 * of batch entry r / (rows / batch), which picks key_valid's row. Masked keys
 * get weight exactly 0; a row with every key masked is all zeros. mask may be
 * NULL (then batch and tq are unused). y may be x. Parallel over rows. */
void qkv__softmax_forward(qkv_real *y, const qkv_real *x, const qkv_mask *mask, qkv_real scale,
                          size_t rows, int batch, int tq, int tk);

/* The backward of the forward above for one row, from its output y and
 * dy = dL/dy over the first n keys: dx = scale · y ⊙ (dy − Σ y·dy), added
 * into dx when accumulate, else written (then dx may be dy). Where y is 0
 * (masked) the term is exactly 0. */
void qkv__softmax_backward_row(qkv_real *dx, const qkv_real *dy, const qkv_real *y, qkv_real scale,
                               bool accumulate, int n);

#endif
