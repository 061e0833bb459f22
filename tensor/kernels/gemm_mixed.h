/* Internal: the model's matrix products, in the precision qkv/precision.h
 * chooses. The ops whose products are the model's (affine, matmul, attention)
 * call these instead of gemm.h's: in fp32 they are gemm.h's functions; in
 * bf16 each product goes to qkv__gemm_bf16 (gemm_bf16.h), which rounds both
 * operands to bf16 as it packs them and sums in fp32 into an fp32 C (so
 * beta == 1 accumulates gradients in fp32). In training the weights are read
 * from their fp32 master copy on every product: rounded afresh each time they
 * are packed, never kept in bf16 between steps (the values are those of
 * converting once per step). Generation keeps them packed in bf16 for the
 * length of one generation call (gemm_bf16_held.h). Same arguments and
 * results contract as gemm.h's namesakes. */
#ifndef QKV_KERNELS_GEMM_MIXED_H
#define QKV_KERNELS_GEMM_MIXED_H

#include "gemm.h"

/* The active precision's id (qkv/precision.h), a plain load. */
extern int qkv__precision_current;

/* Whether the model's products run in bf16 now. */
bool qkv__mixed_bf16(void);

/* qkv__gemm in the active precision. */
void qkv__gemm_mixed(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                     const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
                     size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c);

/* qkv__gemm_then in the active precision (in bf16 ep runs on C's rows once
 * the whole product is done, each element once; ep may be NULL). b_weight:
 * B is a parameter's values, which bf16 reads from the copy a generation
 * holds (qkv__gemm_bf16_weight); never for values that change between
 * products at the same address (activations, a key/value cache). */
void qkv__gemm_mixed_then(bool b_weight, bool trans_a, bool trans_b, int M, int N, int K,
                          qkv_real alpha,
                          const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                          qkv_real *C, int ldc, const qkv__gemm_epilogue *ep);

/* qkv__gemm_two in the active precision. */
void qkv__gemm_mixed_two(const qkv__gemm_product *x, const qkv__gemm_product *y);

#endif
