/* Internal: the Linear layer's op fused with the activation after it
 * (one of QKV_ACTIVATIONS), for the MLP. Not installed. */
#ifndef QKV_OP_AFFINE_H
#define QKV_OP_AFFINE_H

#include "activation.h"
#include "qkv/ops.h"

/* act(a, qkv_affine(a, x, w, b)) with act qkv_gelu, qkv_relu2, ...: the same two
 * graph nodes and the same values, but each block of the product gets its
 * bias and its activation the moment it is complete, while in cache, instead
 * of two more passes over the (..., out) result. */
qkv_tensor *qkv__affine_act(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b,
                            qkv_activation act);

#endif
