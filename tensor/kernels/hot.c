/* The products among the hot kernels (see hot.h), and what they share. */
#include "hot.h"

#include "gemm.h"
#include "gemm_kernel.h"

size_t qkv__hot_values(const qkv__hot_data *d) { return d->n; }

enum { SIDE = 64 }; /* the tiled product's M = N = K: small enough for any n in use */

/* c = a·b, 64×64 times 64×64, through the packed, tiled driver. */
static void hot_tiled(const qkv__hot_data *d)
{
    qkv__gemm(1, false, false, SIDE, SIDE, SIDE, 1, d->a, SIDE, 0, d->b, SIDE, 0, 0, d->c, SIDE, 0);
}

static size_t hot_tiled_work(const qkv__hot_data *d)
{
    (void)d;
    return (size_t)SIDE * SIDE * SIDE;
}

/* c = x·Wᵀ for one row x = a (cols) and W = b (n / cols rows of cols): one
 * position through a Linear, as generation runs it. The path's few-rows
 * kernel itself (qkv__gemm's call costs as much as this small product), or
 * qkv__gemm on a path without one. */
static void hot_one_row(const qkv__hot_data *d)
{
    int rows = (int)(d->n / d->cols);
    const qkv__gemm_path *path = qkv__gemm_active_path();
    if (path->dot)
        path->dot(1, rows, d->cols, 1, d->a, d->cols, d->b, d->cols, 0, d->c, rows);
    else
        qkv__gemm(1, false, true, 1, rows, d->cols, 1, d->a, d->cols, 0, d->b, d->cols, 0, 0,
                  d->c, rows, 0);
}

const qkv__hot_kernel qkv__hot_gemm[] = {
    {"gemm 64x64x64 (multiply-adds)", hot_tiled, hot_tiled_work, NULL},
    {"gemm 1 row x W' (multiply-adds)", hot_one_row, qkv__hot_values, QKV__HOT_LOADS},
    {0},
};
