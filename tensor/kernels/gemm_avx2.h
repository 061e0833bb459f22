/* Internal: what the AVX2 kernel (gemm_avx2.c), its packing
 * (gemm_avx2_pack.c) and its few-rows kernel (gemm_avx2_dot.c) share.
 * Include only where QKV__CPU_X86 is 1. */
#ifndef QKV_GEMM_AVX2_H
#define QKV_GEMM_AVX2_H

#include <immintrin.h>

#include "gemm_kernel.h"

/* Functions compiled for AVX2 and FMA whatever the build flags; gemm.c calls
 * them only when the CPU has both. */
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

/* The tile: 6 rows of A broadcast against 16 columns (two vectors) of B. */
enum { AVX2_MR = 6, AVX2_NR = 16 };

/* All-ones in lanes [0, n) (n clamped to [0, 8]): the mask maskload/maskstore take. */
AVX2_INLINE __m256i avx2_lanes(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The path's packing (see the typedefs in gemm_kernel.h) and few-rows NT form. */
qkv__gemm_pack_a_fn qkv__gemm_avx2_pack_a;
qkv__gemm_pack_b_fn qkv__gemm_avx2_pack_b;
qkv__gemm_dot_fn qkv__gemm_avx2_dot;

#endif
