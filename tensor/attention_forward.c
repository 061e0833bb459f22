/* The attention core, part 3 of 4 (after op_attention.c): the forward in
 * tiles (FlashAttention, Dao et al. 2022). Each tile of queries goes through
 * its keys a tile at a time with an online softmax, a running max and sum
 * per query, and its output accumulates rescaled as the max grows. What is
 * kept per query is only the output and the log-sum-exp of its scores:
 * memory linear in T, and the scores never leave the cache. The backward
 * (attention_backward.c, last) recomputes the weights from that log-sum-exp.
 *
 * First the row kernels a tile runs on each query's row of scores: the mask,
 * the online softmax, the dropout. Each is a branch-free loop compiled for
 * every vector path (kernels/cpu.h), so it vectorizes. */
#include <string.h>

#include "attention.h"
#include "kernels/cpu.h"
#include "kernels/lanes.h"
#include "kernels/vecmath.h"

/* ---- the row kernels ---- */

QKV__KERNEL_BODY void hide_body(qkv_real *s, const uint8_t *valid, int n_seen, int n)
{
    if (valid) {
#pragma omp simd
        for (int j = 0; j < n_seen; j++)
            s[j] = valid[j] ? s[j] : -INFINITY;
    }
    for (int j = n_seen; j < n; j++)
        s[j] = -INFINITY;
}
QKV__KERNEL(hide, (qkv_real *s, const uint8_t *valid, int n_seen, int n), (s, valid, n_seen, n))

void qkv__attn_hide(qkv_real *s, const uint8_t *valid, int n_seen, int n)
{
    hide(s, valid, n_seen, n);
}

/* One online-softmax step over a masked row s (n): with the row's running
 * max *m and sum *l over the keys before, s becomes exp(s − m') for the new
 * max m' (0 where s is -inf), *l = *l·exp(*m − m') + Σ exp(s − m'), *m = m';
 * *alpha = exp(m_old − m'), the factor for the output accumulated so far
 * (1 while every key so far is hidden). A hidden key's score is -inf and
 * qkv__exp(-inf) is exactly 0 (in the double build too, where it is libm's
 * exp). */
QKV__KERNEL_BODY void online_body(qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha)
{
    /* The max and the sum go through lanes (kernels/lanes.h): a row here is
     * 32 or 64 scores in the baby, too short for a reduction's scalar end.
     * The largest visible score so far: subtracting it keeps every exp() <= 1,
     * and softmax(s) = softmax(s − c) for any c, so nothing else changes. */
    qkv_real mx, sum;
    QKV__LANES_MAX(mx, n, j, *m, s[j]);
    if (mx == -INFINITY) { /* every key so far hidden: no weight anywhere yet */
        memset(s, 0, (size_t)n * sizeof *s);
        *alpha = 1;
        return;
    }
    /* Each score becomes its exp against the max; the sum adds them. */
    QKV__LANES_SUM(sum, n, j, s[j] = qkv__exp(s[j] - mx));
    /* The sum and the output so far were taken against the old max: scale
     * them to the new one (exp(-inf) = 0 when there was none). */
    qkv_real a = *m == -INFINITY ? 0 : *m == mx ? 1 : qkv__exp(*m - mx);
    *l = *l * a + sum;
    *m = mx;
    *alpha = a;
}
QKV__KERNEL(online, (qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha),
            (s, n, m, l, alpha))

/* Steps 2 and 3 of forward_tile below on its m rows of n scores (keys
 * [j0, j0 + n), rows KEY_TILE apart): each row masked, then its online
 * softmax step, row r's running max, sum and factor in mx[r], sum[r],
 * alpha[r]. One call a tile, not two a row: a row of the baby's is 32 or 64
 * scores, too few to pay for a call each. */
QKV__KERNEL_BODY void mask_softmax_body(const problem *pr, qkv_real *s, int i0, int m, int j0,
                                        int n, const uint8_t *valid, qkv_real *mx, qkv_real *sum,
                                        qkv_real *alpha)
{
    for (int r = 0; r < m; r++) {
        qkv_real *sr = s + (size_t)r * KEY_TILE;
        /* 2. Mask before the softmax: a hidden score is -inf, its weight 0. */
        hide_body(sr, valid, seen_in(pr, i0 + r, j0, n), n);
        /* 3. Softmax over the keys, online: weights against the running max. */
        online_body(sr, n, &mx[r], &sum[r], &alpha[r]);
    }
}
QKV__KERNEL(mask_softmax,
            (const problem *pr, qkv_real *s, int i0, int m, int j0, int n, const uint8_t *valid,
             qkv_real *mx, qkv_real *sum, qkv_real *alpha),
            (pr, s, i0, m, j0, n, valid, mx, sum, alpha))

QKV__KERNEL_BODY void drop_apply_body(qkv_real *pz, const qkv_real *p, uint64_t key,
                                      uint32_t threshold, qkv_real scale, int j0, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        pz[j] = p[j] * drop_factor(key, threshold, scale, j0 + j);
}
QKV__KERNEL(drop_apply,
            (qkv_real *pz, const qkv_real *p, uint64_t key, uint32_t threshold, qkv_real scale,
             int j0, int n),
            (pz, p, key, threshold, scale, j0, n))

void qkv__attn_drop_apply(qkv_real *pz, const qkv_real *p, const qkv__attn_drop *d,
                          uint64_t row_key, int j0, int n)
{
    drop_apply(pz, p, row_key, d->threshold, d->scale, j0, n);
}

/* ---- the tile ---- */

size_t qkv__attention_forward_scratch(void) { return (size_t)QUERY_TILE * (KEY_TILE + 2); }

/* o (m rows, pitch ld) *= f, row by row (f[r] == 1 leaves row r). */
static void scale_rows(qkv_real *o, int ld, int m, int d, const qkv_real *f)
{
    for (int r = 0; r < m; r++) {
        if (f[r] == 1)
            continue;
        qkv_real *row = o + (size_t)r * ld;
        for (int c = 0; c < d; c++)
            row[c] *= f[r];
    }
}

/* Queries [i0, i0 + m) of problem e: their output rows and log-sum-exps. s
 * is a QUERY_TILE × KEY_TILE tile of scores, then 2 × QUERY_TILE values for
 * the running maxima and sums. */
static void forward_tile(const problem *pr, int e, int i0, int m, const qkv_real *q,
                         const qkv_real *k, const qkv_real *v, qkv_real *out, qkv_real *lse,
                         const qkv__attn_drop *d, qkv_real *s)
{
    offsets o = offsets_of(pr, e);
    int ld = pr->lq.ld, ldk = pr->lkv.ld, ldo = pr->lo.ld, kend = keys_seen(pr, i0 + m);
    const qkv_real *qi = q + o.q + (size_t)i0 * ld;
    qkv_real *oi = out + o.o + (size_t)i0 * ldo, *mx = s + (size_t)QUERY_TILE * KEY_TILE,
             *sum = mx + QUERY_TILE, alpha[QUERY_TILE];
    const uint8_t *valid = valid_of(pr, e);
    size_t row0 = (size_t)e * pr->tq + i0; /* the tile's first row of all problems' */
    for (int r = 0; r < m; r++)
        mx[r] = -INFINITY, sum[r] = 0;
    for (int j0 = 0; j0 < kend; j0 += KEY_TILE) {
        int n = kend - j0 < KEY_TILE ? kend - j0 : KEY_TILE;
        const qkv_real *kj = k + o.kv + (size_t)j0 * ldk, *vj = v + o.kv + (size_t)j0 * ldk;
        /* 1. Scores: how well each query matches each key, S = Q·Kᵀ/√d. */
        tile_gemm(false, true, m, n, pr->d, score_scale(pr->d), qi, ld, kj, ldk, 0, s, KEY_TILE);
        /* 2. and 3. Mask, then softmax (above). */
        mask_softmax(pr, s, i0, m, j0, n, valid ? valid + j0 : NULL, mx, sum, alpha);
        /* 4. Dropout of the weights (training): the sum above is before it. */
        for (int r = 0; d->on && r < m; r++)
            qkv__attn_drop_apply(s + (size_t)r * KEY_TILE, s + (size_t)r * KEY_TILE, d,
                                 qkv__attn_drop_row(d, row0 + r), j0, n);
        /* 5. The output so far, rescaled to the new max, plus these weights · V. */
        if (j0 > 0)
            scale_rows(oi, ldo, m, pr->d, alpha);
        tile_gemm(false, false, m, pr->d, n, 1, s, KEY_TILE, vj, ldk, j0 > 0 ? 1 : 0, oi, ldo);
    }
    /* Divide by each row's sum; a row that saw no key at all is 0, and its
     * log-sum-exp +inf makes every recomputed weight exp(s − inf) = 0. */
    for (int r = 0; r < m; r++) {
        qkv_real *row = oi + (size_t)r * ldo, inv = sum[r] > 0 ? 1 / sum[r] : 0;
        for (int c = 0; c < pr->d; c++)
            row[c] = kend > 0 ? row[c] * inv : 0;
        lse[row0 + r] = sum[r] > 0 ? mx[r] + log(sum[r]) : INFINITY;
    }
}

void qkv__attention_forward(const problem *pr, const qkv_real *q, const qkv_real *k,
                            const qkv_real *v, qkv_real *out, qkv_real *lse,
                            const qkv__attn_drop *d, qkv_real *scratch, int workers)
{
    (void)workers; /* read only by the pragma: unused where OpenMP is off (the wasm build) */
    int tiles = (pr->tq + QUERY_TILE - 1) / QUERY_TILE, items = pr->nb * pr->nh * tiles;
    /* Dynamic: under a causal mask later tiles have more keys; which thread
     * takes a tile never changes its values. */
#pragma omp parallel for schedule(dynamic) num_threads(workers) if (workers > 1)
    for (int it = 0; it < items; it++) {
        int e = it / tiles, i0 = it % tiles * QUERY_TILE;
        int m = tile_rows(pr, i0);
        qkv_real *s = scratch + (size_t)omp_get_thread_num() * qkv__attention_forward_scratch();
        forward_tile(pr, e, i0, m, q, k, v, out, lse, d, s);
    }
}

void qkv__attention_weight_rows(const problem *pr, const qkv_real *q, const qkv_real *k,
                                int row0, int n_rows, qkv_real *p, qkv_real *tile)
{
    int products = pr->nb * pr->nh, row1 = row0 + n_rows;
    for (int e = 0; e < products; e++) {
        offsets o = offsets_of(pr, e);
        const uint8_t *valid = valid_of(pr, e);
        /* The core's own tiles, from the one that holds row0: a row's scores
         * then come from the same product whichever rows are asked for, so
         * they are bit for bit those of the whole matrix. */
        for (int i0 = row0 / QUERY_TILE * QUERY_TILE; i0 < row1; i0 += QUERY_TILE) {
            int m = tile_rows(pr, i0), kend = keys_seen(pr, i0 + m);
            bool inside = i0 >= row0 && i0 + m <= row1;
            qkv_real *s = inside ? p + o.p + (size_t)(i0 - row0) * pr->lp.ld : tile;
            int ld = inside ? pr->lp.ld : pr->tk;
            /* The scores of these queries against every key they may see... */
            tile_gemm(false, true, m, kend, pr->d, score_scale(pr->d),
                      q + o.q + (size_t)i0 * pr->lq.ld, pr->lq.ld, k + o.kv, pr->lkv.ld, 0, s, ld);
            for (int r = 0; r < m; r++) {
                int i = i0 + r;
                if (i < row0 || i >= row1)
                    continue;
                qkv_real *row = p + o.p + (size_t)(i - row0) * pr->lp.ld, mx = -INFINITY, sum = 0,
                         alpha;
                if (!inside)
                    memcpy(row, s + (size_t)r * ld, (size_t)kend * sizeof *row);
                /* ...masked as in the forward (the keys past kend hidden too)... */
                qkv__attn_hide(row, valid, seen_in(pr, i, 0, kend), pr->tk);
                /* ...and their softmax: exp(s − max) over the row, then / its sum.
                 * A row that sees no key has sum 0 and stays all 0. */
                online(row, pr->tk, &mx, &sum, &alpha);
                qkv_real inv = sum > 0 ? 1 / sum : 0;
                for (int j = 0; j < pr->tk; j++)
                    row[j] *= inv;
            }
        }
    }
}
