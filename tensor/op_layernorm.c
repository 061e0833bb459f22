/* LayerNorm over the last dim, one fused node (see qkv/ops.h). */
#include <string.h>
#include <tgmath.h>

#include "graph.h"

/* What backward needs: per-row statistics from the forward. */
typedef struct ln_ctx {
    qkv_real *mean; /* (N) mean of each row */
    qkv_real *rstd; /* (N) 1 / sqrt(variance + eps) of each row */
    bool has_w;     /* inputs are x, then w if present, then b if present */
    bool has_b;
} ln_ctx;

/* out = (inp - mean) · rstd · weight + bias for each row, saving mean and rstd.
 * weight and bias may be NULL (scale 1, shift 0). */
static void layernorm_forward(qkv_real *out, qkv_real *mean, qkv_real *rstd, const qkv_real *inp,
                              const qkv_real *weight, const qkv_real *bias, qkv_real eps, size_t N,
                              int C)
{
    // inp and out are (N,C); weight and bias (C); mean and rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++) {
        const qkv_real *x = inp + i * C;
        qkv_real *y = out + i * C;
        qkv_real m = 0, v = 0;
        for (int j = 0; j < C; j++)
            m += x[j];
        m /= C;
        /* Variance in a second pass around the mean: E[x²] − E[x]² would
         * cancel catastrophically when the mean is large. */
        for (int j = 0; j < C; j++)
            v += (x[j] - m) * (x[j] - m);
        v /= C;
        qkv_real s = 1 / sqrt(v + eps);
        for (int j = 0; j < C; j++) {
            qkv_real n = (x[j] - m) * s;
            y[j] = (weight ? n * weight[j] : n) + (bias ? bias[j] : 0);
        }
        mean[i] = m;
        rstd[i] = s;
    }
}

/* dinp += the gradient through the normalisation, for each row. With
 * n = (x - mean)·rstd and g = weight ⊙ dout (the gradient reaching n):
 * dx = rstd · (g − mean(g) − n · mean(g ⊙ n)), the two means coming from the
 * dependence of the row's mean and variance on every x_j. */
static void layernorm_backward_input(qkv_real *dinp, const qkv_real *dout, const qkv_real *inp,
                                     const qkv_real *weight, const qkv_real *mean,
                                     const qkv_real *rstd, size_t N, int C)
{
    // dinp, dout and inp are (N,C); weight (C) or NULL; mean and rstd (N)
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++) {
        const qkv_real *x = inp + i * C, *dy = dout + i * C;
        qkv_real *dx = dinp + i * C;
        qkv_real g_mean = 0, gn_mean = 0;
        for (int j = 0; j < C; j++) {
            qkv_real g = weight ? weight[j] * dy[j] : dy[j];
            g_mean += g;
            gn_mean += g * (x[j] - mean[i]) * rstd[i];
        }
        g_mean /= C;
        gn_mean /= C;
        for (int j = 0; j < C; j++) {
            qkv_real g = weight ? weight[j] * dy[j] : dy[j];
            qkv_real n = (x[j] - mean[i]) * rstd[i];
            dx[j] += (g - g_mean - n * gn_mean) * rstd[i];
        }
    }
}

/* dweight += Σ_rows n ⊙ dout and dbias += Σ_rows dout (either may be NULL).
 * Each thread owns a block of columns and sums its columns over the rows in
 * order 0..N-1, so the result is race-free and the same at any thread count. */
static void layernorm_backward_params(qkv_real *dweight, qkv_real *dbias, const qkv_real *dout,
                                      const qkv_real *inp, const qkv_real *mean,
                                      const qkv_real *rstd, size_t N, int C)
{
    // dout and inp are (N,C); dweight and dbias (C); mean and rstd (N)
    enum { BLOCK = 32 };
#pragma omp parallel for schedule(static) if (N * (size_t)C >= QKV__PAR_MIN)
    for (int j0 = 0; j0 < C; j0 += BLOCK) {
        int nj = C - j0 < BLOCK ? C - j0 : BLOCK;
        qkv_real dw[BLOCK] = {0}, db[BLOCK] = {0};
        for (size_t i = 0; i < N; i++) {
            const qkv_real *x = inp + i * C + j0, *dy = dout + i * C + j0;
            for (int j = 0; j < nj; j++) {
                dw[j] += (x[j] - mean[i]) * rstd[i] * dy[j];
                db[j] += dy[j];
            }
        }
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
                                 N, C);
    qkv_real *dw = w ? w->grad : NULL, *db = b ? b->grad : NULL;
    if (dw || db)
        layernorm_backward_params(dw, db, out->grad, x->data, c->mean, c->rstd, N, C);
}

qkv_tensor *qkv_layernorm(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_real eps)
{
    if (!x)
        return NULL;
    qkv_tensor *params[2] = {w, b};
    for (int i = 0; i < 2; i++)
        if (params[i] && (params[i]->ndim != 1 || params[i]->shape[0] != qkv__cols(x)))
            return qkv__shape_error("layernorm",
                                    i ? "the shift b must be (C), C = x's last dim"
                                      : "the scale w must be (C), C = x's last dim",
                                    x, params[i]);
    if (!(eps >= 0)) {
        qkv_set_error("layernorm: eps must be >= 0, not %g", (double)eps);
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
    if (n) {
        ln_ctx *ctx = qkv_arena_alloc(a, sizeof *ctx);
        if (!ctx)
            return NULL;
        *ctx = c;
        n->ctx = ctx;
    }
    return out;
}
