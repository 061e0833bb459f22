/* qkv/precision.h — the precision of the model's matrix products: fp32 (the
 * default) or bf16 (mixed precision). One process-wide choice, like the vector
 * path (qkv/cpu.h).
 *
 * In bf16 the products of the Linear layers (qkv_affine), of qkv_matmul (the
 * lm head) and of attention (scores and weighted values, forward and
 * backward) round both operands to bf16 (round-to-nearest-even) and add the
 * products in fp32. Everything else stays fp32: the weights themselves (the
 * master copy the optimizer updates), every gradient's accumulation, the
 * optimizer's moments (and Muon's orthogonalization), the norms, softmax, the
 * loss. qkv_gemm (qkv/gemm.h) stays fp32 whatever the choice. Generation
 * (qkv/generate.h) in bf16 rounds and packs each weight once per call and
 * reads that copy for every token: half the bytes of fp32 per token.
 *
 * Where the CPU has AVX512_BF16 (and the vector path is avx512) vdpbf16ps
 * multiplies; elsewhere the products round the same way and multiply in
 * fp32, giving the same values (but for bf16 subnormals, which vdpbf16ps
 * counts as zero): with AVX2's FMA on x86 (about fp32's speed), in plain C
 * elsewhere (slower). On aarch64 with ARM's BF16 (and the neon
 * vector path) bfdot multiplies, rounding its sums to odd: within fp32
 * rounding of those values, not their bits. On any CPU the values do not
 * depend on the thread count. The double build (QKV_DOUBLE), which the
 * gradient checks use, has fp32-or-wider products only: it refuses bf16.
 *
 *     if (qkv_precision_use(QKV_PRECISION_BF16) < 0)   // before building the graph of a step
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *     printf("products: %s\n", qkv_precision_name(qkv_precision_active()));
 *     qkv_precision_use(qkv_precision_find("fp32"));  // back to fp32
 *
 * A checkpoint records the precision active when it was saved
 * (qkv_checkpoint_precision, qkv/checkpoint.h).
 */
#ifndef QKV_PRECISION_H
#define QKV_PRECISION_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* The precisions; ids 0 to QKV_PRECISIONS - 1. */
#define QKV_PRECISION_FP32 0 /* every product in fp32 (qkv_real): the default */
#define QKV_PRECISION_BF16 1 /* the model's products in bf16 with fp32 sums */
#define QKV_PRECISIONS 2

/* The name of precision ("fp32", "bf16"); NULL with a message for any other id. */
const char *qkv_precision_name(int precision);

/* The id of the precision called name, or -1 with a message (name NULL or no precision's name). */
int qkv_precision_find(const char *name);

/* The precision of the model's products now (QKV_PRECISION_FP32 at load). */
int qkv_precision_active(void);

/* Make the model's products use precision from now on. 0, or -1 with a
 * message when precision is no precision's id or this build cannot run it
 * (bf16 in the double build). Not thread-safe: call it while no product runs
 * (between steps; a step's forward and backward must see the same one). */
int qkv_precision_use(int precision);

/* The kernel the bf16 products run on now: "avx512_bf16" (vdpbf16ps: the
 * CPU has AVX512_BF16 and the vector path is avx512), "neon_bf16" (bfdot:
 * aarch64 with ARM's BF16 and the neon path), "avx2" (the avx512 path
 * without AVX512_BF16, or the avx2 path: rounds to bf16 and multiplies in
 * fp32 with FMA, avx512_bf16's numbers at about fp32's speed) or "portable"
 * (the same numbers in plain C, slower). Whatever the active precision; the
 * double build says "none". */
const char *qkv_precision_kernel(void);

QKV_END_DECLS
#endif
