/* Internal: the matrix-multiply kernel every matmul in qkv goes through. */
#ifndef QKV_KERNELS_GEMM_H
#define QKV_KERNELS_GEMM_H

#include "qkv/base.h"

/* For b in [0, batch): C_b = alpha · op(A_b) · op(B_b) + beta · C_b, row-major.
 * op(A_b) is M×K: A_b = A + b·stride_a is stored M×K with row pitch lda, or
 * K×M when trans_a. op(B_b) is K×N: B_b is K×N (ldb), or N×K when trans_b.
 * C_b = C + b·stride_c is M×N (ldc); beta == 0 ignores C's old values (even NaN).
 * Batch entries must not overlap in C. Parallel with OpenMP. */
void qkv__gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
               const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
               size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c);

/* qkv__gemm over batch × heads products, where product (b, h) of each operand
 * starts at b·X_batch + h·X_head (X = a, b, c): the heads of multi-head
 * attention, which sit side by side in the columns of a (B, T, H·D) tensor
 * (head stride D, row pitch H·D), multiply in place without being copied out. */
void qkv__gemm_heads(int batch, int heads, bool trans_a, bool trans_b, int M, int N, int K,
                     qkv_real alpha, const qkv_real *A, int lda, size_t a_batch, size_t a_head,
                     const qkv_real *B, int ldb, size_t b_batch, size_t b_head, qkv_real beta,
                     qkv_real *C, int ldc, size_t c_batch, size_t c_head);

/* Work to do on a block of C the moment its product is complete, while the
 * block is still in cache: fn(ctx, c, ldc, row, col, m, n) for the m×n block
 * at rows [row, row + m) and columns [col, col + n) of C, c pointing at its
 * first element. Each element is passed exactly once, by the thread that
 * computed it. */
typedef struct qkv__gemm_epilogue {
    void (*fn)(void *ctx, qkv_real *c, int ldc, int row, int col, int m, int n);
    void *ctx;
} qkv__gemm_epilogue;

/* One product (qkv__gemm with batch 1), then ep on every block of C. */
void qkv__gemm_then(bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                    const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                    qkv_real *C, int ldc, const qkv__gemm_epilogue *ep);

/* The arguments of one product for qkv__gemm_two (as qkv__gemm's, batch 1). */
typedef struct qkv__gemm_product {
    bool trans_a, trans_b;
    int M, N, K;
    qkv_real alpha;
    const qkv_real *A;
    int lda;
    const qkv_real *B;
    int ldb;
    qkv_real beta;
    qkv_real *C;
    int ldc;
} qkv__gemm_product;

/* Two independent products (their C apart, neither reading the other's C), in
 * one parallel region: with two threads each product goes whole to one of
 * them. The same results as two qkv__gemm calls. */
void qkv__gemm_two(const qkv__gemm_product *x, const qkv__gemm_product *y);

#endif
