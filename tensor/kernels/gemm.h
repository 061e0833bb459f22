/* Internal: the matrix-multiply kernel every matmul in qkv goes through. */
#ifndef QKV_GEMM_H
#define QKV_GEMM_H

#include "qkv/base.h"

/* For b in [0, batch): C_b = alpha · op(A_b) · op(B_b) + beta · C_b, row-major.
 * op(A_b) is M×K: A_b = A + b·stride_a is stored M×K with row pitch lda, or
 * K×M when trans_a. op(B_b) is K×N: B_b is K×N (ldb), or N×K when trans_b.
 * C_b = C + b·stride_c is M×N (ldc); beta == 0 ignores C's old values (even NaN).
 * Batch entries must not overlap in C. Parallel with OpenMP. */
void qkv_gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
              const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
              size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c);

#endif
