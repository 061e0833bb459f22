/* qkv/profile.h — where qkv's time goes: a training step's time op by op,
 * and each hot kernel's speed on its own, on the vector path qkv/cpu.h
 * chooses. These are the figures `qkv bench --ops` prints.
 *
 *     qkv_profile_start();                  // charge every op from here on
 *     qkv_profile_mark();                   // before each step: its glue is not an op's
 *     // ... forward and backward passes, on one thread driving the ops ...
 *     qkv_profile_stop();
 *     int n;
 *     const qkv_op_time *rows = qkv_profile_rows(&n);
 *     for (int i = 0; rows && i < n; i++)
 *         printf("%-34s %d calls, %.3f s forward, %.3f s backward\n", rows[i].what,
 *                rows[i].calls, rows[i].forward, rows[i].backward);
 *
 *     qkv_kernel_space *s = qkv_kernel_space_new(2048, 512, 9);
 *     for (int k = 0; s && k < qkv_kernel_count(); k++)
 *         printf("%s: %.0f values in 10 runs\n", qkv_kernel_name(k), qkv_kernel_run(s, k, 10));
 *     qkv_kernel_space_free(s);
 */
#ifndef QKV_PROFILE_H
#define QKV_PROFILE_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* ---- a step's time, op by op ---- */

/* One row of the table: an op with its input width and output shape, and its seconds. */
typedef struct qkv_op_time {
    char what[48];   /* "affine 128->(12,64,384)": op, input width, output shape */
    double forward;  /* seconds charged to its forwards: each recorded op is charged
                        the time since the previous one (or the mark), its glue too */
    double backward; /* seconds in its backward functions (clearing their inputs'
                        gradients included) */
    int calls;       /* forwards recorded */
} qkv_op_time;

/* Start charging every recorded op (clearing what was charged before): for
 * one thread driving the ops at a time (the ops' own parallel loops are fine). */
void qkv_profile_start(void);

/* Stop charging; the rows stay until the next qkv_profile_start. */
void qkv_profile_stop(void);

/* Start the clock for the next op's forward: call it before each step. */
void qkv_profile_mark(void);

/* The rows charged so far, *n of them (at most 64: later distinct ops are
 * lumped into the last row, "(other ops)"); valid until the next
 * qkv_profile_start. NULL with a message when n is NULL. */
const qkv_op_time *qkv_profile_rows(int *n);

/* ---- the hot kernels, one at a time ---- */

/* Operands for the hot kernels: five buffers the kernels read and write (a
 * kernel's inputs stay valid, whatever it wrote before). */
typedef struct qkv_kernel_space qkv_kernel_space;

/* How many hot kernels there are: ids 0 to qkv_kernel_count() - 1. */
int qkv_kernel_count(void);

/* Kernel k's name ("adamw", "gemm 64x64x64 (multiply-adds)", ...); NULL with
 * a message for an id out of range. */
const char *qkv_kernel_name(int k);

/* What bounds kernel k's speed: "width" when the vector width does (twice
 * the width gives about twice the speed), else what does instead:
 * "stores", "divider", "row sums", "loads" or "ports" (tensor/kernels/hot.h
 * says why for each). NULL with a message for an id out of range. */
const char *qkv_kernel_limit(int k);

/* Operands of n values each in rows of cols (n a multiple of cols, at most
 * 2^24), filled from seed: values in [-1, 1), and in [0.1, 1) where a kernel
 * needs them positive (a variance); the 64x64 product always has its 4096.
 * NULL with a message for a bad size or when out of memory. */
qkv_kernel_space *qkv_kernel_space_new(size_t n, int cols, uint64_t seed);

/* Free s (NULL is fine). */
void qkv_kernel_space_free(qkv_kernel_space *s);

/* Run kernel k reps times over s on this thread, on the active path: the
 * values it handled in all (multiply-adds for a product), for a throughput;
 * -1 with a message (s NULL, k out of range, reps < 1). */
double qkv_kernel_run(qkv_kernel_space *s, int k, int reps);

QKV_END_DECLS
#endif
