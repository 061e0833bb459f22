/* Internal: the hot kernels by name, each runnable on its own over buffers
 * the caller owns, so that qkv/profile.h (and `qkv bench --ops` through it)
 * can time every kernel on every path (qkv/cpu.h) and
 * tests/tensor/test_paths.c can compare every path's results with
 * the portable path's. Each family lives beside its kernels (op_*.c,
 * hot.c, adamw.c); hot_kernels.c lists them all and runs them for
 * qkv/profile.h. Not installed. */
#ifndef QKV_HOT_H
#define QKV_HOT_H

#include <stddef.h>

#include "qkv/base.h"

/* Five buffers of n values each (n a multiple of cols): a kernel reads some,
 * writes others, as its entry says. Row kernels see n / cols rows of cols.
 * Inputs that must be positive (a variance, an rstd) are read from e, which
 * the caller fills with values in (0, 1]. */
typedef struct qkv__hot_data {
    qkv_real *a, *b, *c, *d, *e;
    size_t n;
    int cols;
} qkv__hot_data;

/* One hot kernel: run(d) does its whole job once on this thread, on the
 * active path; `work` is how many values (multiply-adds for a product) one
 * run handles, for throughput figures. `limit` is NULL when the vector width
 * bounds its speed, so twice the width should give ~2x; otherwise it names
 * what does, which twice the width does not double:
 *   QKV__HOT_STORES   one store per value: L1 takes 64 bytes a cycle, as
 *                     one zmm or two ymm stores;
 *   QKV__HOT_DIVIDER  a division and a square root per value: the divider
 *                     does a zmm in twice a ymm's time;
 *   QKV__HOT_SUMS     sums along short rows through one accumulator, whose
 *                     order (and so every AVX-512 checkpoint's bytes) a
 *                     faster form would change;
 *   QKV__HOT_LOADS    a load per multiply-add (each weight is used once):
 *                     a core that loads two zmm or three ymm a cycle gains
 *                     at most 1.33x (measured 1.27-1.36x);
 *   QKV__HOT_PORTS    long chains of arithmetic, no loads to speak of: an
 *                     Intel core with AVX-512 issues them on three ports as
 *                     ymm but two as zmm (port 1's vector unit joins port
 *                     0's for 512 bits), so at most 1.33x; and where the
 *                     AVX2 copy takes a cheaper form (GELU's tanh by FMAs,
 *                     op_activation.c) the AVX-512 one keeps the separate
 *                     multiplies and adds its checkpoints' bytes fix. */
typedef struct qkv__hot_kernel {
    const char *name;
    void (*run)(const qkv__hot_data *d);
    size_t (*work)(const qkv__hot_data *d);
    const char *limit;
} qkv__hot_kernel;

#define QKV__HOT_STORES "stores"
#define QKV__HOT_DIVIDER "divider"
#define QKV__HOT_SUMS "row sums"
#define QKV__HOT_LOADS "loads"
#define QKV__HOT_PORTS "ports"

/* `work` for the kernels that handle each of the n values once. */
size_t qkv__hot_values(const qkv__hot_data *d);

/* The families, each ending with a {0} entry (name NULL). */
extern const qkv__hot_kernel qkv__hot_activation[]; /* op_activation.c */
extern const qkv__hot_kernel qkv__hot_layernorm[];  /* op_layernorm.c */
extern const qkv__hot_kernel qkv__hot_rmsnorm[];    /* op_rmsnorm.c */
extern const qkv__hot_kernel qkv__hot_softmax[];    /* op_softmax.c */
extern const qkv__hot_kernel qkv__hot_elementwise[]; /* op_elementwise.c */
extern const qkv__hot_kernel qkv__hot_affine[];      /* op_affine.c: the bias */
extern const qkv__hot_kernel qkv__hot_gemm[];        /* hot.c: tiled, and one row */
extern const qkv__hot_kernel qkv__hot_adamw[];       /* adamw.c: the optimizer's update */

/* Every hot kernel, family after family (hot_kernels.c): *n of them. */
const qkv__hot_kernel *const *qkv__hot_kernels(int *n);

#endif
