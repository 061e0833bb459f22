/* The model's products in the active precision (gemm_mixed.h): fp32 goes to
 * gemm.c's driver, bf16 to gemm_bf16.c's. The double build has no bf16
 * (qkv_precision_use refuses it), so there these are gemm.c's functions. */
#include "gemm_mixed.h"

#include <omp.h>

#include "gemm_bf16.h"
#include "qkv/precision.h"

bool qkv__mixed_bf16(void)
{
#ifdef QKV_DOUBLE
    return false;
#else
    return qkv__precision_current == QKV_PRECISION_BF16;
#endif
}

void qkv__gemm_mixed(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                     const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
                     size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c)
{
#ifndef QKV_DOUBLE
    if (qkv__mixed_bf16()) {
        qkv__gemm_bf16_batch(batch, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a, B, ldb,
                             stride_b, beta, C, ldc, stride_c);
        return;
    }
#endif
    qkv__gemm(batch, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C,
              ldc, stride_c);
}

/* Rows of C the epilogue takes at a time in bf16: a block still small enough
 * to be in cache for the bias and the activation. */
enum { EPILOGUE_ROWS = 16 };

void qkv__gemm_mixed_then(bool b_weight, bool trans_a, bool trans_b, int M, int N, int K,
                          qkv_real alpha, const qkv_real *A, int lda, const qkv_real *B, int ldb,
                          qkv_real beta, qkv_real *C, int ldc, const qkv__gemm_epilogue *ep)
{
    if (!qkv__mixed_bf16()) {
        qkv__gemm_then(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);
        return;
    }
#ifndef QKV_DOUBLE
    if (b_weight)
        qkv__gemm_bf16_weight(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
#else
    (void)b_weight; /* no bf16 in the double build: never here */
#endif
        qkv__gemm_mixed(1, trans_a, trans_b, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0);
    if (!ep || M <= 0 || N <= 0)
        return;
    const int blocks = (M + EPILOGUE_ROWS - 1) / EPILOGUE_ROWS;
    /* elementwise work: any split of the rows gives the same values */
#pragma omp parallel for schedule(static) if (blocks > 1 && !omp_in_parallel())
    for (int blk = 0; blk < blocks; blk++) {
        const int row = blk * EPILOGUE_ROWS;
        const int m = M - row < EPILOGUE_ROWS ? M - row : EPILOGUE_ROWS;
        ep->fn(ep->ctx, C + (size_t)row * ldc, ldc, row, 0, m, N);
    }
}

void qkv__gemm_mixed_two(const qkv__gemm_product *x, const qkv__gemm_product *y)
{
    if (!qkv__mixed_bf16()) {
        qkv__gemm_two(x, y);
        return;
    }
    const qkv__gemm_product *p[2] = {x, y};
    for (int i = 0; i < 2; i++)
        qkv__gemm_mixed(1, p[i]->trans_a, p[i]->trans_b, p[i]->M, p[i]->N, p[i]->K, p[i]->alpha,
                        p[i]->A, p[i]->lda, 0, p[i]->B, p[i]->ldb, 0, p[i]->beta, p[i]->C,
                        p[i]->ldc, 0);
}
