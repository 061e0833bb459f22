/* The bf16 GEMM's ARM BF16 path: an 8×12 tile of fp32 sums in 24 NEON
 * registers, fed by BFDOT (vbfdotq_laneq_f32), which adds to each of 4 fp32
 * lanes the products of one pair of bf16 from each operand.
 *
 * BFDOT and not BFMMLA: BFDOT reads the pairs as the packing contract lays
 * them out (gemm_bf16_kernel.h: a word per row or column per pair, as
 * vdpbf16ps reads them), so the driver and the portable packing serve it
 * unchanged, and an odd number of pairs needs nothing. BFMMLA (a 2×4 by 4×2
 * block per instruction, twice BFDOT's products on cores such as Neoverse V1)
 * wants two pairs of two rows in one vector and leaves C in 2×2 blocks: a
 * packing and a store of its own. The register plan is the fp32 NEON
 * kernel's (gemm_neon.c): each pair loads one row of the B panel (three
 * vectors of 4 pair words) and two vectors of A's 8 pair words, and each
 * BFDOT takes its row's pair by lane.
 *
 * What it sums (FEAT_BF16's BFDOT; the FPCR.EBF of FEAT_EBF16 is left at 0):
 * for each pair, its two products (exact in fp32) added, that sum added to
 * the running one, both additions rounded to odd, subnormal inputs and
 * results counted as zero, and a NaN the default NaN. So it is not the other
 * paths' bits (vdpbf16ps adds the two products one at a time, rounding to
 * nearest even), but within float rounding of them, in the same order of
 * pairs: the same bits at any thread count. Packing rounds with
 * qkv__bf16_round, the portable path's. */
#include "gemm_bf16_kernel.h"

#if QKV__CPU_AARCH64
#include <arm_neon.h>
#include <math.h>

/* Compiled for BF16 whatever the build flags (arm_neon.h declares BFDOT under
 * this arch); the driver calls the kernel only when the CPU has it
 * (qkv__cpu_has_arm_bf16). */
#define BF16_INLINE static inline __attribute__((always_inline, target("arch=armv8.2-a+bf16")))
#define BF16 __attribute__((target("arch=armv8.2-a+bf16")))

enum { MR = 8, NR = 12, NV = NR / 4 };

/* acc[i][v] += the dot of b[v]'s pairs with lane `lane` of a (row i's pair). */
#define ROW_DOT(i, a, lane)                                                                    \
    do {                                                                                       \
        acc[i][0] = vbfdotq_laneq_f32(acc[i][0], b[0], a, lane);                               \
        acc[i][1] = vbfdotq_laneq_f32(acc[i][1], b[1], a, lane);                               \
        acc[i][2] = vbfdotq_laneq_f32(acc[i][2], b[2], a, lane);                               \
    } while (0)

/* 4 pair words as a vector of 8 bf16 (the low half of each word first). */
BF16_INLINE bfloat16x8_t load_pairs(const uint32_t *w)
{
    return vreinterpretq_bf16_u32(vld1q_u32(w));
}

/* The tile: the whole 8×12 block is summed (the packed panels are zero past
 * m and n); only rows [0, m) × columns [0, n) of C are written. */
static BF16 void kernel(int kp, const uint32_t *a, const uint32_t *b_panel, float *c,
                        ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    float32x4_t acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        acc[i][0] = acc[i][1] = acc[i][2] = vdupq_n_f32(0);
    for (int q = 0; q < kp; q++, a += MR, b_panel += NR) {
        const bfloat16x8_t b[NV] = {load_pairs(b_panel), load_pairs(b_panel + 4),
                                    load_pairs(b_panel + 8)};
        const bfloat16x8_t lo = load_pairs(a), hi = load_pairs(a + 4);
        ROW_DOT(0, lo, 0);
        ROW_DOT(1, lo, 1);
        ROW_DOT(2, lo, 2);
        ROW_DOT(3, lo, 3);
        ROW_DOT(4, hi, 0);
        ROW_DOT(5, hi, 1);
        ROW_DOT(6, hi, 2);
        ROW_DOT(7, hi, 3);
    }
    if (m == MR && n == NR) {
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
            for (int v = 0; v < NV; v++) {
                float *cv = c + i * ldc + 4 * v;
                float32x4_t r = vmulq_n_f32(acc[i][v], alpha);
                vst1q_f32(cv, beta == 0 ? r : vfmaq_n_f32(r, vld1q_f32(cv), beta));
            }
        return;
    }
    /* An edge tile: each element as above, alpha's product rounded and beta's
     * fused into it (VFMA), so it rounds as it would inside the matrix, where
     * another thread split may put it. */
    float sum[MR][NR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++)
            vst1q_f32(&sum[i][4 * v], acc[i][v]);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j, r = alpha * sum[i][j];
            *cij = beta == 0 ? r : fmaf(*cij, beta, r);
        }
}

/* The portable path's packing (plain C, qkv__bf16_round), at this path's tile. */
static void pack_a(uint32_t *dst, const float *a, int lda, bool trans, int m, int kc, int mr)
{
    qkv__gemm_bf16_portable.pack_a(dst, a, lda, trans, m, kc, mr);
}

static void pack_b(uint32_t *dst, const float *b, int ldb, bool trans, int kc, int n, int nr)
{
    qkv__gemm_bf16_portable.pack_b(dst, b, ldb, trans, kc, n, nr);
}

const qkv__gemm_bf16_kernel qkv__gemm_bf16_neon = {MR, NR, kernel, pack_a, pack_b};

#endif
