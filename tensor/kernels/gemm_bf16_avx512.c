/* The bf16 GEMM's AVX512_BF16 path: a 12×32 tile of fp32 sums in 24 zmm
 * registers, fed by vdpbf16ps (_mm512_dpbf16_ps), which adds to each of 16
 * fp32 lanes the products of one pair of bf16 from each operand.
 *
 * Each pair of k steps loads one row of the B panel (two vectors of 16 pair
 * words) and, for each of the 12 rows, broadcasts the row's pair word of A
 * and does two vdpbf16ps: the fp32 kernel's register plan (gemm_avx512.c)
 * with twice the products per instruction. Packing rounds with vcvtne2ps2bf16
 * (to nearest even, NaN kept, subnormals flushed: the same bf16 as
 * qkv__bf16_round but for subnormals, which vdpbf16ps counts as zero anyway)
 * and lays the pairs out as the instruction reads them (gemm_bf16_kernel.h). */
#include "gemm_bf16_kernel.h"

#if QKV__CPU_X86
#include "gemm_avx512.h"

/* Compiled for AVX512_BF16 whatever the build flags; the driver calls them
 * only when the CPU has it (qkv__cpu_has_avx512_bf16). */
#define BF16 __attribute__((target("avx512f,avx512bw,avx512bf16,fma")))
#define BF16_INLINE static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512bf16,fma")))

enum { MR = QKV__GEMM_BF16_MR_MAX, NR = QKV__GEMM_BF16_NR_MAX };

/* How many steps of k ahead a transposed A's packing asks for its rows. */
enum { PREFETCH_STEPS = 4 };

/* 32 bf16 of hi's 16 floats (upper half) and lo's (lower half), as a vector of words. */
BF16_INLINE __m512i round_two(__m512 hi, __m512 lo)
{
    return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/* One word row of pairs across rows: word l holds src's rows p and p + 1 at
 * column l (row p + 1 zero when it is row kc), for lanes l in `lanes`, zero
 * elsewhere. For an untransposed B and a transposed A, whose rows are steps of k. */
BF16_INLINE __m512i pair_across(const float *src, int ld, __mmask16 lanes, int p, int kc)
{
    /* word l of the result takes bf16 l (row p) and bf16 16 + l (row p + 1) */
    const __m512i interleave = _mm512_set_epi16(
        31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4,
        19, 3, 18, 2, 17, 1, 16, 0);
    __m512 even = _mm512_maskz_loadu_ps(lanes, src + (size_t)p * ld);
    __m512 odd = p + 1 < kc ? _mm512_maskz_loadu_ps(lanes, src + (size_t)(p + 1) * ld)
                            : _mm512_setzero_ps();
    return _mm512_permutexvar_epi16(interleave, round_two(odd, even));
}

/* Pairs across rows: dst[q·ld_dst + l] = pair_across(src, …, 2q) for
 * q < ceil(kc/2); only the lanes in `width` of each dst row are written. */
BF16_INLINE void pack_rows(uint32_t *dst, int ld_dst, __mmask16 width, const float *src, int ld,
                           __mmask16 lanes, int kc)
{
    for (int p = 0; p < kc; p += 2)
        _mm512_mask_storeu_epi32(dst + (size_t)(p / 2) * ld_dst, width,
                                 pair_across(src, ld, lanes, p, kc));
}

/* Pairs along rows: dst[q·ld_dst + i] = the pair of src's row i at columns 2q
 * and 2q + 1 for rows i < rows (zero for the others, and for column kc), for
 * q < ceil(kc/2), 16 pairs at a time through a register transpose; only the
 * lanes in `width` of each dst row are written. For an untransposed A and a
 * transposed B, whose rows run along k. */
BF16_INLINE void pack_along(uint32_t *dst, int ld_dst, __mmask16 width, const float *src, int ld,
                            int rows, int kc)
{
    for (int p0 = 0; p0 < kc; p0 += 32) {
        __mmask16 lo = avx512_lanes(kc - p0), hi = avx512_lanes(kc - p0 - 16);
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            const float *row = src + (size_t)i * ld + p0;
            r[i] = i < rows ? _mm512_castsi512_ps(round_two(_mm512_maskz_loadu_ps(hi, row + 16),
                                                            _mm512_maskz_loadu_ps(lo, row)))
                            : _mm512_setzero_ps();
        }
        transpose16(r);
        const int pairs = (kc - p0 + 1) / 2;
#pragma GCC unroll 16
        for (int q = 0; q < 16; q++)
            if (q < pairs)
                _mm512_mask_storeu_epi32(dst + (size_t)(p0 / 2 + q) * ld_dst, width,
                                         _mm512_castps_si512(r[q]));
    }
}

/* A transposed is read a pair of k steps at a time across all m rows, panel
 * after panel: its rows lie lda floats apart, and a lda of a multiple of 1024
 * puts every row of one panel's walk down k in the same L1 set (the walk
 * would miss on every load). Untransposed, each panel's rows are read along k. */
static BF16 void pack_a(uint32_t *dst, const float *a, int lda, bool trans, int m, int kc,
                        int mr)
{
    (void)mr; /* always MR */
    const size_t panel = (size_t)(kc + 1) / 2 * MR;
    if (trans) {
        for (int p = 0; p < kc; p += 2)
            for (int r0 = 0; r0 < m; r0 += MR) {
                const int rows = m - r0 < MR ? m - r0 : MR;
                /* the pair two ahead: each row is on a page of its own, where the
                 * hardware's prefetchers do not follow (+5% on 4096x384x1536
                 * TN, +10% on 1536x384x4096, Zen 4) */
                if (p + PREFETCH_STEPS + 1 < kc) {
                    _mm_prefetch((const char *)(a + (size_t)(p + PREFETCH_STEPS) * lda + r0),
                                 _MM_HINT_T0);
                    _mm_prefetch((const char *)(a + (size_t)(p + PREFETCH_STEPS + 1) * lda + r0),
                                 _MM_HINT_T0);
                }
                _mm512_mask_storeu_epi32(dst + (size_t)(r0 / MR) * panel + (size_t)(p / 2) * MR,
                                         avx512_lanes(MR),
                                         pair_across(a + r0, lda, avx512_lanes(rows), p, kc));
            }
        return;
    }
    for (int r0 = 0; r0 < m; r0 += MR, dst += panel)
        pack_along(dst, MR, avx512_lanes(MR), a + (size_t)r0 * lda, lda, m - r0 < MR ? m - r0 : MR,
                   kc);
}

static BF16 void pack_b(uint32_t *dst, const float *b, int ldb, bool trans, int kc, int n, int nr)
{
    (void)nr; /* always NR: two halves of 16 columns */
    const size_t panel = (size_t)(kc + 1) / 2 * NR;
    for (int j0 = 0; j0 < n; j0 += NR, dst += panel)
        for (int h = 0; h < NR; h += 16) {
            int cols = n - j0 - h; /* of this half: none, some or all 16 */
            if (trans)
                pack_along(dst + h, NR, 0xFFFF, b + (size_t)(j0 + (cols > 0 ? h : 0)) * ldb, ldb,
                           cols, kc);
            else
                pack_rows(dst + h, NR, 0xFFFF, b + j0 + (cols > 0 ? h : 0), ldb,
                          avx512_lanes(cols), kc);
        }
}

/* The tile with `rows` rows and nv vectors (16·nv columns), both known at the
 * call site so that every loop unrolls into registers. */
BF16_INLINE void tile(int rows, int nv, int kp, const uint32_t *a, const uint32_t *b, float *c,
                      ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < rows; i++)
        acc[i][0] = acc[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int q = 0; q < kp; q++, a += MR, b += NR) {
        __m512bh b0 = (__m512bh)_mm512_load_si512(b);
        __m512bh b1 = nv > 1 ? (__m512bh)_mm512_load_si512(b + 16) : b0;
#pragma GCC unroll 12
        for (int i = 0; i < rows; i++) {
            __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[i]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            if (nv > 1)
                acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
    }
    avx512_store_tile(rows, nv, false, acc, c, ldc, m, n, alpha, beta);
}

/* The tile's versions: 12 rows, or 8 or 4 at the bottom edge, or 1 (a
 * generated token's row: no products for rows that are not there); two
 * vectors of columns, or one at the right edge. */
static BF16 void kernel(int kp, const uint32_t *a, const uint32_t *b, float *c, ptrdiff_t ldc,
                        int m, int n, float alpha, float beta)
{
#define TILE(rows, nv) tile(rows, nv, kp, a, b, c, ldc, m, n, alpha, beta)
    if (n > 16)
        m > 8 ? TILE(12, 2) : m > 4 ? TILE(8, 2) : m > 1 ? TILE(4, 2) : TILE(1, 2);
    else
        m > 8 ? TILE(12, 1) : m > 4 ? TILE(8, 1) : m > 1 ? TILE(4, 1) : TILE(1, 1);
#undef TILE
}

const qkv__gemm_bf16_kernel qkv__gemm_bf16_avx512 = {MR, NR, kernel, pack_a, pack_b};

#endif
