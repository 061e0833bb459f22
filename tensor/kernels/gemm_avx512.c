/* The AVX-512 micro-kernel: a 12×32 tile of C held in 24 zmm registers.
 *
 * Each step p loads one row of the B panel (two 16-float vectors) and, for
 * each of the 12 rows, broadcasts a(i, p) and does two FMAs: 24 independent
 * FMAs per 2 vector loads + 12 broadcasts, enough to hide the FMA latency
 * (4 cycles × 2 pipes needs ≥ 8 chains) and to keep the loads off the
 * critical path. 24 accumulators + 2 B vectors + 1 broadcast = 27 of the 32
 * registers. Narrow tiles at the right and bottom edges of C run versions
 * with fewer vectors or rows, so a 64×64 product wastes no FMAs. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx2.h"
#include "gemm_avx512.h"

enum { MR = AVX512_MR, NR = AVX512_NR };

/* The tile with `rows` rows and nv vectors (16·nv columns) per row, A's
 * strides known at the call site, so every loop unrolls into registers and
 * a[i·rs_a] becomes a fixed offset. */
/* Start fetching the tile's m×n of C now, needed only after the k loop: it
 * pays when the loop is long and C has left the cache between passes over k. */
AVX512_INLINE void prefetch_c(int kc, const float *c, ptrdiff_t ldc, int m, int n)
{
    for (int i = 0; i < (kc > 64 ? m : 0); i++) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + n - 1), _MM_HINT_T0);
    }
}

AVX512_INLINE void tile(int rows, int nv, int kc, const float *a, ptrdiff_t rs_a,
                        ptrdiff_t cs_a, const float *b, float *c, ptrdiff_t ldc, int m, int n,
                        float alpha, float beta)
{
    prefetch_c(kc, c, ldc, m, n);
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 4 /* fewer loop instructions competing with the FMAs for their ports */
    for (int p = 0; p < kc; p++, a += cs_a, b += NR) {
        __m512 b0 = _mm512_load_ps(b);
        __m512 b1 = nv > 1 ? _mm512_load_ps(b + 16) : b0;
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            __m512 ai = _mm512_set1_ps(a[i * rs_a]);
            acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
            if (nv > 1)
                acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    avx512_store_tile(rows, nv, true, acc, c, ldc, m, n, alpha, beta);
}

/* The tile for the last few columns (n <= 8, as the lm head's 65th) in
 * 256-bit registers: Zen 4 runs a 512-bit FMA as two 256-bit halves, so a
 * 16-lane tile for one column costs twice these 8 lanes (Intel's full-width
 * units run either at the same rate). Each element is the same FMA chain as
 * in `tile`, so the results are the same bits. */
AVX512_INLINE void tile_narrow(int rows, int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                               const float *b, float *c, ptrdiff_t ldc, int m, int n,
                               float alpha, float beta)
{
    prefetch_c(kc, c, ldc, m, n);
    __m256 acc[MR];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++)
        acc[i] = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int p = 0; p < kc; p++, a += cs_a, b += NR) {
        __m256 b0 = _mm256_load_ps(b);
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++)
            acc[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + i * rs_a), b0, acc[i]);
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    /* lanes [0, n): AVX2's masked load and store (AVX-512F alone has no 8-lane mask) */
    __m256i mask = avx2_lanes(n);
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        if (i >= m)
            break;
        float *ci = c + i * ldc;
        __m256 r = _mm256_mul_ps(va, acc[i]);
        if (beta != 0)
            r = _mm256_fmadd_ps(vb, _mm256_maskload_ps(ci, mask), r);
        _mm256_maskstore_ps(ci, mask, r);
    }
}

/* One version of the tile per (A layout, rows): the full, the half-width and the narrow tile. */
#define TILE_VERSION(name, rows, rs, cs)                                                      \
    static AVX512 void name(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,           \
                            const float *b, float *c, ptrdiff_t ldc, int m, int n,            \
                            float alpha, float beta)                                          \
    {                                                                                         \
        (void)rs_a, (void)cs_a;                                                               \
        if (n > 16)                                                                           \
            tile(rows, 2, kc, a, rs, cs, b, c, ldc, m, n, alpha, beta);                       \
        else if (n > 8)                                                                       \
            tile(rows, 1, kc, a, rs, cs, b, c, ldc, m, n, alpha, beta);                       \
        else                                                                                  \
            tile_narrow(rows, kc, a, rs, cs, b, c, ldc, m, n, alpha, beta);                   \
    }

TILE_VERSION(tile_rows_12, 12, rs_a, 1) /* 12 full rows of the stored A */
TILE_VERSION(tile_cols_12, 12, 1, cs_a) /* 12 full columns of a transposed A's stored rows */
TILE_VERSION(tile_panel_12, 12, 1, MR)  /* packed panels... */
TILE_VERSION(tile_panel_8, 8, 1, MR)    /* ...the bottom edge, 8 rows or fewer */
TILE_VERSION(tile_panel_4, 4, 1, MR)    /* ...4 rows or fewer */

static void kernel_avx512(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                          const float *b, float *c, ptrdiff_t ldc, int m, int n, float alpha,
                          float beta)
{
    qkv__gemm_kernel_fn *version = cs_a == 1    ? tile_rows_12
                                   : cs_a != MR ? tile_cols_12
                                   : m <= 4     ? tile_panel_4
                                   : m <= 8  ? tile_panel_8
                                             : tile_panel_12;
    version(kc, a, rs_a, cs_a, b, c, ldc, m, n, alpha, beta);
}

/* A transposed A in place at every width: on Zen 4, 80-84% of peak against
 * 73-78% packed for the lm head's and attention's TN products, and 94-95%
 * against 89-90% for the big ones (12 floats of a stored row a step). */
const qkv__gemm_path qkv__gemm_avx512 = {"avx512", MR, NR, kernel_avx512,
                                         qkv__gemm_avx512_pack_a, qkv__gemm_avx512_pack_b,
                                         qkv__gemm_avx512_dot, 1 << 30};

#endif
