/* RMSNorm over the last dim, one fused node (see qkv/ops.h).
 *
 *     y = x / rms(x) · w,   rms(x) = sqrt(mean(x²) + eps)
 *
 * LayerNorm without the mean: the row is only rescaled, never shifted, which
 * saves a pass and (in practice) loses nothing. */
#include <tgmath.h>

#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"
#include "kernels/lanes.h"

/* What backward needs: each row's 1/rms from the forward. */
typedef struct rms_ctx {
    qkv_real *rstd; /* (N) 1 / sqrt(mean(x²) + eps) of each row */
    bool has_w;     /* inputs are x, then w if present */
} rms_ctx;

/* One row: y = x·rstd·w, storing rstd = 1/sqrt(mean(x²) + eps). w may be NULL. */
QKV__KERNEL_BODY void rmsnorm_row_body(qkv_real *y, qkv_real *rstd, const qkv_real *x,
                                       const qkv_real *w, qkv_real eps, int C)
{
    qkv_real ss; /* in lanes (kernels/lanes.h), as LayerNorm's sums */
    QKV__LANES_SUM(ss, C, j, x[j] * x[j]);
    qkv_real s = 1 / sqrt(ss / C + eps);
    if (w) {
#pragma omp simd
        for (int j = 0; j < C; j++)
            y[j] = x[j] * s * w[j];
    } else { /* two loops, not a conditional load of w, which SSE2 could not vectorize */
#pragma omp simd
        for (int j = 0; j < C; j++)
            y[j] = x[j] * s;
    }
    *rstd = s;
}
QKV__KERNEL(rmsnorm_row,
            (qkv_real *y, qkv_real *rstd, const qkv_real *x, const qkv_real *w, qkv_real eps,
             int C),
            (y, rstd, x, w, eps, C))

/* dx += the gradient through one row. With n = x·rstd and g = w ⊙ dy (the
 * gradient reaching n): dx = rstd · (g − n · mean(g ⊙ n)), the mean coming
 * from every x_j's share in the row's rms. */
QKV__KERNEL_BODY void rmsnorm_backward_values(qkv_real *dx, const qkv_real *dy, const qkv_real *x,
                                              const qkv_real *w, qkv_real rstd, int C)
{
    qkv_real gn_mean = 0;
#pragma omp simd reduction(+ : gn_mean)
    for (int j = 0; j < C; j++)
        gn_mean += (w ? w[j] * dy[j] : dy[j]) * x[j] * rstd;
    gn_mean /= C;
#pragma omp simd
    for (int j = 0; j < C; j++)
        dx[j] += ((w ? w[j] * dy[j] : dy[j]) - x[j] * rstd * gn_mean) * rstd;
}

/* rmsnorm_backward_values with w known NULL or not where it is inlined, so
 * the loops hold no conditional load of w: SSE2, which has no masked load,
 * vectorizes them too. The same arithmetic either way. */
QKV__KERNEL_BODY void rmsnorm_backward_row_body(qkv_real *dx, const qkv_real *dy, const qkv_real *x,
                                                const qkv_real *w, qkv_real rstd, int C)
{
    if (w)
        rmsnorm_backward_values(dx, dy, x, w, rstd, C);
    else
        rmsnorm_backward_values(dx, dy, x, NULL, rstd, C);
}
QKV__KERNEL(rmsnorm_backward_row,
            (qkv_real *dx, const qkv_real *dy, const qkv_real *x, const qkv_real *w, qkv_real rstd,
             int C),
            (dx, dy, x, w, rstd, C))

enum { PARAM_BLOCK = 32 }; /* columns of dw one task sums */

/* dw (C) += Σ_rows n ⊙ dout. Each task owns a block of columns and sums it
 * over the rows in order, so the result is the same at any thread count. */
static void rmsnorm_backward_weight(qkv_real *dw, const qkv_real *dout, const qkv_real *inp,
                                    const qkv_real *rstd, size_t N, int C)
{
    // dout and inp are (N,C); dw (C); rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (int j0 = 0; j0 < C; j0 += PARAM_BLOCK) {
        int nj = C - j0 < PARAM_BLOCK ? C - j0 : PARAM_BLOCK;
        qkv_real acc[PARAM_BLOCK] = {0};
        for (size_t i = 0; i < N; i++)
            for (int j = 0; j < nj; j++)
                acc[j] += inp[i * C + j0 + j] * rstd[i] * dout[i * C + j0 + j];
        for (int j = 0; j < nj; j++)
            dw[j0 + j] += acc[j];
    }
}

static void rmsnorm_backward(qkv_node *n)
{
    const rms_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0], *w = c->has_w ? n->in[1] : NULL;
    size_t N = qkv__rows(x);
    int C = qkv__cols(x);
    const qkv_real *dy = n->out->grad, *wd = w ? w->data : NULL;
    if (x->grad) {
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
        for (size_t i = 0; i < N; i++)
            rmsnorm_backward_row(x->grad + i * C, dy + i * C, x->data + i * C, wd, c->rstd[i], C);
    }
    if (w && w->grad)
        rmsnorm_backward_weight(w->grad, dy, x->data, c->rstd, N, C);
}

qkv_tensor *qkv_rmsnorm(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_real eps)
{
    if (qkv__check_inputs("qkv_rmsnorm", a, "x", 1, &x) < 0 ||
        (w && qkv__check_input("qkv_rmsnorm", "w", w) < 0))
        return NULL;
    if (w && (w->ndim != 1 || w->shape[0] != qkv__cols(x)))
        return qkv__shape_error("qkv_rmsnorm", "the scale w must be (C), C = x's last dim", x, w);
    if (!(eps >= 0) || !isfinite(eps)) {
        qkv_set_error("qkv_rmsnorm: eps must be finite and >= 0, not %g", (double)eps);
        return NULL;
    }
    size_t N = qkv__rows(x);
    int C = qkv__cols(x);
    qkv_tensor *out = qkv__like(a, x);
    rms_ctx c = {qkv_arena_alloc(a, N * sizeof(qkv_real)), w != NULL};
    if (!out || !c.rstd)
        return NULL;
    const qkv_real *wd = w ? w->data : NULL;
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++)
        rmsnorm_row(out->data + i * C, c.rstd + i, x->data + i * C, wd, eps, C);
    qkv_tensor *in[2] = {x, w};
    qkv_node *n = qkv__record(a, out, "rmsnorm", rmsnorm_backward, w ? 2 : 1, in);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return out;
}

/* ---- the kernels on their own, for qkv bench --ops and tests (kernels/hot.h) ---- */

/* Rows of a → b, w = d, each row's rstd into c. */
static void hot_forward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        rmsnorm_row(d->b + r * d->cols, d->c + r, d->a + r * d->cols, d->d, (qkv_real)1e-5,
                    d->cols);
}

/* dx += into c from dy = b, x = a, w = d, the rows' rstd in e. */
static void hot_backward(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        rmsnorm_backward_row(d->c + r * d->cols, d->b + r * d->cols, d->a + r * d->cols, d->d,
                             d->e[r], d->cols);
}

const qkv__hot_kernel qkv__hot_rmsnorm[] = {
    {"rmsnorm forward", hot_forward, qkv__hot_values, QKV__HOT_SUMS},
    {"rmsnorm backward (dx, +=)", hot_backward, qkv__hot_values, QKV__HOT_SUMS},
    {0},
};
