/* The AVX2+FMA kernel for products with a few rows of A and a transposed B:
 * generation's one position times every weight matrix (see
 * gemm_avx512_dot.c for why it reads both operands in place rather than
 * packing). 8-lane partial sums, each reduced across its lanes at the end;
 * fewer columns of B per block than on AVX-512, as AVX2 has 16 registers. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx2.h"

enum { DOT_M = QKV__GEMM_DOT_M_MAX, DOT_N = 8 };

/* The sum of v's 8 lanes, in a fixed order. */
AVX2_INLINE float sum_lanes(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* acc[i][j] += a_i · b_j over the 8 steps of k from p, lanes `valid` only
 * (the rest count as 0); full: all 8, loaded without a mask. */
AVX2_INLINE void dot_step(int rows, int cols, bool full, __m256i valid,
                          __m256 acc[DOT_M][DOT_N], const float *a, int lda,
                          const float *b, int ldb, int p)
{
    __m256 bj[DOT_N];
#pragma GCC unroll 8
    for (int j = 0; j < cols; j++)
        bj[j] = full ? _mm256_loadu_ps(b + (size_t)j * ldb + p)
                     : _mm256_maskload_ps(b + (size_t)j * ldb + p, valid);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++) {
        __m256 ai = full ? _mm256_loadu_ps(a + (size_t)i * lda + p)
                         : _mm256_maskload_ps(a + (size_t)i * lda + p, valid);
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = _mm256_fmadd_ps(ai, bj[j], acc[i][j]);
    }
}

/* C[i][j] for i < rows, j < cols (both known at the call site, so the loops
 * unroll into registers): alpha·(a_i · b_j) + beta·C[i][j]. */
AVX2_INLINE void dot_block(int rows, int cols, int k, const float *a, int lda, const float *b,
                           int ldb, float *c, int ldc, float alpha, float beta)
{
    __m256 acc[DOT_M][DOT_N];
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++)
            acc[i][j] = _mm256_setzero_ps();
    int p = 0;
    for (; p + 8 <= k; p += 8)
        dot_step(rows, cols, true, avx2_lanes(8), acc, a, lda, b, ldb, p);
    if (p < k) /* the last steps: the same sums, masked */
        dot_step(rows, cols, false, avx2_lanes(k - p), acc, a, lda, b, ldb, p);
#pragma GCC unroll 4
    for (int i = 0; i < rows; i++)
#pragma GCC unroll 8
        for (int j = 0; j < cols; j++) {
            float *cij = c + (size_t)i * ldc + j, r = alpha * sum_lanes(acc[i][j]);
            *cij = beta == 0 ? r : r + beta * *cij;
        }
}

/* All column blocks of `rows` rows, then the narrower rest: the partial sums
 * and B's vectors fit in the 16 registers (1 row: 8 columns; 2: 4; 3-4: 2). */
AVX2_INLINE void dot_rows(int rows, int n, int k, const float *a, int lda, const float *b, int ldb,
                          float *c, int ldc, float alpha, float beta)
{
    int j = 0, cols = rows == 1 ? DOT_N : rows == 2 ? DOT_N / 2 : DOT_N / 4;
    for (; j + cols <= n; j += cols)
        dot_block(rows, cols, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
    for (; j < n; j++)
        dot_block(rows, 1, k, a, lda, b + (size_t)j * ldb, ldb, c + j, ldc, alpha, beta);
}

AVX2 void qkv__gemm_avx2_dot(int m, int n, int k, float alpha, const float *a, int lda,
                             const float *b, int ldb, float beta, float *c, int ldc)
{
    QKV__GEMM_DOT_BY_ROWS(dot_rows, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta)
}

#endif
