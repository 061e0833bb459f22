/* The AVX2+FMA micro-kernel: a 6×16 tile of C held in 12 ymm registers.
 *
 * Each step p loads one row of the B panel (two 8-float vectors) and, for
 * each of the 6 rows, broadcasts a(i, p) and does two FMAs. 12 accumulators
 * + 2 B vectors + 1 broadcast = 15 of the 16 registers, and 12 independent
 * FMAs cover the FMA latency. Compiled for AVX2 whatever the build flags;
 * gemm.c calls it only when the CPU has AVX2 and FMA. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx2.h"

enum { MR = AVX2_MR, NR = AVX2_NR };

/* The tile with A strides known at the call site (see gemm_avx512.c). */
AVX2_INLINE void tile(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                      float *c, ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int p = 0; p < kc; p++, a += cs_a, b += NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i * rs_a);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256i mask[2] = {avx2_lanes(n), avx2_lanes(n - 8)};
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
        if (i >= m)
            break;
        float *ci = c + i * ldc;
#pragma GCC unroll 2
        for (int v = 0; v < 2; v++) {
            __m256 r = _mm256_mul_ps(va, acc[i][v]);
            if (beta != 0) /* masked-off lanes are neither read nor written */
                r = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci + 8 * v, mask[v]), r);
            _mm256_maskstore_ps(ci + 8 * v, mask[v], r);
        }
    }
}

static AVX2 void kernel_avx2(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                             const float *b, float *c, ptrdiff_t ldc, int m, int n, float alpha,
                             float beta)
{
    if (cs_a == 1) /* rows of the stored A */
        tile(kc, a, rs_a, 1, b, c, ldc, m, n, alpha, beta);
    else /* a packed panel */
        tile(kc, a, 1, MR, b, c, ldc, m, n, alpha, beta);
}

const qkv__gemm_path qkv__gemm_avx2 = {"avx2", MR, NR, kernel_avx2, qkv__gemm_avx2_pack_a,
                                       qkv__gemm_avx2_pack_b, qkv__gemm_avx2_dot};

#endif
