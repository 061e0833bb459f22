/* The bf16 GEMM on a CPU with AVX2 and FMA but no bf16 instructions (AMD
 * Zen 3, Intel before Cooper Lake, and any avx2 path): the portable kernel's
 * arithmetic, vectorized. Each pair word holds two bf16; the high one as an
 * fp32 is the word with its low half cleared, the low one the word shifted up
 * by 16, so a pair costs two FMAs a lane where AVX512_BF16 spends one
 * vdpbf16ps: about the fp32 kernel's speed, not twice it. A product of two
 * bf16 is exact in fp32, so an FMA rounds once, as the portable kernel's
 * multiply-then-add does: each sum adds the pair's high product and then its
 * low one, as there, and gives its bits (subnormals included, which
 * AVX512_BF16 counts as zero). Packing: where a pair's two steps are two
 * rows of the stored matrix (an untransposed B, a transposed A) eight
 * columns round at a time here; where they sit side by side in a row, the
 * portable path's plain C does it (the same layout, the same rounding). */
#include "gemm_bf16_kernel.h"

#include <string.h>

#if QKV__CPU_X86
#include "gemm_avx2.h"

enum { MR = 6, NR = 16 };

/* The high bf16 of each pair word as fp32: the word with its low half
 * cleared, by two shifts (a mask would take a 16th register from the tile). */
AVX2_INLINE __m256 high_halves(__m256i w)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(w, 16), 16));
}

/* The low bf16 of each pair word as fp32: the word shifted up by 16. */
AVX2_INLINE __m256 low_halves(__m256i w) { return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)); }

/* Each lane rounded to bf16 as qkv__bf16_round does, left in its upper half
 * (the lower half zero): ties to even by the kept bit's parity, a NaN
 * quieted and never carried into infinity. */
AVX2_INLINE __m256i round_lanes(__m256 x)
{
    const __m256i u = _mm256_castps_si256(x);
    const __m256i parity = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), parity));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)),
                                           _mm256_set1_epi32(0x7F800000));
    const __m256i quiet = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));
    return _mm256_and_si256(_mm256_blendv_epi8(rounded, quiet, nan),
                            _mm256_set1_epi32((int)0xFFFF0000u));
}

/* The pair words of rows p and p + 1 of src (row p + 1 zero when it is row
 * kc) at the columns in `lanes` (zero elsewhere). */
AVX2_INLINE __m256i pair_across(const float *src, int ld, __m256i lanes, int p, int kc)
{
    __m256i even = round_lanes(_mm256_maskload_ps(src + (size_t)p * ld, lanes));
    __m256i odd = p + 1 < kc ? round_lanes(_mm256_maskload_ps(src + (size_t)(p + 1) * ld, lanes))
                             : _mm256_setzero_si256();
    return _mm256_or_si256(_mm256_srli_epi32(even, 16), odd);
}

/* Panels of `width` (6 or 16) words a pair, from `count` columns of src whose
 * rows are steps of k: for each pair of steps, across every panel (a
 * transposed A's rows lie lda apart, and walking one panel down k would put
 * every load of a lda of a multiple of 1,024 in one L1 set). */
AVX2_INLINE void pack_across(uint32_t *dst, const float *src, int ld, int count, int kc,
                             int width)
{
    const size_t panel = (size_t)(kc + 1) / 2 * width;
    for (int p = 0; p < kc; p += 2)
        for (int c0 = 0; c0 < count; c0 += width) {
            uint32_t *row = dst + (size_t)(c0 / width) * panel + (size_t)(p / 2) * width;
            for (int h = 0; h < width; h += 8) { /* 8 words at a time, zero past count */
                const int cols = count - c0 - h;
                const __m256i words = pair_across(src + c0 + h, ld, avx2_lanes(cols), p, kc);
                _mm256_maskstore_epi32((int *)(row + h), avx2_lanes(width - h), words);
            }
        }
}

static AVX2 void pack_a(uint32_t *dst, const float *a, int lda, bool trans, int m, int kc, int mr)
{
    if (trans)
        pack_across(dst, a, lda, m, kc, MR);
    else
        qkv__gemm_bf16_pack_a(dst, a, lda, trans, m, kc, mr);
}

static AVX2 void pack_b(uint32_t *dst, const float *b, int ldb, bool trans, int kc, int n, int nr)
{
    if (trans)
        qkv__gemm_bf16_pack_b(dst, b, ldb, trans, kc, n, nr);
    else
        pack_across(dst, b, ldb, n, kc, NR);
}

/* One bf16 of a pair word as fp32 in every lane: the half broadcast to every
 * 16 bits (a load and a shuffle), then each lane shifted up by 16. Each
 * half is read from memory on its own (x86 is little-endian: the high half
 * at byte 2), so that the compiler does not keep a row's whole word in a
 * register between the two halves: 6 rows of them would push the
 * accumulators out of the 16 registers. */
AVX2_INLINE __m256 broadcast_half(const uint32_t *word, bool high)
{
    uint16_t h;
    memcpy(&h, (const char *)word + (high ? 2 : 0), sizeof h);
    return low_halves(_mm256_set1_epi16((short)h));
}

/* One half of every pair in B's row (w[0], w[1]) against the same half of
 * each of A's `rows` pair words, into acc: the high halves, or the low. */
AVX2_INLINE void half_step(int rows, int nv, bool high, const uint32_t *a, const __m256i w[2],
                           __m256 acc[][2])
{
    __m256 b0 = high ? high_halves(w[0]) : low_halves(w[0]);
    __m256 b1 = high ? high_halves(w[1]) : low_halves(w[1]);
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++) {
        __m256 ai = broadcast_half(&a[i], high);
        acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
        if (nv > 1)
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
}

/* The tile with `rows` rows and nv vectors (8·nv columns), both known at the
 * call site so that every loop unrolls into registers. C = alpha·acc +
 * beta·C with the portable kernel's two roundings (no FMA): its bits. */
AVX2_INLINE void tile(int rows, int nv, int kp, const uint32_t *a, const uint32_t *b, float *c,
                      ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    __m256 acc[MR][2];
#pragma GCC unroll 6
    for (int i = 0; i < rows; i++)
        acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int q = 0; q < kp; q++, a += MR, b += NR) {
        const __m256i w[2] = {_mm256_loadu_si256((const __m256i *)b),
                              _mm256_loadu_si256((const __m256i *)(b + 8))};
        half_step(rows, nv, true, a, w, acc);
        half_step(rows, nv, false, a, w, acc);
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    __m256i mask[2] = {avx2_lanes(n), avx2_lanes(n - 8)};
#pragma GCC unroll 6
    for (int i = 0; i < rows && i < m; i++) {
        float *ci = c + i * ldc;
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) {
            /* plain loads and stores where the vector is whole: a masked
             * store is slow (on Zen 3 very); masked-off lanes are neither
             * read nor written */
            const bool whole = n >= 8 * (v + 1);
            __m256 r = _mm256_mul_ps(va, acc[i][v]);
            if (beta != 0)
                r = _mm256_add_ps(r, _mm256_mul_ps(vb, whole ? _mm256_loadu_ps(ci + 8 * v)
                                                             : _mm256_maskload_ps(ci + 8 * v,
                                                                                  mask[v])));
            if (whole)
                _mm256_storeu_ps(ci + 8 * v, r);
            else
                _mm256_maskstore_ps(ci + 8 * v, mask[v], r);
        }
    }
}

/* The tile's versions: 6 rows, or 4, 2 or 1 at the bottom edge (1: a
 * generated token's row); two vectors of columns, or one at the right edge. */
static AVX2 void kernel(int kp, const uint32_t *a, const uint32_t *b, float *c, ptrdiff_t ldc,
                        int m, int n, float alpha, float beta)
{
#define TILE(rows, nv) tile(rows, nv, kp, a, b, c, ldc, m, n, alpha, beta)
    if (n > 8)
        m > 4 ? TILE(6, 2) : m > 2 ? TILE(4, 2) : m > 1 ? TILE(2, 2) : TILE(1, 2);
    else
        m > 4 ? TILE(6, 1) : m > 2 ? TILE(4, 1) : m > 1 ? TILE(2, 1) : TILE(1, 1);
#undef TILE
}

const qkv__gemm_bf16_kernel qkv__gemm_bf16_avx2 = {MR, NR, kernel, pack_a, pack_b};

#endif
