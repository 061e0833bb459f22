/* Internal: what the AVX-512 kernel (gemm_avx512.c) and its packing
 * (gemm_avx512_pack.c) share. Include only where QKV__CPU_X86 is 1. */
#ifndef QKV_GEMM_AVX512_H
#define QKV_GEMM_AVX512_H

#include <immintrin.h>

#include "gemm_kernel.h"

/* Functions compiled for AVX-512 whatever the build flags; gemm.c calls them
 * only when the CPU has AVX-512F. */
#define AVX512 __attribute__((target("avx512f,fma")))
#define AVX512_INLINE static inline __attribute__((always_inline, target("avx512f,fma")))

/* The tile: 12 rows of A broadcast against 32 columns (two vectors) of B. */
enum { AVX512_MR = 12, AVX512_NR = 32 };

/* Lanes [0, n) of a 16-lane mask, n clamped to [0, 16]. */
AVX512_INLINE __mmask16 avx512_lanes(int n)
{
    return n <= 0 ? 0 : n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1);
}

/* The path's packing (see the typedefs in gemm_kernel.h). */
void qkv__gemm_avx512_pack_a(qkv_real *dst, const qkv_real *a, int lda, bool trans, int m,
                             int kc, int mr);
void qkv__gemm_avx512_pack_b(qkv_real *dst, const qkv_real *b, int ldb, bool trans, int kc,
                             int n, int nr);

/* Its few-rows NT form (gemm_avx512_dot.c). */
qkv__gemm_dot_fn qkv__gemm_avx512_dot;

#endif
