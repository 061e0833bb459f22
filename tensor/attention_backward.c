/* The attention core, part 4 of 4 (after attention_forward.c): the backward
 * in tiles (FlashAttention-2, Dao 2023). The weights are never stored; each
 * tile's are recomputed from q, k and the forward's log-sum-exp,
 * P = exp(Q·Kᵀ/√d − lse), and with D = rowsum(dO ⊙ O) the softmax's
 * backward is dS = P ⊙ (dP − D). The keys are the outer loop, so that a
 * tile of keys gathers its dK and dV from every query tile that sees it
 * while they are in cache.
 *
 * First the row kernels, as the forward's: the weights from the row's
 * log-sum-exp and the softmax backward of a row. */
#include "attention.h"
#include "kernels/cpu.h"
#include "kernels/lanes.h"
#include "kernels/vecmath.h"

/* ---- the row kernels ---- */

/* p = exp(s − lse) over a masked row (n): the weights from the row's
 * log-sum-exp (+inf for a row that sees no key: all 0). p may be s. */
QKV__KERNEL_BODY void weights_body(qkv_real *p, const qkv_real *s, qkv_real lse, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        p[j] = qkv__exp(s[j] - lse);
}
QKV__KERNEL(weights, (qkv_real *p, const qkv_real *s, qkv_real lse, int n), (p, s, lse, n))

QKV__KERNEL_BODY void row_grad_body(qkv_real *ds, const qkv_real *dp, const qkv_real *p,
                                    qkv_real delta, int n)
{
    /* dL/ds_j = p_j (dp_j − Σ_k p_k dp_k): the Jacobian of softmax is
     * diag(p) − p pᵀ, and the sum is dO·O (the caller's delta). */
#pragma omp simd
    for (int j = 0; j < n; j++)
        ds[j] = p[j] * (dp[j] - delta);
}
QKV__KERNEL(row_grad, (qkv_real *ds, const qkv_real *dp, const qkv_real *p, qkv_real delta, int n),
            (ds, dp, p, delta, n))

QKV__KERNEL_BODY void row_grad_drop_body(qkv_real *ds, const qkv_real *dp, const qkv_real *p,
                                         qkv_real delta, uint64_t key, uint32_t threshold,
                                         qkv_real scale, int j0, int n)
{
    /* Dropout is linear: the gradient of a weight is its output's times z. */
#pragma omp simd
    for (int j = 0; j < n; j++)
        ds[j] = p[j] * (dp[j] * drop_factor(key, threshold, scale, j0 + j) - delta);
}
QKV__KERNEL(row_grad_drop,
            (qkv_real *ds, const qkv_real *dp, const qkv_real *p, qkv_real delta, uint64_t key,
             uint32_t threshold, qkv_real scale, int j0, int n),
            (ds, dp, p, delta, key, threshold, scale, j0, n))

QKV__KERNEL_BODY void deltas_body(qkv_real *delta, const qkv_real *dout, const qkv_real *out,
                                  int rows, int d, int ld)
{
    /* D_i = dO_i · O_i, a dot product of d values a row (32 or 64): in
     * lanes (kernels/lanes.h), not in one chain of dependent adds. */
    for (int i = 0; i < rows; i++) {
        const qkv_real *g = dout + (size_t)i * ld, *o = out + (size_t)i * ld;
        QKV__LANES_SUM(delta[i], d, c, g[c] * o[c]);
    }
}
QKV__KERNEL(deltas, (qkv_real *delta, const qkv_real *dout, const qkv_real *out, int rows, int d,
                     int ld),
            (delta, dout, out, rows, d, ld))

/* The softmax backward of one row: ds = p ⊙ (dp ⊙ z − delta), z the dropout
 * factor (1 when d is NULL or off), delta = Σ_j p_j·(dp ⊙ z)_j = dO·O. ds may
 * be dp. Where p is 0 (hidden keys) ds is 0. */
static void softmax_row_grad(qkv_real *ds, const qkv_real *dp, const qkv_real *p, qkv_real delta,
                             const qkv__attn_drop *d, uint64_t row_key, int j0, int n)
{
    if (d && d->on)
        row_grad_drop(ds, dp, p, delta, row_key, d->threshold, d->scale, j0, n);
    else
        row_grad(ds, dp, p, delta, n);
}

/* ---- the backward of a problem ---- */

/* Scratch per worker: the weights, the weights after dropout and dP/dS
 * (a tile each), then D of one problem's queries. */
size_t qkv__attention_backward_scratch(const problem *pr)
{
    return 3 * (size_t)QUERY_TILE * KEY_TILE + (size_t)pr->tq;
}

/* The first query tile (a multiple of QUERY_TILE) whose last query sees key j0. */
static int first_tile_seeing(const problem *pr, int j0)
{
    if (!pr->causal)
        return 0;
    /* Query i sees key j0 when i >= j0 − (tk − tq). */
    int i = j0 - (pr->tk - pr->tq);
    return i <= 0 ? 0 : i / QUERY_TILE * QUERY_TILE;
}

/* The gradients of problem e, with its scratch w. */
static void backward_problem(const attn_ctx *c, qkv_node *n, int e, qkv_real *w)
{
    const problem *pr = &c->pr;
    const operands x = operands_of(n->in, n->n_in, c->k_at, c->v_at);
    offsets o = offsets_of(pr, e);
    int ld = pr->lq.ld, ldk = pr->lkv.ld, ldo = pr->lo.ld, d = pr->d;
    qkv_real *p = w, *pz = p + (size_t)QUERY_TILE * KEY_TILE, *ds = pz + (size_t)QUERY_TILE * KEY_TILE;
    qkv_real *delta = ds + (size_t)QUERY_TILE * KEY_TILE;
    const qkv_real *dout = n->out->grad + o.o, *out = n->out->data + o.o;
    const qkv_real *lse = c->lse + (size_t)e * pr->tq;
    const qkv__attn_drop *drop = &c->drop;
    const uint8_t *valid = valid_of(pr, e);
    qkv_real scale = score_scale(d);
    bool need_ds = x.dq || x.dk; /* dS only feeds dQ and dK */

    /* D_i = dO_i · O_i = Σ_j P'_ij dP'_ij: the softmax backward's row sum,
     * without the weights (O = P'·V, P' the weights after dropout). */
    deltas(delta, dout, out, pr->tq, d, ldo);
    for (int j0 = 0; j0 < pr->tk; j0 += KEY_TILE) {
        const qkv_real *kj = x.k + o.kv + (size_t)j0 * ldk, *vj = x.v + o.kv + (size_t)j0 * ldk;
        for (int i0 = first_tile_seeing(pr, j0); i0 < pr->tq; i0 += QUERY_TILE) {
            int m = tile_rows(pr, i0);
            int kend = keys_seen(pr, i0 + m), nk = kend - j0 < KEY_TILE ? kend - j0 : KEY_TILE;
            if (nk <= 0)
                continue;
            const qkv_real *qi = x.q + o.q + (size_t)i0 * ld, *doi = dout + (size_t)i0 * ldo;
            size_t row0 = (size_t)e * pr->tq + i0;
            /* The forward's scores of this tile, the same product, masked the
             * same way, and their weights from each query's log-sum-exp. */
            tile_gemm(false, true, m, nk, d, scale, qi, ld, kj, ldk, 0, p, KEY_TILE);
            for (int r = 0; r < m; r++) {
                qkv_real *pr_row = p + (size_t)r * KEY_TILE;
                qkv__attn_hide(pr_row, valid ? valid + j0 : NULL, seen_in(pr, i0 + r, j0, nk), nk);
                weights(pr_row, pr_row, lse[i0 + r], nk);
                if (drop->on)
                    qkv__attn_drop_apply(pz + (size_t)r * KEY_TILE, pr_row, drop,
                                         qkv__attn_drop_row(drop, row0 + r), j0, nk);
            }
            const qkv_real *pused = drop->on ? pz : p;
            /* O = P'·V, so dV += P'ᵀ·dO (each key's value collects the output
             * gradients of the queries that used it). */
            if (x.dv)
                tile_gemm(true, false, nk, d, m, 1, pused, KEY_TILE, doi, ldo, 1,
                          x.dv + o.kv + (size_t)j0 * ldk, ldk);
            if (!need_ds)
                continue;
            /* dP' = dO·Vᵀ, then back through dropout and the softmax of each
             * query's row: dS = P ⊙ (dP − D). Hidden weights are 0, so hidden
             * scores get no gradient. */
            tile_gemm(false, true, m, nk, d, 1, doi, ldo, vj, ldk, 0, ds, KEY_TILE);
            for (int r = 0; r < m; r++)
                softmax_row_grad(ds + (size_t)r * KEY_TILE, ds + (size_t)r * KEY_TILE,
                                   p + (size_t)r * KEY_TILE, delta[i0 + r], drop,
                                   drop->on ? qkv__attn_drop_row(drop, row0 + r) : 0, j0, nk);
            /* S = Q·Kᵀ/√d, so dQ += dS·K/√d and dK += dSᵀ·Q/√d. */
            if (x.dq)
                tile_gemm(false, false, m, d, nk, scale, ds, KEY_TILE, kj, ldk, 1,
                          x.dq + o.q + (size_t)i0 * ld, ld);
            if (x.dk)
                tile_gemm(true, false, nk, d, m, scale, ds, KEY_TILE, qi, ld, 1,
                          x.dk + o.kv + (size_t)j0 * ldk, ldk);
        }
    }
}

void qkv__attention_backward(qkv_node *n)
{
    attn_ctx *c = n->ctx;
    const problem *pr = &c->pr;
    int products = pr->nb * pr->nh;
    int workers = attention_workers(products, (size_t)products * pr->tq * pr->tk);
    workers = workers < c->workers ? workers : c->workers;
    size_t per = qkv__attention_backward_scratch(pr);
    /* A problem per thread, each through its whole loop: its gradients are
     * summed in one order whatever the thread count. */
#pragma omp parallel for schedule(static) num_threads(workers) if (workers > 1)
    for (int e = 0; e < products; e++)
        backward_problem(c, n, e, n->scratch + (size_t)omp_get_thread_num() * per);
}
