/* Internal: the row kernels of the block-wise attention core (attention_rows.c):
 * one query's scores against one block of keys, masked, turned into weights
 * by an online softmax (forward) or from the row's log-sum-exp (backward),
 * and attention dropout by a counter-based hash, so that the backward draws
 * the very mask the forward drew without storing it. Not installed. */
#ifndef QKV_ATTENTION_ROWS_H
#define QKV_ATTENTION_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "qkv/base.h"

/* Attention dropout of one call: weight (problem e, query i, key j) is kept
 * when a hash of (seed, e·tq + i, j) is >= threshold, with probability 1 − p;
 * the same element always gets the same verdict, on any thread, in forward
 * and in backward. */
typedef struct qkv__attn_drop {
    bool on;            /* false: no dropout (the other fields unused) */
    uint64_t seed;      /* drawn once per call from the caller's rng */
    uint32_t threshold; /* p·2³² */
    qkv_real scale;     /* 1/(1 − p), the factor on kept weights */
} qkv__attn_drop;

/* The dropout of probability p (0 <= p < 1) keyed by seed; off when p == 0. */
qkv__attn_drop qkv__attn_drop_make(qkv_real p, uint64_t seed);

/* The hash key of global query row `row` (e·tq + i) under d. */
uint64_t qkv__attn_drop_row(const qkv__attn_drop *d, uint64_t row);

/* Mask one row of n scores s of the keys [j0, j0 + n): the first n_seen are
 * visible by the causal rule (0 <= n_seen <= n), valid (NULL: every key) is
 * the padding mask of those n keys. Every hidden score becomes -inf, so its
 * weight is exactly 0. */
void qkv__attn_hide(qkv_real *s, const uint8_t *valid, int n_seen, int n);

/* One online-softmax step over a masked row s (n): with the row's running
 * max *m and sum *l over the keys before, s becomes exp(s − m') for the new
 * max m' (0 where s is -inf), *l = *l·exp(*m − m') + Σ exp(s − m'), *m = m';
 * *alpha = exp(m_old − m'), the factor for the output accumulated so far
 * (1 while every key so far is hidden). */
void qkv__attn_online(qkv_real *s, int n, qkv_real *m, qkv_real *l, qkv_real *alpha);

/* p = exp(s − lse) over a masked row (n): the weights from the row's
 * log-sum-exp (+inf for a row that sees no key: all 0). p may be s. */
void qkv__attn_weights(qkv_real *p, const qkv_real *s, qkv_real lse, int n);

/* pz = p ⊙ z, z the dropout factor of keys [j0, j0 + n) of the row keyed
 * row_key (d->scale where kept, 0 where dropped). pz may be p. */
void qkv__attn_drop_apply(qkv_real *pz, const qkv_real *p, const qkv__attn_drop *d,
                          uint64_t row_key, int j0, int n);

/* The softmax backward of one row: ds = p ⊙ (dp ⊙ z − delta), z the dropout
 * factor (1 when d is NULL or off), delta = Σ_j p_j·(dp ⊙ z)_j = dO·O. ds may
 * be dp. Where p is 0 (hidden keys) ds is 0. */
void qkv__attn_row_grad(qkv_real *ds, const qkv_real *dp, const qkv_real *p, qkv_real delta,
                        const qkv__attn_drop *d, uint64_t row_key, int j0, int n);

#endif
