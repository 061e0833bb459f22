/* AdamW's update kernel (see adamw.h), and its entry among the hot kernels
 * (hot.h) for qkv bench --ops and tests. */
#include "adamw.h"

#include <math.h>

#include "cpu.h"
#include "hot.h"

/* Square root in the precision of qkv_real. */
#ifdef QKV_DOUBLE
#define SQRT sqrt
#else
#define SQRT sqrtf
#endif

/* Compiled once per vector path (cpu.h). */
QKV__KERNEL_BODY void adamw_chunk_body(qkv_real *restrict w, qkv_real *restrict m,
                                       qkv_real *restrict v, const qkv_real *restrict g, size_t n,
                                       const qkv__adamw_coef *c, qkv_real decay)
{
    const qkv_real beta1 = c->beta1, beta2 = c->beta2, one_m_beta1 = c->one_m_beta1;
    const qkv_real one_m_beta2 = c->one_m_beta2, step = c->step_size, eps = c->eps;
    const qkv_real inv_bc2 = c->inv_bc2, scale = c->grad_scale;
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        qkv_real gi = g[i] * scale;
        m[i] = beta1 * m[i] + one_m_beta1 * gi;
        v[i] = beta2 * v[i] + one_m_beta2 * gi * gi;
        qkv_real denom = SQRT(v[i]) * inv_bc2 + eps;
        w[i] = w[i] * decay - step * m[i] / denom;
    }
}
QKV__KERNEL(adamw_chunk,
            (qkv_real *restrict w, qkv_real *restrict m, qkv_real *restrict v,
             const qkv_real *restrict g, size_t n, const qkv__adamw_coef *c, qkv_real decay),
            (w, m, v, g, n, c, decay))

void qkv__adamw_chunk(qkv_real *restrict w, qkv_real *restrict m, qkv_real *restrict v,
                      const qkv_real *restrict g, size_t n, const qkv__adamw_coef *c,
                      qkv_real decay)
{
    adamw_chunk(w, m, v, g, n, c, decay);
}

/* ---- the kernel on its own (hot.h) ---- */

/* One AdamW step of w = c with the moments m = d, v = e from the gradient a. */
static void hot_adamw(const qkv__hot_data *d)
{
    const qkv__adamw_coef c = {0.9f, 0.99f, 0.1f, 0.01f, 1e-3f, 1.2f, 1e-8f, 1};
    adamw_chunk(d->c, d->d, d->e, d->a, d->n, &c, (qkv_real)0.9999);
}

const qkv__hot_kernel qkv__hot_adamw[] = {
    {"adamw", hot_adamw, qkv__hot_values, QKV__HOT_DIVIDER},
    {0},
};
