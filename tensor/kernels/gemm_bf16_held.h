/* Internal: the model's weights held as packed bf16 while a generation runs.
 *
 * In bf16 every product rounds and packs its operands afresh (gemm_bf16.c),
 * which for training is the packing a GEMM does anyway. Generation is
 * different: each token's products have one row (or a few) against every
 * weight matrix, so packing a weight costs as much as the product, and it
 * reads the fp32 weight, twice the bytes the bf16 product needs. So while a
 * generation runs (decode/generate.c opens a hold around its loop), each
 * parameter's matrix is rounded and packed once, on its first product, and
 * every later product reads that copy: half the bytes per token.
 *
 * The copy cannot go stale: it lives only as long as the hold (one call of
 * the generation loop; the hold is the calling thread's), only parameters'
 * values go in (an activation or a key/value cache changes between tokens at
 * the same address: never held), and anything that changes parameters'
 * values through qkv (an optimizer step, a load of a checkpoint or of
 * safetensors) calls qkv__bf16_held_changed, which empties every hold before
 * its next product. What qkv cannot see is a write straight into a
 * parameter's data from a callback during the generation: the rest of that
 * generation reads the copy made before it (documented in qkv/generate.h).
 *
 * The copy is the packing the product would make (the same path's pack_b on
 * the same k blocks), so a held product gives the same bits as one without
 * the hold. */
#ifndef QKV_GEMM_BF16_HELD_H
#define QKV_GEMM_BF16_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_bf16_kernel.h"

/* Start holding weights on this thread (holds nest: the outermost keeps them). */
void qkv__bf16_held_open(void);

/* End the hold qkv__bf16_held_open started; the outermost frees every copy. */
void qkv__bf16_held_close(void);

/* Parameters' values have changed: every hold drops its copies (they are
 * made again on the next product). Cheap: one counter. */
void qkv__bf16_held_changed(void);

/* How many copies this thread has made so far (the tests: a weight is
 * packed once per generation, not once per token). */
uint64_t qkv__bf16_held_made(void);

/* The packed bf16 of op(B) (K×N, op(B)(p, j) = B[j·ldb + p] when tb, else
 * B[p·ldb + j]) for path: blocks of kc steps (kc even, the driver's), block
 * p0 at (p0/2)·ceil(N/nr)·nr words, holding pack_b's ceil(N/nr) panels of its
 * pairs. NULL when no hold is open on this thread or there is no memory for
 * the copy (the caller then packs as usual). Made on the first call for B. */
const uint32_t *qkv__bf16_held(const qkv__gemm_bf16_kernel *path, bool tb, int K, int N, int kc,
                               const float *B, int ldb);

#endif
