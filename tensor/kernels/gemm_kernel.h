/* Internal: what the gemm driver (gemm.c) and its micro-kernels agree on.
 *
 * The driver cuts C into MR×NR tiles. For each tile it hands a micro-kernel
 * kc steps of the sum over k:
 *   - A's MR rows, element (i, p) at a[i·rs_a + p·cs_a]: either MR full rows
 *     of the stored A (rs_a = lda, cs_a = 1), or a packed, zero-padded
 *     panel (rs_a = 1, cs_a = MR), or, on a path whose in_place_t_n is
 *     not 0, MR full columns of a transposed A's stored rows read in place
 *     (rs_a = 1, cs_a = lda, m = MR). Kernels may rely on this.
 *   - B packed as a kc×NR panel, row p at b + p·NR, zero beyond column n;
 *     every panel starts a multiple of NR elements into a QKV_ALIGN-aligned
 *     buffer, so each row is aligned for the kernel's vector loads.
 * and the kernel does C[i][j] = alpha·Σ_p a(i,p)·b(p,j) + beta·C[i][j] for
 * i < m ≤ MR, j < n ≤ NR (beta == 0: C's old values are not read). */
#ifndef QKV_GEMM_KERNEL_H
#define QKV_GEMM_KERNEL_H

#include <stddef.h>

#include "cpu.h"
#include "qkv/base.h"

/* The SIMD kernels are float-only: the AVX ones x86-64-only (QKV__CPU_X86),
 * the NEON one aarch64-only (QKV__CPU_AARCH64). Elsewhere, and in the double
 * build, only the portable kernel exists. */

/* One MR×NR tile of C (see the comment at the top). */
typedef void qkv__gemm_kernel_fn(int kc, const qkv_real *a, ptrdiff_t rs_a, ptrdiff_t cs_a,
                                 const qkv_real *b, qkv_real *c, ptrdiff_t ldc, int m, int n,
                                 qkv_real alpha, qkv_real beta);

/* Pack op(A)'s rows [0, m) × columns [0, kc) as ceil(m/mr) panels of kc×mr,
 * panel r at dst + r·kc·mr holding rows r·mr + i at [p·mr + i], zero beyond
 * row m. op(A)(i, p) is a[p·lda + i] when trans, else a[i·lda + p]. */
typedef void qkv__gemm_pack_a_fn(qkv_real *dst, const qkv_real *a, int lda, bool trans, int m,
                                 int kc, int mr);

/* Pack op(B)'s rows [0, kc) × columns [0, n) as ceil(n/nr) panels of kc×nr,
 * panel q at dst + q·kc·nr, zero beyond column n. op(B)(p, j) is b[j·ldb + p]
 * when trans, else b[p·ldb + j]. dst is QKV_ALIGN-aligned. */
typedef void qkv__gemm_pack_b_fn(qkv_real *dst, const qkv_real *b, int ldb, bool trans, int kc,
                                 int n, int nr);

/* Products with at most QKV__GEMM_DOT_M_MAX rows and a transposed B, NT:
 * C[i][j] = alpha·(row i of A)·(stored row j of B) + beta·C[i][j] for i < m,
 * j < n, k terms, both operands read in place (beta == 0: C is not read). */
#define QKV__GEMM_DOT_M_MAX 4
typedef void qkv__gemm_dot_fn(int m, int n, int k, qkv_real alpha, const qkv_real *a, int lda,
                              const qkv_real *b, int ldb, qkv_real beta, qkv_real *c, int ldc);

/* The body of a qkv__gemm_dot_fn: dot_rows(rows, n, k, ...) with rows = m as
 * a constant (m ≤ QKV__GEMM_DOT_M_MAX), so that its loops unroll into registers. */
#define QKV__GEMM_DOT_BY_ROWS(dot_rows, m, ...)                                                 \
    switch (m) {                                                                               \
    case 1:                                                                                    \
        dot_rows(1, __VA_ARGS__);                                                              \
        break;                                                                                 \
    case 2:                                                                                    \
        dot_rows(2, __VA_ARGS__);                                                              \
        break;                                                                                 \
    case 3:                                                                                    \
        dot_rows(3, __VA_ARGS__);                                                              \
        break;                                                                                 \
    default:                                                                                   \
        dot_rows(4, __VA_ARGS__);                                                              \
    }

/* A micro-kernel, its tile shape and the packing routines that feed it. */
typedef struct qkv__gemm_path {
    const char *name;            /* "avx512", "avx2", "neon" or "portable", for tests and benchmarks */
    int mr, nr;                  /* tile rows (broadcast from A) and columns (vectors of B) */
    qkv__gemm_kernel_fn *kernel; /* computes one tile */
    qkv__gemm_pack_a_fn *pack_a; /* packs a panel of A (transposed or at the bottom edge) */
    qkv__gemm_pack_b_fn *pack_b; /* packs a block of B */
    qkv__gemm_dot_fn *dot;       /* the few-rows NT form without packing, or NULL */
    int in_place_t_n;            /* a transposed A is read in place, not packed, for
                                  * blocks of C this wide or narrower (0: never) */
} qkv__gemm_path;

extern const qkv__gemm_path qkv__gemm_portable;
#if QKV__CPU_X86
extern const qkv__gemm_path qkv__gemm_avx2;
extern const qkv__gemm_path qkv__gemm_avx512;
#endif
#if QKV__CPU_AARCH64
extern const qkv__gemm_path qkv__gemm_neon;
qkv__gemm_dot_fn qkv__gemm_neon_dot; /* gemm_neon_dot.c */
#endif

/* Largest mr and nr of any path (the driver's stack buffers are sized by them). */
#define QKV__GEMM_MR_MAX 12
#define QKV__GEMM_NR_MAX 32

/* The kernel of the active path (cpu.h) that qkv__gemm uses now: a path
 * without a kernel of its own uses the portable one. */
const qkv__gemm_path *qkv__gemm_active_path(void);

/* Plain C packing (see the typedefs above), for any path. */
qkv__gemm_pack_a_fn qkv__gemm_pack_a;
qkv__gemm_pack_b_fn qkv__gemm_pack_b;

#endif
