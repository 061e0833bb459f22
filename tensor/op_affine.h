/* Internal: the Linear layer's op fused with the GELU after it, for the
 * MLP. Not installed. */
#ifndef QKV_OP_AFFINE_H
#define QKV_OP_AFFINE_H

#include "qkv/ops.h"

/* qkv_gelu(a, qkv_affine(a, x, w, b)), the same two graph nodes and the
 * same values, but each block of the product gets its bias and its GELU the
 * moment it is complete, while in cache, instead of two more passes over
 * the (..., out) result. */
qkv_tensor *qkv__affine_gelu(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b);

#endif
