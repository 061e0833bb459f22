/* The AVX-512 kernel for products with a few rows of A and a transposed B
 * (the NT form x·Wᵀ of a Linear, Q·Kᵀ of one query): generation multiplies a
 * single position by every weight matrix. There the blocked driver would pack
 * all of B for one row of A, moving every weight twice to use it once; here
 * each C[i][j] is the dot product of row i of A with stored row j of B, read
 * in place, so every weight is read once and nothing is written but C.
 *
 * Up to DOT_M rows of A against DOT_N rows of B at a time: DOT_M·DOT_N
 * 16-lane partial sums, each reduced across its lanes at the end. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx512.h"

enum { DOT_M = QKV__GEMM_DOT_M_MAX, DOT_N = 8 };

/* acc[i][j] += a_i · b_j over the 16 steps of k from p, lanes `valid` only
 * (the rest count as 0); full: all 16, loaded without a mask. */
AVX512_INLINE void dot_step(int rows, int cols, bool full, __mmask16 valid,
                            __m512 acc[DOT_M][DOT_N], const float *a, int lda,
                            const float *b, int ldb, int p)
{
    __m512 bj[DOT_N];
#pragma GCC unroll 8
    for (int j = 0; j < cols; j++)
        bj[j] = full ? _mm512_loadu_ps(b + (size_t)j * ldb + p)
                     : _mm512_maskz_loadu_ps(valid, b + (size_t)j * ldb + p);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        __m512 ai = full ? _mm512_loadu_ps(a + (size_t)i * lda + p)
                         : _mm512_maskz_loadu_ps(valid, a + (size_t)i * lda + p);
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = _mm512_fmadd_ps(ai, bj[j], acc[i][j]);
    }
}

/* C[i][j] for i < rows, j < cols (both known at the call site, so the loops
 * unroll into registers): alpha·(a_i · b_j) + beta·C[i][j]. */
AVX512_INLINE void dot_block(int rows, int cols, int k, const float *a, int lda, const float *b,
                             int ldb, float *c, int ldc, float alpha, float beta)
{
    __m512 acc[DOT_M][DOT_N];
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = _mm512_setzero_ps();
    int p = 0;
    for (; p + 16 <= k; p += 16)
        dot_step(rows, cols, true, 0xFFFF, acc, a, lda, b, ldb, p);
    if (p < k) /* the last steps: the same sums, masked */
        dot_step(rows, cols, false, avx512_lanes(k - p), acc, a, lda, b, ldb, p);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++) {
            float *cij = c + (size_t)i * ldc + j, r = alpha * _mm512_reduce_add_ps(acc[i][j]);
            *cij = beta == 0 ? r : r + beta * *cij;
        }
}

/* All DOT_N-wide column blocks of `rows` rows, then the narrower rest. */
AVX512_INLINE void dot_rows(int rows, int n, int k, const float *a, int lda, const float *b,
                            int ldb, float *c, int ldc, float alpha, float beta)
{
    int j = 0, cols = rows <= 2 ? DOT_N : DOT_N / 2; /* partial sums + B rows fit in 32 registers */
    for (; j + cols <= n; j += cols)
        dot_block(rows, cols, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
    for (; j < n; j++)
        dot_block(rows, 1, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
}

AVX512 void qkv__gemm_avx512_dot(int m, int n, int k, float alpha, const float *a, int lda,
                                 const float *b, int ldb, float beta, float *c, int ldc)
{
    QKV__GEMM_DOT_BY_ROWS(dot_rows, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta)
}

#endif
