/* The portable micro-kernel: plain C for any CPU and for the double build.
 * A 4×8 (float) or 4×4 (double) tile of accumulators: once the row loop is
 * unrolled the compiler keeps it in eight 16-byte vector registers. */
#include "gemm_kernel.h"

enum { MR = 4, NR = 32 / sizeof(qkv_real) };

static void kernel_portable(int kc, const qkv_real *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                            const qkv_real *b, qkv_real *c, ptrdiff_t ldc, int m, int n,
                            qkv_real alpha, qkv_real beta)
{
    qkv_real acc[MR][NR] = {{0}};
    for (int p = 0; p < kc; p++, a += cs_a, b += NR)
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) /* the j loop is left for the compiler to vectorize */
            for (int j = 0; j < NR; j++)
                acc[i][j] += a[i * rs_a] * b[j];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            qkv_real *cij = c + i * ldc + j;
            *cij = beta == 0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cij;
        }
}

const qkv__gemm_path qkv__gemm_portable = {"portable", MR, NR, kernel_portable, qkv__gemm_pack_a,
                                           qkv__gemm_pack_b, NULL, 0};
