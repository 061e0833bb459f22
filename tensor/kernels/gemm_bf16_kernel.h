/* Internal: what the bf16 GEMM's driver (gemm_bf16.c) and its paths' packing
 * and micro-kernels agree on.
 *
 * Operands are packed as words of two bf16: the word for steps (2q, 2q + 1)
 * of k holds step 2q's bf16 in its low half and 2q + 1's in its high half
 * (zero past the block's last step), as vdpbf16ps reads them.
 *   - A: ceil(m/mr) panels of kp·mr words (kp = ceil(kc/2) pairs), panel r at
 *     dst + r·kp·mr holding row r·mr + i's pair q at [q·mr + i], 0 past row m;
 *   - B: ceil(n/nr) panels of kp·nr words, panel s at dst + s·kp·nr holding
 *     column s·nr + j's pair q at [q·nr + j], 0 past column n; dst is
 *     QKV_ALIGN-aligned and nr·4 bytes a multiple of it on AVX512_BF16 (its
 *     aligned loads; ARM BF16's 12 columns are 48 bytes: it loads unaligned).
 * The kernel then does C[i][j] = alpha·Σ_q (a(i,q)·b(q,j)) + beta·C[i][j] for
 * i < m ≤ mr, j < n ≤ nr, the sum in fp32 starting at 0, each pair adding its
 * high halves' product and then its low halves' (beta == 0: C is not read);
 * on the ARM BF16 path, each pair's two products added first and that sum
 * then to the running one, rounded to odd (BFDOT: gemm_bf16_neon.c). */
#ifndef QKV_GEMM_BF16_KERNEL_H
#define QKV_GEMM_BF16_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"
#include "gemm_bf16.h"

/* One mr×nr tile of C from kp pairs of a packed A panel and a packed B panel. */
typedef void qkv__gemm_bf16_kernel_fn(int kp, const uint32_t *a, const uint32_t *b, float *c,
                                      ptrdiff_t ldc, int m, int n, float alpha, float beta);

/* Pack op(A)'s rows [0, m) × steps [0, kc) in mr-row panels; op(A)(i, p) is
 * a[p·lda + i] when trans, else a[i·lda + p]. */
typedef void qkv__gemm_bf16_pack_a_fn(uint32_t *dst, const float *a, int lda, bool trans, int m,
                                      int kc, int mr);

/* Pack op(B)'s steps [0, kc) × columns [0, n) in nr-column panels; op(B)(p, j)
 * is b[j·ldb + p] when trans, else b[p·ldb + j]. */
typedef void qkv__gemm_bf16_pack_b_fn(uint32_t *dst, const float *b, int ldb, bool trans, int kc,
                                      int n, int nr);

/* A path: its tile, its micro-kernel and its packing. */
typedef struct qkv__gemm_bf16_kernel {
    int mr, nr;                       /* tile rows and columns */
    qkv__gemm_bf16_kernel_fn *kernel; /* one tile */
    qkv__gemm_bf16_pack_a_fn *pack_a;
    qkv__gemm_bf16_pack_b_fn *pack_b;
} qkv__gemm_bf16_kernel;

/* The largest tile of any path (the driver's fallback buffer is sized by it). */
#define QKV__GEMM_BF16_MR_MAX 12
#define QKV__GEMM_BF16_NR_MAX 32

/* The portable path's packing in plain C, rounding with qkv__bf16_round, for
 * any mr and nr: also the AVX2 path's (gemm_bf16_portable.c). */
qkv__gemm_bf16_pack_a_fn qkv__gemm_bf16_pack_a;
qkv__gemm_bf16_pack_b_fn qkv__gemm_bf16_pack_b;

extern const qkv__gemm_bf16_kernel qkv__gemm_bf16_portable; /* gemm_bf16_portable.c */
#if QKV__CPU_X86
extern const qkv__gemm_bf16_kernel qkv__gemm_bf16_avx512; /* gemm_bf16_avx512.c */
extern const qkv__gemm_bf16_kernel qkv__gemm_bf16_avx2;   /* gemm_bf16_avx2.c */
#endif
#if QKV__CPU_AARCH64
extern const qkv__gemm_bf16_kernel qkv__gemm_bf16_neon; /* gemm_bf16_neon.c */
#endif

#endif
