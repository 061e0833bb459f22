/* qkv/gemm.h — the matrix product every matmul in qkv goes through, on
 * plain row-major arrays: packed, tiled, in the vector path qkv/cpu.h
 * chooses and parallel over qkv_set_threads' threads.
 *
 *     qkv_real a[2 * 3] = {1, 2, 3, 4, 5, 6}, b[3 * 2] = {1, 0, 0, 1, 1, 1}, c[2 * 2];
 *     // c = a·b: (2×3)·(3×2)
 *     if (qkv_gemm(1, false, false, 2, 2, 3, 1, a, 3, 0, b, 2, 0, 0, c, 2, 0) < 0)
 *         fprintf(stderr, "%s\n", qkv_last_error());
 */
#ifndef QKV_GEMM_H
#define QKV_GEMM_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* For b in [0, batch): C_b = alpha·op(A_b)·op(B_b) + beta·C_b, row-major.
 * op(A_b) is M×K: A_b = A + b·stride_a is stored M×K with row pitch lda, or
 * K×M when trans_a; op(B_b) is K×N: B_b = B + b·stride_b is K×N (ldb), or
 * N×K when trans_b; C_b = C + b·stride_c is M×N (ldc). beta == 0 ignores
 * C's old values (even NaN). 0, or -1 with a message: a NULL matrix, a
 * negative size, a pitch shorter than its row, or batch entries that
 * overlap in C. */
int qkv_gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
             const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
             size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c);

/* qkv_gemm with every element of op(A) and op(B) rounded to bf16 (to the
 * nearest, ties to even) and the products summed in fp32: the products of
 * QKV_PRECISION_BF16 (qkv/precision.h), on the kernel qkv_precision_kernel
 * names; the same bits on every kernel and thread count. 0, or -1 as
 * qkv_gemm, and always in the double build (bf16 is a float-build option). */
int qkv_gemm_bf16(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                  const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
                  size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c);

QKV_END_DECLS
#endif
