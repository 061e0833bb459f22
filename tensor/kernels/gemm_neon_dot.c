/* The NEON kernel for products with a few rows of A and a transposed B:
 * generation's one position times every weight matrix (see
 * gemm_avx512_dot.c for why it reads both operands in place rather than
 * packing). 4-lane partial sums, each reduced across its lanes at the end;
 * NEON has no masked load, so the last k % 4 steps are copied into a
 * zero-padded vector first. */
#include "gemm_kernel.h"

#if QKV__CPU_AARCH64
#include <arm_neon.h>
#include <string.h>

#define NEON_INLINE static inline __attribute__((always_inline))

enum { DOT_M = QKV__GEMM_DOT_M_MAX, DOT_N = 8 };

/* The 4 floats from x (tail: only `tail` of them, 1-3, the rest 0). */
NEON_INLINE float32x4_t load4(const float *x, int tail)
{
    if (!tail)
        return vld1q_f32(x);
    float v[4] = {0};
    memcpy(v, x, (size_t)tail * sizeof *v);
    return vld1q_f32(v);
}

/* acc[i][j] += a_i · b_j over the 4 steps of k from p (tail: `tail` steps). */
NEON_INLINE void dot_step(int rows, int cols, int tail, float32x4_t acc[DOT_M][DOT_N],
                          const float *a, int lda, const float *b, int ldb, int p)
{
    float32x4_t bj[DOT_N];
#pragma GCC unroll 8
    for (int j = 0; j < cols; j++)
        bj[j] = load4(b + (size_t)j * ldb + p, tail);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        float32x4_t ai = load4(a + (size_t)i * lda + p, tail);
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = vfmaq_f32(acc[i][j], ai, bj[j]);
    }
}

/* C[i][j] for i < rows, j < cols (both known at the call site, so the loops
 * unroll into registers): alpha·(a_i · b_j) + beta·C[i][j]. */
NEON_INLINE void dot_block(int rows, int cols, int k, const float *a, int lda, const float *b,
                           int ldb, float *c, int ldc, float alpha, float beta)
{
    float32x4_t acc[DOT_M][DOT_N];
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = vdupq_n_f32(0);
    int p = 0;
    for (; p + 4 <= k; p += 4)
        dot_step(rows, cols, 0, acc, a, lda, b, ldb, p);
    if (p < k) /* the last steps: the same sums, from zero-padded copies */
        dot_step(rows, cols, k - p, acc, a, lda, b, ldb, p);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++) {
            float *cij = c + (size_t)i * ldc + j, r = alpha * vaddvq_f32(acc[i][j]);
            *cij = beta == 0 ? r : r + beta * *cij;
        }
}

/* All column blocks of `rows` rows, then the narrower rest: the partial sums,
 * B's vectors and A's fit in the 32 registers (1-2 rows: 8 columns; 3-4: 4). */
NEON_INLINE void dot_rows(int rows, int n, int k, const float *a, int lda, const float *b, int ldb,
                          float *c, int ldc, float alpha, float beta)
{
    int j = 0, cols = rows <= 2 ? DOT_N : DOT_N / 2;
    for (; j + cols <= n; j += cols)
        dot_block(rows, cols, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
    for (; j < n; j++)
        dot_block(rows, 1, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
}

void qkv__gemm_neon_dot(int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                        int ldb, float beta, float *c, int ldc)
{
    QKV__GEMM_DOT_BY_ROWS(dot_rows, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta)
}

#endif
