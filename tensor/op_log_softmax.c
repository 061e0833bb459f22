/* log_softmax over the last dim (see qkv/ops.h). */
#include <tgmath.h>

#include "graph.h"

/* y = (x - m) - ln Σ_j e^(x_j - m), m the row's largest value: subtracting it
 * first keeps every e^ at most 1, so a large logit neither overflows nor
 * turns the row to NaN. Each row is one thread's; the sum is in double. */
static void log_softmax_forward(qkv_real *y, const qkv_real *x, size_t rows, size_t cols)
{
#pragma omp parallel for schedule(static) if (rows * cols >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        const qkv_real *xr = x + r * cols;
        qkv_real m = xr[0];
        for (size_t j = 1; j < cols; j++)
            m = xr[j] > m ? xr[j] : m;
        double s = 0;
        for (size_t j = 0; j < cols; j++)
            s += exp((double)(xr[j] - m));
        qkv_real ls = (qkv_real)log(s); /* taken off x - m, not m + ls off x: x - m
                                          * keeps the digits a large m would round away */
        for (size_t j = 0; j < cols; j++)
            y[r * cols + j] = (xr[j] - m) - ls;
    }
}

/* dx += dy - e^y · Σ_j dy_j, row by row (e^y is the softmax). */
static void log_softmax_backward(qkv_node *n)
{
    const qkv_real *y = n->out->data, *g = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
    size_t rows = qkv__rows(n->out), cols = (size_t)qkv__cols(n->out);
#pragma omp parallel for schedule(static) if (rows * cols >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t j = 0; j < cols; j++)
            s += g[r * cols + j];
        for (size_t j = 0; j < cols; j++)
            dx[r * cols + j] += g[r * cols + j] - exp(y[r * cols + j]) * (qkv_real)s;
    }
}

qkv_tensor *qkv_log_softmax(qkv_arena *a, qkv_tensor *x)
{
    if (qkv__check_inputs("qkv_log_softmax", a, "x", 1, &x) < 0)
        return NULL;
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
    log_softmax_forward(y->data, x->data, qkv__rows(x), (size_t)qkv__cols(x));
    qkv__record(a, y, "qkv_log_softmax", log_softmax_backward, 1, &x);
    return y;
}
