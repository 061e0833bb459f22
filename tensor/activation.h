/* Internal: the activations the MLP can bend with, one per value of the
 * model option `activation` (qkv/options.h's QKV_ACTIVATIONS), which the
 * product before them can apply as its epilogue (op_affine.c). Not installed. */
#ifndef QKV_ACTIVATION_H
#define QKV_ACTIVATION_H

#include "qkv/options.h"
#include "qkv/tensor.h"

/* y = act(x) for n values, on this thread: the very floats the op computes
 * (op_activation.c). */
void qkv__activation_values(qkv_activation act, qkv_real *y, const qkv_real *x, size_t n);

/* Record y = act(x), the node act's op (qkv_gelu, ...) would record, for a
 * y whose values the caller computed with qkv__activation_values (fused into
 * the product that made x); returns y. */
qkv_tensor *qkv__activation_computed(qkv_arena *a, qkv_activation act, qkv_tensor *x,
                                     qkv_tensor *y);

#endif
