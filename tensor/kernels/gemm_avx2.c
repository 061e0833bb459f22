/* The AVX2+FMA micro-kernel: a 6×16 tile of C held in 12 ymm registers.
 *
 * Each step p loads one row of the B panel (two 8-float vectors) and, for
 * each of the 6 rows, broadcasts a(i, p) and does two FMAs. 12 accumulators
 * + 2 B vectors + 1 broadcast = 15 of the 16 registers, and 12 independent
 * FMAs cover the FMA latency. Narrow tiles at the right and bottom edges of
 * C (the lm head's 65 columns, attention's 64 rows) run versions with fewer
 * vectors or rows, as on AVX-512. Compiled for AVX2 whatever the build
 * flags; gemm.c calls it only when the CPU has AVX2 and FMA. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx2.h"

enum { MR = AVX2_MR, NR = AVX2_NR };

/* The tile with `rows` rows and nv vectors (8·nv columns) per row, A's
 * strides known at the call site (see gemm_avx512.c). */
AVX2_INLINE void tile(int rows, int nv, int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                      const float *b, float *c, ptrdiff_t ldc, int m, int n, float alpha,
                      float beta)
{
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
#pragma GCC unroll 4 /* fewer loop instructions competing with the FMAs for their ports */
    for (int p = 0; p < kc; p++, a += cs_a, b += NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = nv > 1 ? _mm256_load_ps(b + 8) : b0;
#pragma GCC unroll 6
        for (int i = 0; i < rows; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i * rs_a);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            if (nv > 1)
                acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256i mask[2] = {avx2_lanes(n), avx2_lanes(n - 8)};
    const bool full = n == NR; /* plain loads and stores: a masked store is slow (on Zen 3 very) */
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        if (i >= m)
            break;
        float *ci = c + i * ldc;
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) {
            __m256 r = _mm256_mul_ps(va, acc[i][v]);
            if (beta != 0) /* masked-off lanes are neither read nor written */
                r = _mm256_fmadd_ps(vb, full ? _mm256_loadu_ps(ci + 8 * v)
                                             : _mm256_maskload_ps(ci + 8 * v, mask[v]), r);
            if (full)
                _mm256_storeu_ps(ci + 8 * v, r);
            else
                _mm256_maskstore_ps(ci + 8 * v, mask[v], r);
        }
    }
}

/* One version of the tile per (A layout, rows): the full and the half-width tile. */
#define TILE_VERSION(name, rows, rs, cs)                                                      \
    static AVX2 void name(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,             \
                          const float *b, float *c, ptrdiff_t ldc, int m, int n, float alpha, \
                          float beta)                                                         \
    {                                                                                         \
        (void)rs_a, (void)cs_a;                                                               \
        if (n > 8)                                                                            \
            tile(rows, 2, kc, a, rs, cs, b, c, ldc, m, n, alpha, beta);                       \
        else                                                                                  \
            tile(rows, 1, kc, a, rs, cs, b, c, ldc, m, n, alpha, beta);                       \
    }

TILE_VERSION(tile_rows_6, 6, rs_a, 1) /* 6 full rows of the stored A */
TILE_VERSION(tile_cols_6, 6, 1, cs_a) /* 6 full columns of a transposed A's stored rows */
TILE_VERSION(tile_panel_6, 6, 1, MR)  /* packed panels... */
TILE_VERSION(tile_panel_4, 4, 1, MR)  /* ...the bottom edge, 4 rows or fewer */
TILE_VERSION(tile_panel_2, 2, 1, MR)  /* ...2 rows or fewer */

static void kernel_avx2(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                        float *c, ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    qkv__gemm_kernel_fn *version = cs_a == 1    ? tile_rows_6
                                   : cs_a != MR ? tile_cols_6
                                   : m <= 2     ? tile_panel_2
                                   : m <= 4  ? tile_panel_4
                                             : tile_panel_6;
    version(kc, a, rs_a, cs_a, b, c, ldc, m, n, alpha, beta);
}

/* A transposed A in place up to 128 columns: on Zen 4 attention's TN products
 * 77 -> 80% (QK'), 73 -> 82% (PV), the baby's 384x128x768 dW 87 -> 92%; but
 * 6 floats of a row a step across 384 or more columns fell to 57-62%
 * against 86-88% packed. */
const qkv__gemm_path qkv__gemm_avx2 = {"avx2", MR, NR, kernel_avx2, qkv__gemm_avx2_pack_a,
                                       qkv__gemm_avx2_pack_b, qkv__gemm_avx2_dot, 128};

#endif
