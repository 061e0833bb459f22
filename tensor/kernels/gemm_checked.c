/* qkv_gemm and qkv_gemm_bf16: the matrix products (gemm.c, gemm_bf16.c)
 * behind the public API's argument checks (qkv/gemm.h). */
#include "qkv/gemm.h"

#include "gemm.h"
#include "gemm_bf16.h"
#include "tensor/check.h"

/* Values from the first element of an m×n matrix (pitch ld) to its last. */
static size_t extent(int m, int n, int ld)
{
    return m && n ? (size_t)(m - 1) * (size_t)ld + (size_t)n : 0;
}

/* 0 when the arguments of fn (qkv_gemm's) describe products it can compute,
 * else -1 naming the one that is wrong. */
static int check(const char *fn, int batch, bool trans_a, bool trans_b, int M, int N, int K,
                 const qkv_real *A, int lda, const qkv_real *B, int ldb, const qkv_real *C, int ldc,
                 size_t stride_c)
{
    if (qkv__null(fn, "A", A) || qkv__null(fn, "B", B) || qkv__null(fn, "C", C))
        return -1;
    if (batch < 0 || M < 0 || N < 0 || K < 0)
        return qkv_set_error("%s: batch %d, M %d, N %d, K %d: a size is negative", fn, batch, M,
                             N, K);
    int a_row = trans_a ? M : K, b_row = trans_b ? K : N;
    if (lda < (a_row > 1 ? a_row : 1) || ldb < (b_row > 1 ? b_row : 1) || ldc < (N > 1 ? N : 1))
        return qkv_set_error("%s: lda %d, ldb %d, ldc %d: each pitch must hold its row (%d, %d, "
                             "%d) and be >= 1", fn, lda, ldb, ldc, a_row, b_row, N);
    if (batch > 1 && stride_c < extent(M, N, ldc))
        return qkv_set_error("%s: stride_c %zu: the batch's products overlap in C (each spans %zu)",
                             fn, stride_c, extent(M, N, ldc));
    return 0;
}

int qkv_gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
             const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
             size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c)
{
    if (check("qkv_gemm", batch, trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc, stride_c) < 0)
        return -1;
    qkv__gemm(batch, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
              ldc, stride_c);
    return 0;
}

int qkv_gemm_bf16(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                  const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
                  size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c)
{
    const char *fn = "qkv_gemm_bf16";
    if (check(fn, batch, trans_a, trans_b, M, N, K, A, lda, B, ldb, C, ldc, stride_c) < 0)
        return -1;
#ifdef QKV_DOUBLE
    (void)alpha, (void)stride_a, (void)stride_b, (void)beta;
    return qkv_set_error("%s: bf16 products are a float-build option (this is the double build)",
                         fn);
#else
    qkv__gemm_bf16_batch(batch, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a, B, ldb,
                         stride_b, beta, C, ldc, stride_c);
    return 0;
#endif
}
