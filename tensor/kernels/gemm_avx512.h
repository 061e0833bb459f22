/* Internal: what the AVX-512 kernel (gemm_avx512.c), its packing
 * (gemm_avx512_pack.c) and the bf16 GEMM's (gemm_bf16_avx512.c) share.
 * Include only where QKV__CPU_X86 is 1. */
#ifndef QKV_GEMM_AVX512_H
#define QKV_GEMM_AVX512_H

#include <immintrin.h>

#include "gemm_kernel.h"

/* Functions compiled for AVX-512 whatever the build flags; gemm.c calls them
 * only when the CPU has AVX-512F. */
#define AVX512 __attribute__((target("avx512f,fma")))
#define AVX512_INLINE static inline __attribute__((always_inline, target("avx512f,fma")))

/* The tile: 12 rows of A broadcast against 32 columns (two vectors) of B. */
enum { AVX512_MR = 12, AVX512_NR = 32 };

/* Lanes [0, n) of a 16-lane mask, n clamped to [0, 16]. */
AVX512_INLINE __mmask16 avx512_lanes(int n)
{
    return n <= 0 ? 0 : n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1);
}

/* The end of a tile of `rows` rows and nv vectors (16·nv columns): C[i][j] =
 * alpha·acc + beta·C[i][j] for i < m, j < n; beta·C added with one FMA when
 * fused, else multiplied and added apart (the bf16 GEMM rounds so, as its
 * portable path does). beta == 0: C is not read. */
AVX512_INLINE void avx512_store_tile(int rows, int nv, bool fused, __m512 acc[][2], float *c,
                                     ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    __mmask16 mask[2] = {avx512_lanes(n), avx512_lanes(n - 16)};
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++) {
        if (i >= m)
            break;
        float *ci = c + i * ldc;
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) {
            __m512 r = _mm512_mul_ps(va, acc[i][v]);
            if (beta != 0) { /* masked-off lanes are neither read nor written */
                __m512 old = _mm512_maskz_loadu_ps(mask[v], ci + 16 * v);
                r = fused ? _mm512_fmadd_ps(vb, old, r) : _mm512_add_ps(r, _mm512_mul_ps(vb, old));
            }
            _mm512_mask_storeu_ps(ci + 16 * v, mask[v], r);
        }
    }
}

/* Transpose the 16×16 block r (row i in r[i]) in place: unpack pairs of
 * rows, then pairs of pairs, then move 128-bit lanes across vectors. Any
 * 32-bit lanes: the bf16 packing (gemm_bf16_avx512.c) moves pair words. */
AVX512_INLINE void transpose16(__m512 r[16])
{
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* s[4q + c], 128-bit lane l: column 4l + c of rows 4q..4q+3 */
    __m512d s[16];
#pragma GCC unroll 4
    for (int i = 0; i < 16; i += 4)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            __m512d x = _mm512_castps_pd(t[i + h]), y = _mm512_castps_pd(t[i + h + 2]);
            s[i + 2 * h] = _mm512_unpacklo_pd(x, y);
            s[i + 2 * h + 1] = _mm512_unpackhi_pd(x, y);
        }
    /* row 4l + c of the result gathers lane l of s[c], s[4 + c], s[8 + c], s[12 + c] */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        __m512 s0 = _mm512_castpd_ps(s[c]), s1 = _mm512_castpd_ps(s[4 + c]);
        __m512 s2 = _mm512_castpd_ps(s[8 + c]), s3 = _mm512_castpd_ps(s[12 + c]);
        __m512 lo01 = _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(1, 0, 1, 0));
        __m512 hi01 = _mm512_shuffle_f32x4(s0, s1, _MM_SHUFFLE(3, 2, 3, 2));
        __m512 lo23 = _mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(1, 0, 1, 0));
        __m512 hi23 = _mm512_shuffle_f32x4(s2, s3, _MM_SHUFFLE(3, 2, 3, 2));
        r[c] = _mm512_shuffle_f32x4(lo01, lo23, _MM_SHUFFLE(2, 0, 2, 0));
        r[4 + c] = _mm512_shuffle_f32x4(lo01, lo23, _MM_SHUFFLE(3, 1, 3, 1));
        r[8 + c] = _mm512_shuffle_f32x4(hi01, hi23, _MM_SHUFFLE(2, 0, 2, 0));
        r[12 + c] = _mm512_shuffle_f32x4(hi01, hi23, _MM_SHUFFLE(3, 1, 3, 1));
    }
}

/* The path's packing (see the typedefs in gemm_kernel.h). */
void qkv__gemm_avx512_pack_a(qkv_real *dst, const qkv_real *a, int lda, bool trans, int m,
                             int kc, int mr);
void qkv__gemm_avx512_pack_b(qkv_real *dst, const qkv_real *b, int ldb, bool trans, int kc,
                             int n, int nr);

/* Its few-rows NT form (gemm_avx512_dot.c). */
qkv__gemm_dot_fn qkv__gemm_avx512_dot;

#endif
