/* Packing for the AVX2 kernel (gemm_avx2.c), with whole-vector loads and
 * stores; what must be transposed on the way (a transposed B, as in the NT
 * form Q·Kᵀ, and the bottom-edge rows of an untransposed A) goes through 8×8
 * register transposes rather than element by element: for the small
 * attention products packing is a large share of the work. The same values
 * as the plain C packing (gemm_pack.c), so the products are unchanged. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx2.h"

enum { MR = AVX2_MR, NR = AVX2_NR };

/* Transpose the 8×8 block r (row i in r[i]) in place. */
AVX2_INLINE void transpose8(__m256 r[8])
{
    __m256 t[8], s[8];
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (int i = 0; i < 8; i += 4) {
        s[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
}

/* Lanes [0, width) of v to dst, width 6 or 8: plain stores, not a masked
 * one (vmaskmovps to memory is slow, on Zen 3 very). */
AVX2_INLINE void store_lanes(float *dst, int width, __m256 v)
{
    if (width == 8) {
        _mm256_storeu_ps(dst, v);
    } else { /* 6: four, then two */
        _mm_storeu_ps(dst, _mm256_castps256_ps128(v));
        _mm_storel_pi((__m64 *)(dst + 4), _mm256_extractf128_ps(v, 1));
    }
}

/* dst[p·ld_dst + i] = src[i·ld_src + p] for p < kc and lanes i < 8 (zero for
 * rows ≥ rows of src), 8 steps of p at a time through a register transpose;
 * only the first `width` (6 or 8) lanes of each dst row are written. */
AVX2_INLINE void transpose_pack(float *dst, int ld_dst, int width, const float *src, int ld_src,
                                int rows, int kc)
{
    for (int p0 = 0; p0 < kc; p0 += 8) {
        __m256i valid = avx2_lanes(kc - p0);
        __m256 r[8];
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++)
            r[i] = i < rows ? _mm256_maskload_ps(src + (size_t)i * ld_src + p0, valid)
                            : _mm256_setzero_ps();
        transpose8(r);
#pragma GCC unroll 8
        for (int p = 0; p < 8; p++)
            if (p0 + p < kc)
                store_lanes(dst + (size_t)(p0 + p) * ld_dst, width, r[p]);
    }
}

AVX2 void qkv__gemm_avx2_pack_a(float *dst, const float *a, int lda, bool trans, int m, int kc,
                                int mr)
{
    (void)mr; /* always MR */
    const int panels = (m + MR - 1) / MR;
    if (!trans) {
        for (int r = 0; r < panels; r++)
            transpose_pack(dst + (size_t)r * kc * MR, MR, MR, a + (size_t)r * MR * lda, lda,
                           m - r * MR < MR ? m - r * MR : MR, kc);
        return;
    }
    /* op(A)'s column p is row p of the stored A: read it in order, 6 floats per
     * panel (8 loaded where all 8 are in the row, else the rest masked). */
    for (int p = 0; p < kc; p++)
        for (int r = 0; r < panels; r++) {
            const float *src = a + (size_t)p * lda + r * MR;
            __m256 v = r * MR + 8 <= m ? _mm256_loadu_ps(src)
                                       : _mm256_maskload_ps(src, avx2_lanes(m - r * MR));
            store_lanes(dst + ((size_t)r * kc + p) * MR, MR, v);
        }
}

AVX2 void qkv__gemm_avx2_pack_b(float *dst, const float *b, int ldb, bool trans, int kc, int n,
                                int nr)
{
    (void)nr; /* always NR */
    for (int j0 = 0; j0 < n; j0 += NR, dst += (size_t)kc * NR) {
        int w = n - j0 < NR ? n - j0 : NR;
        if (trans) {
            const float *panel = b + (size_t)j0 * ldb;
            /* op(B)'s column j is stored row j: 8 rows at a time become panel rows */
            transpose_pack(dst, NR, 8, panel, ldb, w, kc);
            const float *right = w > 8 ? panel + (size_t)8 * ldb : panel; /* none: zeros */
            transpose_pack(dst + 8, NR, 8, right, ldb, w - 8, kc);
        } else {
            __m256i lo = avx2_lanes(w), hi = avx2_lanes(w - 8);
            for (int p = 0; p < kc; p++) {
                const float *row = b + (size_t)p * ldb + j0;
                _mm256_store_ps(dst + (size_t)p * NR, _mm256_maskload_ps(row, lo));
                _mm256_store_ps(dst + (size_t)p * NR + 8, _mm256_maskload_ps(row + 8, hi));
            }
        }
    }
}

#endif
