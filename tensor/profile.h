/* Internal: where a training step's time goes, op by op, for `qkv bench`.
 * While on, every recorded op is charged the time since the previous one
 * (its forward, with the glue before it), and every backward call its own
 * time, under the op's name, input width and output shape. For one thread driving the
 * ops at a time (the ops' own parallel loops are fine). Not installed. */
#ifndef QKV_PROFILE_H
#define QKV_PROFILE_H

#include "qkv/tensor.h"

/* One row of the table: an op name and output shape, and its seconds. */
typedef struct qkv__op_time {
    char what[48];   /* "affine 128->(12,64,384)": op, input width, output shape */
    double forward;  /* seconds charged to its forwards */
    double backward; /* seconds in its backward functions */
    int calls;       /* forwards recorded */
} qkv__op_time;

/* Start charging (clearing what was charged), or stop. */
void qkv__profile_on(bool on);

/* Start the clock for the next op's forward: call before each step. */
void qkv__profile_mark(void);

/* The rows charged so far (*n of them); valid until profiling starts again. */
const qkv__op_time *qkv__profile_rows(int *n);

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
