/* The bf16 GEMM's portable path: packing that rounds with qkv__bf16_round and
 * a plain C micro-kernel that multiplies the bf16 in fp32. Each product of two
 * bf16 is exact in fp32, so the only rounding is each addition's, the same as
 * vdpbf16ps's: in the same order this path gives the AVX512_BF16 path's
 * numbers (but for subnormals, which that path counts as zero). It is also the
 * double build's and aarch64's path. */
#include "gemm_bf16_kernel.h"

enum { MR = 4, NR = 16 };

/* The word of bf16 pair (lo, hi): lo in the low half. */
static uint32_t pair(float lo, float hi)
{
    return (uint32_t)qkv__bf16_round(lo) | (uint32_t)qkv__bf16_round(hi) << 16;
}

/* Element (r, p) of op(X), X stored with row pitch ld, transposed or not. */
static float op_at(const float *x, int ld, bool trans, int r, int p)
{
    return trans ? x[(size_t)p * ld + r] : x[(size_t)r * ld + p];
}

/* Pack `count` rows (or columns) of op(X) in panels of `width`: word (r, q)
 * of panel r / width at [q·width + r % width], zero past `count` and past kc.
 * op(X)(r, p) is X's element along r and step p (op_at with trans). */
static void pack_pairs(uint32_t *dst, const float *x, int ld, bool trans, int count, int kc,
                       int width)
{
    const int kp = (kc + 1) / 2;
    for (int r0 = 0; r0 < count; r0 += width, dst += (size_t)kp * width)
        for (int q = 0; q < kp; q++)
            for (int r = 0; r < width; r++) {
                float lo = 0, hi = 0;
                if (r0 + r < count) {
                    lo = op_at(x, ld, trans, r0 + r, 2 * q);
                    hi = 2 * q + 1 < kc ? op_at(x, ld, trans, r0 + r, 2 * q + 1) : 0;
                }
                dst[(size_t)q * width + r] = pair(lo, hi);
            }
}

void qkv__gemm_bf16_pack_a(uint32_t *dst, const float *a, int lda, bool trans, int m, int kc,
                           int mr)
{
    pack_pairs(dst, a, lda, trans, m, kc, mr);
}

/* op(B)'s column j is op(Bᵀ)'s row j: a transposed B is packed like an
 * untransposed A and the other way round. */
void qkv__gemm_bf16_pack_b(uint32_t *dst, const float *b, int ldb, bool trans, int kc, int n,
                           int nr)
{
    pack_pairs(dst, b, ldb, !trans, n, kc, nr);
}

/* The halves of a pair word as fp32. */
static float low_half(uint32_t w) { return qkv__bf16_float((qkv__bf16)(w & 0xFFFF)); }
static float high_half(uint32_t w) { return qkv__bf16_float((qkv__bf16)(w >> 16)); }

static void kernel(int kp, const uint32_t *a, const uint32_t *b, float *c, ptrdiff_t ldc, int m,
                   int n, float alpha, float beta)
{
    float acc[MR][NR] = {{0}};
    for (int q = 0; q < kp; q++, a += MR, b += NR)
#pragma GCC unroll 4
        for (int i = 0; i < MR; i++) {
            const float ahi = high_half(a[i]), alo = low_half(a[i]);
            for (int j = 0; j < NR; j++) { /* left for the compiler to vectorize */
                acc[i][j] += ahi * high_half(b[j]);
                acc[i][j] += alo * low_half(b[j]);
            }
        }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float *cij = c + i * ldc + j;
            *cij = beta == 0 ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cij;
        }
}

const qkv__gemm_bf16_kernel qkv__gemm_bf16_portable = {MR, NR, kernel, qkv__gemm_bf16_pack_a,
                                                       qkv__gemm_bf16_pack_b};
