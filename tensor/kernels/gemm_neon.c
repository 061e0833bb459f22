/* The NEON micro-kernel for aarch64: an 8×12 tile of C held in 24 of the
 * 32 128-bit vector registers.
 *
 * Each step p loads one row of the B panel (three 4-float vectors) and, for
 * each of the 8 rows, multiplies a(i, p) into all three with a fused
 * multiply-add (FMLA). 24 accumulators + 3 B vectors + 2 vectors of A = 29
 * registers, and 24 independent FMAs per step cover the FMA latency (4
 * cycles) on 2 to 4 FMA pipes. A packed panel keeps a(0..7, p) contiguous, so
 * it is two vector loads and FMLA by lane; rows of the stored A are eight
 * scalar loads (LD1R). NEON (Advanced SIMD) is part of every ARMv8-A CPU,
 * so there is nothing to test at run time. */
#include "gemm_kernel.h"

#if QKV__CPU_AARCH64
#include <arm_neon.h>
#include <string.h>

#define NEON_INLINE static inline __attribute__((always_inline))

enum { MR = 8, NR = 12, NV = NR / 4 };

/* acc[i][v] += a_i · b[v], where b holds row p of the B panel. */
#define ROW_FMA(i, a_i)                                                                       \
    do {                                                                                      \
        const float32x4_t ai_ = (a_i);                                                        \
        acc[i][0] = vfmaq_f32(acc[i][0], b[0], ai_);                                          \
        acc[i][1] = vfmaq_f32(acc[i][1], b[1], ai_);                                          \
        acc[i][2] = vfmaq_f32(acc[i][2], b[2], ai_);                                          \
    } while (0)

/* c[v] = alpha·acc[v] + beta·c[v] for one row of NR values (beta == 0: c is not read). */
NEON_INLINE void store_row(float *c, const float32x4_t acc[NV], float alpha, float beta)
{
#pragma GCC unroll 3
    for (int v = 0; v < NV; v++) {
        float32x4_t r = vmulq_n_f32(acc[v], alpha);
        if (beta != 0)
            r = vfmaq_n_f32(r, vld1q_f32(c + 4 * v), beta);
        vst1q_f32(c + 4 * v, r);
    }
}

/* The tile, A's layout known at the call site: a packed panel (rs_a = 1,
 * cs_a = MR) or MR full rows of the stored A (cs_a = 1). Every loop over the
 * accumulators is unrolled, so that they stay in registers throughout. */
NEON_INLINE void tile(bool packed, int kc, const float *a, ptrdiff_t rs_a, const float *b_panel,
                      float *c, ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    float32x4_t acc[MR][NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        acc[i][0] = acc[i][1] = acc[i][2] = vdupq_n_f32(0);
    for (int p = 0; p < kc; p++, a += packed ? MR : 1, b_panel += NR) {
        const float32x4_t b[NV] = {vld1q_f32(b_panel), vld1q_f32(b_panel + 4),
                                   vld1q_f32(b_panel + 8)};
        if (packed) { /* a(0..7, p) contiguous: two loads, and FMLA by lane */
            const float32x4_t lo = vld1q_f32(a), hi = vld1q_f32(a + 4);
            ROW_FMA(0, vdupq_laneq_f32(lo, 0));
            ROW_FMA(1, vdupq_laneq_f32(lo, 1));
            ROW_FMA(2, vdupq_laneq_f32(lo, 2));
            ROW_FMA(3, vdupq_laneq_f32(lo, 3));
            ROW_FMA(4, vdupq_laneq_f32(hi, 0));
            ROW_FMA(5, vdupq_laneq_f32(hi, 1));
            ROW_FMA(6, vdupq_laneq_f32(hi, 2));
            ROW_FMA(7, vdupq_laneq_f32(hi, 3));
        } else { /* one scalar load per row */
#pragma GCC unroll 8
            for (int i = 0; i < MR; i++)
                ROW_FMA(i, vld1q_dup_f32(a + i * rs_a));
        }
    }
    if (m == MR && n == NR) {
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++)
            store_row(c + i * ldc, acc[i], alpha, beta);
        return;
    }
    /* An edge tile: the same arithmetic on a copy of each row, so each element
     * rounds as it would inside the matrix; only columns [0, n) are copied back. */
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++) {
        if (i >= m)
            break;
        float row[NR] = {0};
        if (beta != 0)
            memcpy(row, c + i * ldc, (size_t)n * sizeof *row);
        store_row(row, acc[i], alpha, beta);
        memcpy(c + i * ldc, row, (size_t)n * sizeof *row);
    }
}

static void kernel_neon(int kc, const float *a, ptrdiff_t rs_a, ptrdiff_t cs_a, const float *b,
                        float *c, ptrdiff_t ldc, int m, int n, float alpha, float beta)
{
    if (cs_a == 1) /* rows of the stored A */
        tile(false, kc, a, rs_a, b, c, ldc, m, n, alpha, beta);
    else /* a packed panel */
        tile(true, kc, a, 1, b, c, ldc, m, n, alpha, beta);
}

const qkv__gemm_path qkv__gemm_neon = {"neon", MR, NR, kernel_neon, qkv__gemm_pack_a,
                                       qkv__gemm_pack_b, qkv__gemm_neon_dot, 0};

#endif
