/* Internal: bf16 (bfloat16) numbers and the matrix product that multiplies
 * them into fp32 sums. Not installed; the model's products run through it
 * when the precision is bf16 (qkv/precision.h, gemm_mixed.h).
 *
 * bf16 is the top half of an fp32: its sign, its 8-bit exponent (so the same
 * range) and 7 of its 23 stored significand bits. A product of two bf16 fits
 * an fp32 exactly, which is what lets a CPU without bf16 instructions give the
 * numbers of one with them: round the inputs to bf16, multiply in fp32, add
 * in the same order.
 *
 * The bf16 GEMM has paths of its own, chosen at run time (qkv__gemm_bf16_path):
 * AVX512_BF16 where the active vector path (cpu.h) is avx512 and the CPU has
 * it, ARM BF16 (bfdot) where it is neon and the CPU has FEAT_BF16, AVX2's
 * FMA on the portable kernel's arithmetic where the path is avx2 or avx512
 * without AVX512_BF16, the portable one everywhere else. A later path gets
 * its own entry: AMX-BF16 (Intel's tiles, after the Linux permission request
 * arch_prctl(ARCH_REQ_XCOMP_PERM)). */
#ifndef QKV_GEMM_BF16_H
#define QKV_GEMM_BF16_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* A bf16 number: the upper 16 bits of the fp32 it stands for. */
typedef uint16_t qkv__bf16;

/* x rounded to bf16, to nearest with ties to even. Subnormals round like any
 * other number (bf16 has fp32's exponents), values past the largest bf16 by
 * half a step or more become ±inf, and a NaN stays a NaN: its sign and upper
 * payload bits kept, quieted (the carry of rounding could otherwise turn a
 * NaN's payload into infinity's zero). */
static inline qkv__bf16 qkv__bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (qkv__bf16)(u >> 16 | 0x0040u);
    /* adding 0x7FFF carries into bit 16 exactly when the lower half is past
     * half a step; the kept bit's parity makes the tie go to the even side */
    return (qkv__bf16)((u + 0x7FFFu + (u >> 16 & 1)) >> 16);
}

/* The fp32 value of a bf16 (exact). */
static inline float qkv__bf16_float(qkv__bf16 h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The bf16 GEMM's paths, fastest first. Not yet written, to come as an entry
 * here, a case in qkv__gemm_bf16_supported and a kernel of its own
 * (gemm_bf16_kernel.h): AMX-BF16 before AVX512_BF16. */
typedef enum qkv__bf16_path {
    QKV__BF16_AVX512,   /* AVX512_BF16's vdpbf16ps on zmm: 32 products per instruction */
    QKV__BF16_NEON,     /* ARM BF16's bfdot on NEON vectors: 8 products per instruction */
    QKV__BF16_AVX2,     /* AVX2's FMA on bf16 widened to fp32: the portable path's numbers */
    QKV__BF16_PORTABLE, /* plain C: rounds to bf16, multiplies and adds in fp32 */
    QKV__BF16_N_PATHS
} qkv__bf16_path;

/* "avx512_bf16", "neon_bf16", "avx2", "portable"; NULL for an id out of range. */
const char *qkv__gemm_bf16_name(int path);

/* Whether this CPU (and build) can run path. */
bool qkv__gemm_bf16_supported(int path);

/* The path qkv__gemm_bf16 uses now: the forced one, else AVX512_BF16 when
 * the active vector path is avx512 and the CPU has it, ARM BF16 when it is
 * neon and the CPU has that, AVX2 when it is avx512 or avx2, else portable. */
qkv__bf16_path qkv__gemm_bf16_path(void);

/* Make qkv__gemm_bf16 use path (-1: back to following the vector path). -1
 * when path is out of range or the CPU lacks it. Not thread-safe: call it
 * while no product runs. */
int qkv__gemm_bf16_force(int path);

/* qkv__gemm_bf16_force by name: -1 with a message (qkv_last_error) naming
 * what is missing when name is unknown or this CPU cannot run it; name NULL
 * or "" follows the vector path. `what` starts the message ("--bf16 "). */
int qkv__gemm_bf16_use(const char *what, const char *name);

/* C = alpha·op(A)·op(B) + beta·C as qkv__gemm (gemm.h, batch 1), but every
 * element of op(A) and op(B) rounded to bf16 (qkv__bf16_round) first and the
 * products summed in fp32, over k in the same order on every path and thread
 * count: blocks of KC steps, within each a running sum taking, for each pair
 * of steps (2q, 2q + 1) from the block's start, 2q + 1's product and then
 * 2q's (the order of vdpbf16ps). The AVX512_BF16 path counts bf16 subnormals
 * as zero, inputs and sums alike (the instruction does); the portable path
 * keeps them. The ARM BF16 path (BFDOT without FEAT_EBF16's FPCR.EBF) adds
 * each pair's two products first and then that sum, rounding both to odd and
 * counting subnormals as zero: within float rounding of the others, not
 * their bits, but the same bits at any thread count. beta == 0 ignores C's old values; alpha == 0 or K == 0 reads
 * neither A nor B. Parallel with OpenMP. */
void qkv__gemm_bf16(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A,
                    int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* batch products of qkv__gemm_bf16, the b-th at A + b·stride_a, B + b·stride_b
 * and C + b·stride_c: products too small to split run one per thread. */
void qkv__gemm_bf16_batch(int batch, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                          const float *A, int lda, size_t stride_a, const float *B, int ldb,
                          size_t stride_b, float beta, float *C, int ldc, size_t stride_c);

/* qkv__gemm_bf16 where B is a parameter's values (a weight): while a
 * generation holds weights on this thread (gemm_bf16_held.h), op(B) is
 * packed once and every later product reads that copy; the same bits. */
void qkv__gemm_bf16_weight(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                           const float *A, int lda, const float *B, int ldb, float beta, float *C,
                           int ldc);

#endif
