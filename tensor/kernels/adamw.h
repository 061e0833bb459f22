/* Internal: AdamW's update of a run of values, as a kernel compiled once per
 * vector path (cpu.h). train/optim.c's step calls it on every tensor; it
 * lives here, with the other hot kernels, so that the registry of them all
 * (hot.h) needs nothing above tensor/. Not installed. */
#ifndef QKV_ADAMW_H
#define QKV_ADAMW_H

#include <stddef.h>

#include "qkv/base.h"

/* The per-step constants of AdamW, rounded to qkv_real once. */
typedef struct qkv__adamw_coef {
    qkv_real beta1, beta2;             /* moment decays */
    qkv_real one_m_beta1, one_m_beta2; /* 1 - beta */
    qkv_real step_size;                /* lr / (1 - beta1^t) */
    qkv_real inv_bc2;                  /* 1 / sqrt(1 - beta2^t) */
    qkv_real eps;
    qkv_real grad_scale;               /* the gradient clipping's factor (1: none) */
} qkv__adamw_coef;

/* The AdamW update of n values of the weights w with the moments m and v
 * from the gradient g (none overlapping); decay is 1 - lr·wd, or 1 when they
 * are not decayed. On the active path, on this thread. */
void qkv__adamw_chunk(qkv_real *restrict w, qkv_real *restrict m, qkv_real *restrict v,
                      const qkv_real *restrict g, size_t n, const qkv__adamw_coef *c,
                      qkv_real decay);

#endif
