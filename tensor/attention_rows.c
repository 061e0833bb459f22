/* The row kernels of the block-wise attention core (see attention_rows.h).
 * Each is a branch-free loop over one row of a block of scores, compiled for
 * every vector path (kernels/cpu.h), so it vectorizes. */
#include <math.h>
#include <string.h>

#include "attention_rows.h"
#include "kernels/cpu.h"
#include "kernels/vecmath.h"

/* ---- dropout by hash ---- */

/* A bijective 32-bit mixer (Wellons' lowbias32): every input bit moves about
 * half the output bits. Multiplies and shifts of 32-bit lanes vectorize. */
static inline __attribute__((always_inline)) uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

qkv__attn_drop qkv__attn_drop_make(qkv_real p, uint64_t seed)
{
    if (!(p > 0))
        return (qkv__attn_drop){0};
    /* p < 1, so p·2³² < 2³²: the threshold fits, and P(hash >= it) = 1 − p. */
    double t = (double)p * 4294967296.0;
    return (qkv__attn_drop){true, seed, (uint32_t)t, 1 / (1 - p)};
}

uint64_t qkv__attn_drop_row(const qkv__attn_drop *d, uint64_t row)
{
    /* splitmix64's finaliser of seed + row·φ: rows far apart in the key. */
    uint64_t z = d->seed + (row + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The dropout factor of key j in the row keyed key: two rounds of mix32, the
 * key's halves put in before each, so that two rows' streams never coincide
 * by a shift of j. */
static inline __attribute__((always_inline)) qkv_real drop_factor(uint64_t key, uint32_t threshold,
                                                                  qkv_real scale, int j)
{
    uint32_t h = mix32(mix32((uint32_t)j ^ (uint32_t)key) ^ (uint32_t)(key >> 32));
    return h >= threshold ? scale : 0;
}

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

/* ---- masks and weights ---- */

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

/* Below, a hidden key's score is -inf and qkv__exp(-inf) is exactly 0 (in
 * the double build too, where it is libm's exp). */
QKV__KERNEL_BODY void online_body(qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha)
{
    /* The largest visible score so far: subtracting it keeps every exp() <= 1,
     * and softmax(s) = softmax(s − c) for any c, so nothing else changes. */
    qkv_real mx = *m;
#pragma omp simd reduction(max : mx)
    for (int j = 0; j < n; j++)
        mx = s[j] > mx ? s[j] : mx;
    if (mx == -INFINITY) { /* every key so far hidden: no weight anywhere yet */
        memset(s, 0, (size_t)n * sizeof *s);
        *alpha = 1;
        return;
    }
    qkv_real sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int j = 0; j < n; j++) {
        qkv_real e = qkv__exp(s[j] - mx);
        s[j] = e;
        sum += e;
    }
    /* The sum and the output so far were taken against the old max: scale
     * them to the new one (exp(-inf) = 0 when there was none). */
    qkv_real a = *m == mx ? 1 : qkv__exp(*m - mx);
    *l = *l * a + sum;
    *m = mx;
    *alpha = a;
}
QKV__KERNEL(online, (qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha),
            (s, n, m, l, alpha))

void qkv__attn_online(qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha)
{
    online(s, n, m, l, alpha);
}

QKV__KERNEL_BODY void weights_body(qkv_real *p, const qkv_real *s, qkv_real lse, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        p[j] = qkv__exp(s[j] - lse);
}
QKV__KERNEL(weights, (qkv_real *p, const qkv_real *s, qkv_real lse, int n), (p, s, lse, n))

void qkv__attn_weights(qkv_real *p, const qkv_real *s, qkv_real lse, int n)
{
    weights(p, s, lse, n);
}

/* ---- the softmax backward ---- */

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

void qkv__attn_row_grad(qkv_real *ds, const qkv_real *dp, const qkv_real *p, qkv_real delta,
                        const qkv__attn_drop *d, uint64_t row_key, int j0, int n)
{
    if (d && d->on)
        row_grad_drop(ds, dp, p, delta, row_key, d->threshold, d->scale, j0, n);
    else
        row_grad(ds, dp, p, delta, n);
}
