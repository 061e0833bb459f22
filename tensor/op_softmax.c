/* softmax and masked softmax over the last dim (see qkv/ops.h). The mask
 * rules, the causal one first, are the attention core's (attention.h). */
#include <omp.h>
#include <string.h>
#include <tgmath.h>

#include "attention.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"
#include "kernels/vecmath.h"

/* One row of scores x (tk): y = softmax(scale·x) over the keys j < n_seen
 * with valid[j] != 0 (valid NULL: all), and exactly 0 for every other key.
 * That is softmax(scale·x + mask) with the masked scores set to -inf first.
 * Each loop is branch-free with one form for each case of valid, so it vectorizes. */
QKV__KERNEL_BODY void softmax_row_body(qkv_real *y, const qkv_real *x, const uint8_t *valid,
                                       int n_seen, int tk, qkv_real scale)
{
    /* The largest visible score: subtracting it keeps every exp() <= 1, so
     * huge scores cannot overflow, and the result is unchanged because
     * softmax(s) = softmax(s - c) for any constant c. */
    qkv_real max = -INFINITY;
    if (valid) {
#pragma omp simd reduction(max : max)
        for (int j = 0; j < n_seen; j++)
            max = valid[j] && scale * x[j] > max ? scale * x[j] : max;
    } else {
#pragma omp simd reduction(max : max)
        for (int j = 0; j < n_seen; j++)
            max = scale * x[j] > max ? scale * x[j] : max;
    }
    if (max == -INFINITY) { /* every key masked (or every score -inf): no weight anywhere */
        memset(y, 0, (size_t)tk * sizeof *y);
        return;
    }
    /* exp of each visible score; a masked score counts as -inf, whose exp is 0. */
    qkv_real sum = 0;
    if (valid) {
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < n_seen; j++) {
            qkv_real e = valid[j] ? qkv__exp(scale * x[j] - max) : 0;
            y[j] = e;
            sum += e;
        }
    } else {
#pragma omp simd reduction(+ : sum)
        for (int j = 0; j < n_seen; j++) {
            qkv_real e = qkv__exp(scale * x[j] - max);
            y[j] = e;
            sum += e;
        }
    }
    for (int j = n_seen; j < tk; j++)
        y[j] = 0;
    /* Normalise: sum >= 1, since the maximum contributes exp(0). */
    qkv_real inv = 1 / sum;
#pragma omp simd
    for (int j = 0; j < n_seen; j++)
        y[j] *= inv;
}
QKV__KERNEL(softmax_row,
            (qkv_real *y, const qkv_real *x, const uint8_t *valid, int n_seen, int tk,
             qkv_real scale),
            (y, x, valid, n_seen, tk, scale))

/* Row r of softmax_forward's scores: query r % tq of batch entry
 * r / per_batch, whose row of key_valid (when there is one) it reads. */
static void masked_row(qkv_real *y, const qkv_real *x, const uint8_t *key_valid, size_t per_batch,
                       bool causal, qkv_real scale, size_t r, int tq, int tk)
{
    const uint8_t *valid = key_valid ? key_valid + r / per_batch * (size_t)tk : NULL;
    int n_seen = qkv__visible_keys(causal, (int)(r % (size_t)tq), tq, tk);
    softmax_row(y + r * tk, x + r * tk, valid, n_seen, tk, scale);
}

/* y = softmax(scale·x + mask) over each row of x, viewed as (rows, tk).
 * The rows are the queries of (batch, ..., tq) scores: row r is query r % tq
 * of batch entry r / (rows / batch), which picks key_valid's row. Masked keys
 * get weight exactly 0; a row with every key masked is all zeros. mask may be
 * NULL (then batch and tq are unused). y may be x. Parallel over rows. */
static void softmax_forward(qkv_real *y, const qkv_real *x, const qkv_mask *mask, qkv_real scale,
                            size_t rows, int batch, int tq, int tk)
{
    // x and y are (rows, tk); rows = batch · (rows per batch entry), the last factor tq
    const uint8_t *key_valid = mask ? mask->key_valid : NULL;
    size_t per_batch = key_valid ? rows / (size_t)batch : rows;
    bool causal = mask && mask->causal;
    /* Inside a caller's parallel region this thread does every row. */
    if (rows * (size_t)tk < QKV__PAR_MIN || omp_in_parallel()) {
        for (size_t r = 0; r < rows; r++)
            masked_row(y, x, key_valid, per_batch, causal, scale, r, tq, tk);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++)
        masked_row(y, x, key_valid, per_batch, causal, scale, r, tq, tk);
}

QKV__KERNEL_BODY void softmax_backward_row_body(qkv_real *dx, const qkv_real *dy, const qkv_real *y,
                                                qkv_real scale, bool accumulate, int tk)
{
    /* dL/dx_j = scale · y_j (dy_j − Σ_k y_k dy_k): the Jacobian of softmax
     * is diag(y) − y yᵀ. A masked key has y_j = 0, so its term is 0. */
    qkv_real dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int j = 0; j < tk; j++)
        dot += y[j] * dy[j];
    if (accumulate) {
#pragma omp simd
        for (int j = 0; j < tk; j++)
            dx[j] += scale * y[j] * (dy[j] - dot);
    } else {
#pragma omp simd
        for (int j = 0; j < tk; j++)
            dx[j] = scale * y[j] * (dy[j] - dot);
    }
}
QKV__KERNEL(softmax_backward_row,
            (qkv_real *dx, const qkv_real *dy, const qkv_real *y, qkv_real scale, bool accumulate,
             int tk),
            (dx, dy, y, scale, accumulate, tk))

/* dx += the softmax backward of every row of y, dy (rows, tk). */
static void softmax_backward_rows(qkv_real *dx, const qkv_real *dy, const qkv_real *y,
                                  qkv_real scale, size_t rows, int tk)
{
#pragma omp parallel for schedule(static) if (rows * (size_t)tk >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++)
        softmax_backward_row(dx + r * tk, dy + r * tk, y + r * tk, scale, true, tk);
}

static void softmax_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0], *y = n->out;
    if (x->grad)
        softmax_backward_rows(x->grad, y->grad, y->data, *(qkv_real *)n->ctx, qkv__rows(x),
                              qkv__cols(x));
}

static qkv_tensor *softmax(qkv_arena *a, const char *op, qkv_tensor *x, const qkv_mask *mask,
                           qkv_real scale)
{
    if (qkv__check_inputs(op, a, "x", 1, &x) < 0 || qkv__not_finite(op, "scale", (double)scale) ||
        qkv__check_mask(op, mask, x) < 0 ||
        (x->ndim >= 2 && qkv__check_causal(op, mask, x->shape[x->ndim - 2], qkv__cols(x)) < 0))
        return NULL;
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
    int tq = x->ndim >= 2 ? x->shape[x->ndim - 2] : 1;
    softmax_forward(y->data, x->data, mask, scale, qkv__rows(x), x->shape[0], tq, qkv__cols(x));
    qkv_node *n = qkv__record(a, y, op, softmax_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &scale, sizeof scale))
        return NULL;
    return y;
}

qkv_tensor *qkv_softmax(qkv_arena *a, qkv_tensor *x)
{
    return softmax(a, "qkv_softmax", x, NULL, 1);
}

qkv_tensor *qkv_softmax_masked(qkv_arena *a, qkv_tensor *x, const qkv_mask *mask, qkv_real scale)
{
    return softmax(a, "qkv_softmax_masked", x, mask, scale);
}

/* ---- the kernels on their own, for qkv bench --ops and tests (kernels/hot.h) ---- */

/* Rows of a → b, every key visible. */
static void hot_forward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        softmax_row(d->b + r * d->cols, d->a + r * d->cols, NULL, d->cols, d->cols, (qkv_real)0.5);
}

/* dx = c from dy = a and the softmax output y = e (positive, as softmax's are). */
static void hot_backward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        softmax_backward_row(d->c + r * d->cols, d->a + r * d->cols, d->e + r * d->cols,
                             (qkv_real)0.5, false, d->cols);
}

const qkv__hot_kernel qkv__hot_softmax[] = {
    {"softmax forward", hot_forward, qkv__hot_values, QKV__HOT_SUMS},
    {"softmax backward", hot_backward, qkv__hot_values, QKV__HOT_SUMS},
    {0},
};
