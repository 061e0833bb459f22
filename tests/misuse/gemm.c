/* Misuse cases for qkv/gemm.h: the matrix product on plain arrays. */
#include "misuse.h"

static qkv_real a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[8];

MISUSE(qkv_gemm, null_a)
{
    FAILS_INT(qkv_gemm(1, false, false, 2, 2, 3, 1, NULL, 3, 0, b, 2, 0, 0, c, 2, 0), "A is NULL");
}
MISUSE(qkv_gemm, null_c)
{
    FAILS_INT(qkv_gemm(1, false, false, 2, 2, 3, 1, a, 3, 0, b, 2, 0, 0, NULL, 2, 0), "C is NULL");
}
MISUSE(qkv_gemm, negative_size)
{
    FAILS_INT(qkv_gemm(1, false, false, -2, 2, 3, 1, a, 3, 0, b, 2, 0, 0, c, 2, 0), "M -2");
}
MISUSE(qkv_gemm, short_pitch)
{
    /* A stored 2×3 read with a pitch of 2: its rows would overlap. */
    FAILS_INT(qkv_gemm(1, false, false, 2, 2, 3, 1, a, 2, 0, b, 2, 0, 0, c, 2, 0), "lda 2");
}
MISUSE(qkv_gemm, short_pitch_transposed)
{
    /* op(B) is 3×2 from B stored 2×3 (trans_b): its pitch must hold 3. */
    FAILS_INT(qkv_gemm(1, false, true, 2, 2, 3, 1, a, 3, 0, b, 2, 0, 0, c, 2, 0), "ldb 2");
}
MISUSE(qkv_gemm, overlapping_batch)
{
    FAILS_INT(qkv_gemm(2, false, false, 1, 2, 3, 1, a, 3, 3, b, 2, 0, 0, c, 2, 1), "overlap");
}
MISUSE(qkv_gemm, empty_is_fine)
{
    MISUSE_ASSERT(qkv_gemm(0, false, false, 2, 2, 3, 1, a, 3, 0, b, 2, 0, 0, c, 2, 0) == 0);
    MISUSE_ASSERT(qkv_gemm(1, false, false, 0, 2, 3, 1, a, 3, 0, b, 2, 0, 0, c, 2, 0) == 0);
}
MISUSE(qkv_gemm_bf16, null_b)
{
    FAILS_INT(qkv_gemm_bf16(1, false, false, 2, 2, 3, 1, a, 3, 0, NULL, 2, 0, 0, c, 2, 0),
              "qkv_gemm_bf16", "B is NULL");
}
MISUSE(qkv_gemm_bf16, short_pitch)
{
    FAILS_INT(qkv_gemm_bf16(1, false, false, 2, 2, 3, 1, a, 2, 0, b, 2, 0, 0, c, 2, 0), "lda 2");
}
MISUSE(qkv_gemm_bf16, overlapping_batch)
{
    FAILS_INT(qkv_gemm_bf16(2, false, false, 1, 2, 3, 1, a, 3, 3, b, 2, 0, 0, c, 2, 1), "overlap");
}
