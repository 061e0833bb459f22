/* LayerNorm over the last dim, one fused node (see qkv/ops.h). */
#include <string.h>
#include <tgmath.h>

#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"
#include "kernels/lanes.h"

/* What backward needs: per-row statistics from the forward. */
typedef struct ln_ctx {
    qkv_real *mean; /* (N) mean of each row */
    qkv_real *rstd; /* (N) 1 / sqrt(variance + eps) of each row */
    bool has_w;     /* inputs are x, then w if present, then b if present */
    bool has_b;
} ln_ctx;

/* One row: y = (x - mean)·rstd·w + b, where the row's mean and rstd
 * (1/sqrt(variance + eps)) are computed and stored. w, b may be NULL. The
 * sums add in lanes (kernels/lanes.h), in one order on every path, so they
 * vectorize and stay deterministic, and a row of 128 (the baby's) does not
 * wait on a reduction's scalar end. */
QKV__KERNEL_BODY void layernorm_row_body(qkv_real *y, qkv_real *mean, qkv_real *rstd,
                                         const qkv_real *x, const qkv_real *w, const qkv_real *b,
                                         qkv_real eps, int C)
{
    qkv_real m, v;
    QKV__LANES_SUM(m, C, j, x[j]);
    m /= C;
    /* Variance in a second pass around the mean: E[x²] − E[x]² would
     * cancel catastrophically when the mean is large. */
    QKV__LANES_SUM(v, C, j, (x[j] - m) * (x[j] - m));
    v /= C;
    qkv_real s = 1 / sqrt(v + eps);
    if (w && b) {
#pragma omp simd
        for (int j = 0; j < C; j++)
            y[j] = (x[j] - m) * s * w[j] + b[j];
    } else {
        for (int j = 0; j < C; j++)
            y[j] = (x[j] - m) * s * (w ? w[j] : 1) + (b ? b[j] : 0);
    }
    *mean = m;
    *rstd = s;
}
QKV__KERNEL(layernorm_row,
            (qkv_real *y, qkv_real *mean, qkv_real *rstd, const qkv_real *x, const qkv_real *w,
             const qkv_real *b, qkv_real eps, int C),
            (y, mean, rstd, x, w, b, eps, C))

/* out = (inp - mean) · rstd · weight + bias for each row, saving mean and rstd. */
static void layernorm_forward(qkv_real *out, qkv_real *mean, qkv_real *rstd, const qkv_real *inp,
                              const qkv_real *weight, const qkv_real *bias, qkv_real eps, size_t N,
                              int C)
{
    // inp and out are (N,C); weight and bias (C); mean and rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++)
        layernorm_row(out + i * C, mean + i, rstd + i, inp + i * C, weight, bias, eps, C);
}

/* dx += the gradient through one row's normalisation (dx = when assigning). With n = (x - mean)·rstd
 * and g = w ⊙ dy (the gradient reaching n):
 * dx = rstd · (g − mean(g) − n · mean(g ⊙ n)), the two means coming from the
 * dependence of the row's mean and variance on every x_j. w may be NULL. */
QKV__KERNEL_BODY void layernorm_backward_values(qkv_real *dx, const qkv_real *dy,
                                                const qkv_real *x, const qkv_real *w,
                                                qkv_real mean, qkv_real rstd, int C, bool assign)
{
    qkv_real g_mean = 0, gn_mean = 0;
#pragma omp simd reduction(+ : g_mean, gn_mean)
    for (int j = 0; j < C; j++) {
        qkv_real g = w ? w[j] * dy[j] : dy[j];
        g_mean += g;
        gn_mean += g * (x[j] - mean) * rstd;
    }
    g_mean /= C;
    gn_mean /= C;
    if (assign) {
#pragma omp simd
        for (int j = 0; j < C; j++) {
            qkv_real g = w ? w[j] * dy[j] : dy[j];
            dx[j] = (g - g_mean - (x[j] - mean) * rstd * gn_mean) * rstd;
        }
    } else {
#pragma omp simd
        for (int j = 0; j < C; j++) {
            qkv_real g = w ? w[j] * dy[j] : dy[j];
            dx[j] += (g - g_mean - (x[j] - mean) * rstd * gn_mean) * rstd;
        }
    }
}

/* layernorm_backward_values with w known NULL or not where it is inlined, so
 * each copy's loops hold no conditional load of w: SSE2, which has no masked
 * load, vectorizes them too. The same arithmetic either way. */
QKV__KERNEL_BODY void layernorm_backward_row_body(qkv_real *dx, const qkv_real *dy,
                                                  const qkv_real *x, const qkv_real *w,
                                                  qkv_real mean, qkv_real rstd, int C, bool assign)
{
    if (w)
        layernorm_backward_values(dx, dy, x, w, mean, rstd, C, assign);
    else
        layernorm_backward_values(dx, dy, x, NULL, mean, rstd, C, assign);
}
QKV__KERNEL(layernorm_backward_row,
            (qkv_real *dx, const qkv_real *dy, const qkv_real *x, const qkv_real *w, qkv_real mean,
             qkv_real rstd, int C, bool assign),
            (dx, dy, x, w, mean, rstd, C, assign))

static void layernorm_backward_input(qkv_real *dinp, const qkv_real *dout, const qkv_real *inp,
                                     const qkv_real *weight, const qkv_real *mean,
                                     const qkv_real *rstd, size_t N, int C, bool assign)
{
    // dinp, dout and inp are (N,C); weight (C) or NULL; mean and rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++)
        layernorm_backward_row(dinp + i * C, dout + i * C, inp + i * C, weight, mean[i], rstd[i],
                               C, assign);
}

enum { PARAM_BLOCK = 32 }; /* columns of dw, db one task sums */

/* dw[0..nj) and db[0..nj) = the sums over rows of n ⊙ dout and of dout for
 * the columns [j0, j0 + nj), rows in order 0..N-1. */
QKV__KERNEL_BODY void layernorm_param_block_body(qkv_real *dw, qkv_real *db, const qkv_real *dout,
                                                 const qkv_real *inp, const qkv_real *mean,
                                                 const qkv_real *rstd, size_t N, int C, int j0,
                                                 int nj)
{
    for (int j = 0; j < nj; j++)
        dw[j] = db[j] = 0;
    for (size_t i = 0; i < N; i++) {
        const qkv_real *x = inp + i * C + j0, *dy = dout + i * C + j0;
        const qkv_real m = mean[i], s = rstd[i];
#pragma omp simd
        for (int j = 0; j < nj; j++) {
            dw[j] += (x[j] - m) * s * dy[j];
            db[j] += dy[j];
        }
    }
}
QKV__KERNEL(layernorm_param_block,
            (qkv_real *dw, qkv_real *db, const qkv_real *dout, const qkv_real *inp,
             const qkv_real *mean, const qkv_real *rstd, size_t N, int C, int j0, int nj),
            (dw, db, dout, inp, mean, rstd, N, C, j0, nj))

/* dweight += Σ_rows n ⊙ dout and dbias += Σ_rows dout (either may be NULL).
 * Each thread owns a block of columns and sums its columns over the rows in
 * order 0..N-1, so the result is race-free and the same at any thread count. */
static void layernorm_backward_params(qkv_real *dweight, qkv_real *dbias, const qkv_real *dout,
                                      const qkv_real *inp, const qkv_real *mean,
                                      const qkv_real *rstd, size_t N, int C)
{
    // dout and inp are (N,C); dweight and dbias (C); mean and rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (int j0 = 0; j0 < C; j0 += PARAM_BLOCK) {
        int nj = C - j0 < PARAM_BLOCK ? C - j0 : PARAM_BLOCK;
        qkv_real dw[PARAM_BLOCK], db[PARAM_BLOCK];
        layernorm_param_block(dw, db, dout, inp, mean, rstd, N, C, j0, nj);
        for (int j = 0; j < nj; j++) {
            if (dweight)
                dweight[j0 + j] += dw[j];
            if (dbias)
                dbias[j0 + j] += db[j];
        }
    }
}

static void layernorm_backward(qkv_node *n)
{
    ln_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0], *out = n->out;
    qkv_tensor *w = c->has_w ? n->in[1] : NULL, *b = c->has_b ? n->in[1 + c->has_w] : NULL;
    size_t N = qkv__rows(x);
    int C = qkv__cols(x);
    if (x->grad)
        layernorm_backward_input(x->grad, out->grad, x->data, w ? w->data : NULL, c->mean, c->rstd,
                                 N, C, qkv__fresh(n, 0));
    qkv_real *dw = w ? w->grad : NULL, *db = b ? b->grad : NULL;
    if (dw || db)
        layernorm_backward_params(dw, db, out->grad, x->data, c->mean, c->rstd, N, C);
}

qkv_tensor *qkv_layernorm(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_real eps)
{
    if (qkv__check_inputs("qkv_layernorm", a, "x", 1, &x) < 0 ||
        (w && qkv__check_input("qkv_layernorm", "w", w) < 0) ||
        (b && qkv__check_input("qkv_layernorm", "b", b) < 0))
        return NULL;
    qkv_tensor *params[2] = {w, b};
    for (int i = 0; i < 2; i++)
        if (params[i] && (params[i]->ndim != 1 || params[i]->shape[0] != qkv__cols(x)))
            return qkv__shape_error("qkv_layernorm",
                                    i ? "the shift b must be (C), C = x's last dim"
                                      : "the scale w must be (C), C = x's last dim",
                                    x, params[i]);
    if (!(eps >= 0)) {
        qkv_set_error("qkv_layernorm: eps must be >= 0, not %g", (double)eps);
        return NULL;
    }
    size_t N = qkv__rows(x);
    qkv_tensor *out = qkv__like(a, x);
    ln_ctx c = {qkv_arena_alloc(a, N * sizeof(qkv_real)), qkv_arena_alloc(a, N * sizeof(qkv_real)),
                w != NULL, b != NULL};
    if (!out || !c.mean || !c.rstd)
        return NULL;
    layernorm_forward(out->data, c.mean, c.rstd, x->data, w ? w->data : NULL, b ? b->data : NULL,
                      eps, N, qkv__cols(x));
    /* The node's inputs are x and whichever of w, b are present. */
    qkv_tensor *in[3] = {x};
    int n_in = 1;
    if (w)
        in[n_in++] = w;
    if (b)
        in[n_in++] = b;
    qkv_node *n = qkv__record(a, out, "layernorm", layernorm_backward, n_in, in);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    if (n)
        n->assigns = true;
    return out;
}

/* ---- the kernels on their own, for qkv bench --ops and tests (kernels/hot.h) ---- */

/* Rows of a → b, w = d, bias = d + cols, each row's mean and rstd into c. */
static void hot_forward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        layernorm_row(d->b + r * d->cols, d->c + 2 * r, d->c + 2 * r + 1, d->a + r * d->cols, d->d,
                      d->d + d->cols, (qkv_real)1e-5, d->cols);
}

/* dx = c from dy = b, x = a, w = d, the rows' mean in d and rstd in e. */
static void hot_backward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        layernorm_backward_row(d->c + r * d->cols, d->b + r * d->cols, d->a + r * d->cols, d->d,
                               d->d[r], d->e[r], d->cols, true);
}

/* The sums for dw, db over all rows, 32 columns at a time, into c. */
static void hot_params(const qkv__hot_data *d)
{
    for (int j0 = 0; j0 < d->cols; j0 += PARAM_BLOCK)
        layernorm_param_block(d->c + 2 * j0, d->c + 2 * j0 + PARAM_BLOCK, d->b, d->a, d->d, d->e,
                              d->n / d->cols, d->cols, j0,
                              d->cols - j0 < PARAM_BLOCK ? d->cols - j0 : PARAM_BLOCK);
}

const qkv__hot_kernel qkv__hot_layernorm[] = {
    {"layernorm forward", hot_forward, qkv__hot_values, QKV__HOT_SUMS},
    {"layernorm backward (dx)", hot_backward, qkv__hot_values, QKV__HOT_SUMS},
    {"layernorm backward (dw, db)", hot_params, qkv__hot_values, QKV__HOT_SUMS},
    {0},
};
