/* Packing for the AVX-512 kernel, with whole-vector loads and stores. What
 * must be transposed on the way (a transposed B, as in the NT form Q·Kᵀ, and
 * the bottom-edge rows of an untransposed A) goes through 16×16 register
 * transposes rather than element by element: for the small attention
 * products packing is a large share of the work. */
#include "gemm_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx512.h"

enum { MR = AVX512_MR, NR = AVX512_NR };

/* dst[p·ld_dst + i] = src[i·ld_src + p] for p < kc and lanes i < 16 (zero
 * for rows ≥ rows of src), 16 steps of p at a time through a register
 * transpose; only the lanes in `width` of each dst row are written. */
AVX512_INLINE void transpose_pack(float *dst, int ld_dst, __mmask16 width, const float *src,
                                  int ld_src, int rows, int kc)
{
    for (int p0 = 0; p0 < kc; p0 += 16) {
        __mmask16 valid = avx512_lanes(kc - p0);
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            r[i] = i < rows ? _mm512_maskz_loadu_ps(valid, src + (size_t)i * ld_src + p0)
                            : _mm512_setzero_ps();
        transpose16(r);
#pragma GCC unroll 16
        for (int p = 0; p < 16; p++)
            if (p0 + p < kc)
                _mm512_mask_storeu_ps(dst + (size_t)(p0 + p) * ld_dst, width, r[p]);
    }
}

AVX512 void qkv__gemm_avx512_pack_a(float *dst, const float *a, int lda, bool trans, int m,
                                    int kc, int mr)
{
    (void)mr; /* always MR */
    const int panels = (m + MR - 1) / MR;
    if (!trans) {
        for (int r = 0; r < panels; r++)
            transpose_pack(dst + (size_t)r * kc * MR, MR, avx512_lanes(MR),
                           a + (size_t)r * MR * lda, lda, m - r * MR < MR ? m - r * MR : MR, kc);
        return;
    }
    /* op(A)'s column p is row p of the stored A: read it in order, 12 floats
     * per panel. The rows are far apart, so ask for a later row's lines ahead. */
    enum { AHEAD = 8 };
    for (int p = 0; p < kc; p++) {
        if (p + AHEAD < kc)
            for (int i = 0; i < m; i += 16)
                _mm_prefetch((const char *)(a + (size_t)(p + AHEAD) * lda + i), _MM_HINT_T0);
        for (int r = 0; r < panels; r++)
            _mm512_mask_storeu_ps(dst + ((size_t)r * kc + p) * MR, avx512_lanes(MR),
                                  _mm512_maskz_loadu_ps(avx512_lanes(m - r * MR),
                                                        a + (size_t)p * lda + r * MR));
    }
}

AVX512 void qkv__gemm_avx512_pack_b(float *dst, const float *b, int ldb, bool trans, int kc,
                                    int n, int nr)
{
    (void)nr; /* always NR */
    for (int j0 = 0; j0 < n; j0 += NR, dst += (size_t)kc * NR) {
        int w = n - j0 < NR ? n - j0 : NR;
        if (trans) {
            const float *panel = b + (size_t)j0 * ldb;
            /* op(B)'s column j is stored row j: 16 rows at a time become panel rows */
            transpose_pack(dst, NR, 0xFFFF, panel, ldb, w, kc);
            const float *right = w > 16 ? panel + (size_t)16 * ldb : panel; /* none: zeros */
            transpose_pack(dst + 16, NR, 0xFFFF, right, ldb, w - 16, kc);
        } else {
            __mmask16 lo = avx512_lanes(w), hi = avx512_lanes(w - 16);
            for (int p = 0; p < kc; p++) {
                const float *row = b + (size_t)p * ldb + j0;
                _mm512_store_ps(dst + (size_t)p * NR, _mm512_maskz_loadu_ps(lo, row));
                _mm512_store_ps(dst + (size_t)p * NR + 16, _mm512_maskz_loadu_ps(hi, row + 16));
            }
        }
    }
}

#endif
