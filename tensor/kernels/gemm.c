/* The matmul kernel: loop orders chosen so the innermost loop walks memory
 * contiguously for each transpose form, parallel over batch entries or rows. */
#include "gemm.h"

#include <string.h>

/* One C = alpha·op(A)·op(B) + beta·C for rows [i0, i1) of C. */
static void gemm_rows(bool ta, bool tb, int i0, int i1, int N, int K, qkv_real alpha,
                      const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                      qkv_real *C, int ldc)
{
    for (int i = i0; i < i1; i++) {
        qkv_real *c = C + (size_t)i * ldc;
        if (beta == 0)
            memset(c, 0, (size_t)N * sizeof *c);
        else if (beta != 1)
            for (int j = 0; j < N; j++)
                c[j] *= beta;
        if (!tb) { /* C[i,:] += A[i,k] · B[k,:]: rows of B are contiguous */
            for (int k = 0; k < K; k++) {
                qkv_real aik = alpha * (ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]);
                const qkv_real *b = B + (size_t)k * ldb;
                for (int j = 0; j < N; j++)
                    c[j] += aik * b[j];
            }
        } else if (!ta) { /* C[i,j] += A[i,:] · B[j,:]: two contiguous rows */
            const qkv_real *a = A + (size_t)i * lda;
            for (int j = 0; j < N; j++) {
                const qkv_real *b = B + (size_t)j * ldb;
                qkv_real s = 0;
                for (int k = 0; k < K; k++)
                    s += a[k] * b[k];
                c[j] += alpha * s;
            }
        } else {
            for (int j = 0; j < N; j++) {
                const qkv_real *b = B + (size_t)j * ldb;
                qkv_real s = 0;
                for (int k = 0; k < K; k++)
                    s += A[(size_t)k * lda + i] * b[k];
                c[j] += alpha * s;
            }
        }
    }
}

void qkv_gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
              const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
              size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c)
{
    if (batch > 1) {
#pragma omp parallel for schedule(static)
        for (int b = 0; b < batch; b++)
            gemm_rows(trans_a, trans_b, 0, M, N, K, alpha, A + b * stride_a, lda, B + b * stride_b,
                      ldb, beta, C + b * stride_c, ldc);
        return;
    }
    enum { ROWS = 16 };
#pragma omp parallel for schedule(static)
    for (int i0 = 0; i0 < M; i0 += ROWS)
        gemm_rows(trans_a, trans_b, i0, i0 + ROWS < M ? i0 + ROWS : M, N, K, alpha, A, lda, B, ldb,
                  beta, C, ldc);
}
