/* Internal: the activations the MLP can bend with, GELU and ReLU², which the
 * product before them can apply as its epilogue (op_affine.c). Not installed. */
#ifndef QKV_ACTIVATION_H
#define QKV_ACTIVATION_H

#include "qkv/tensor.h"

/* Which activation: qkv_gelu's or qkv_relu2's. */
typedef enum qkv__activation { QKV__GELU, QKV__RELU2 } qkv__activation;

/* y = act(x) for n values, on this thread: the very floats the op computes
 * (op_activation.c). */
void qkv__activation_values(qkv__activation act, qkv_real *y, const qkv_real *x, size_t n);

/* Record y = act(x), the node qkv_gelu or qkv_relu2 would record, for a y
 * whose values the caller computed with qkv__activation_values (fused into
 * the product that made x); returns y. */
qkv_tensor *qkv__activation_computed(qkv_arena *a, qkv__activation act, qkv_tensor *x,
                                     qkv_tensor *y);

#endif
