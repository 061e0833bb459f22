/* Internal: the autograd's side of the per-op profile (qkv/profile.h): while
 * it is on, every recorded op is charged the time since the previous one
 * (its forward, with the glue before it), and every backward call its own
 * time, under the op's name, input width and output shape. Not installed. */
#ifndef QKV_TENSOR_PROFILE_H
#define QKV_TENSOR_PROFILE_H

#include "qkv/profile.h"
#include "qkv/tensor.h"

/* Called by the autograd (autograd.c) for an op with first input in and
 * output out: its forward was recorded; its backward ran for `seconds`. */
void qkv__profile_forward(const char *op, const qkv_tensor *in, const qkv_tensor *out);
void qkv__profile_backward(const char *op, const qkv_tensor *in, const qkv_tensor *out,
                           double seconds);

/* Whether profiling is on, so callers skip the clock when it is not. */
extern bool qkv__profiling;

/* Seconds on a monotonic clock. */
double qkv__profile_now(void);

#endif
