/* Internal: sums and maxima of a row in QKV__LANES running lanes, then
 * halving. GCC ends an `omp simd reduction` by adding its lanes one after
 * another in scalar code, 16 dependent steps: on a short row (the baby's
 * attention rows are 32 or 64 scores) that costs more than the row's own
 * work. Kept in lanes and halved, each step is one vector operation, and
 * the order of the additions is the same on every path. Not installed. */
#ifndef QKV_LANES_H
#define QKV_LANES_H

#include "qkv/base.h"

enum { QKV__LANES = 16 };

/* The largest of lane[0..16) (lane is overwritten). */
static inline __attribute__((always_inline)) qkv_real qkv__lanes_max(qkv_real *lane)
{
#pragma omp simd
    for (int i = 0; i < 8; i++)
        lane[i] = lane[i + 8] > lane[i] ? lane[i + 8] : lane[i];
#pragma omp simd
    for (int i = 0; i < 4; i++)
        lane[i] = lane[i + 4] > lane[i] ? lane[i + 4] : lane[i];
    lane[0] = lane[2] > lane[0] ? lane[2] : lane[0];
    lane[1] = lane[3] > lane[1] ? lane[3] : lane[1];
    return lane[1] > lane[0] ? lane[1] : lane[0];
}

/* The sum of lane[0..16), 8 + 8, 4 + 4, then (0 + 2) + (1 + 3) (lane is overwritten). */
static inline __attribute__((always_inline)) qkv_real qkv__lanes_sum(qkv_real *lane)
{
#pragma omp simd
    for (int i = 0; i < 8; i++)
        lane[i] += lane[i + 8];
#pragma omp simd
    for (int i = 0; i < 4; i++)
        lane[i] += lane[i + 4];
    return (lane[0] + lane[2]) + (lane[1] + lane[3]);
}

/* out = the fold of expr (an expression of j) over j in [0, n) into lanes
 * that start at init, then `finish` of the lanes: lane l folds the values
 * j ≡ l (mod QKV__LANES), so a short row ends in a few vector steps. */
#define QKV__LANES_FOLD(out, n, j, init, fold, expr, finish)                                       \
    do {                                                                                           \
        qkv_real lanes_[QKV__LANES];                                                               \
        for (int l_ = 0; l_ < QKV__LANES; l_++)                                                    \
            lanes_[l_] = (init);                                                                   \
        const int whole_ = (n) / QKV__LANES * QKV__LANES;                                          \
        for (int base_ = 0; base_ < whole_; base_ += QKV__LANES) {                                 \
            _Pragma("omp simd") for (int l_ = 0; l_ < QKV__LANES; l_++)                            \
            {                                                                                      \
                const int j = base_ + l_;                                                          \
                lanes_[l_] = fold(lanes_[l_], (expr));                                             \
            }                                                                                      \
        }                                                                                          \
        for (int l_ = 0; whole_ + l_ < (n); l_++) {                                                \
            const int j = whole_ + l_;                                                             \
            lanes_[l_] = fold(lanes_[l_], (expr));                                                 \
        }                                                                                          \
        (out) = finish(lanes_);                                                                    \
    } while (0)

#define QKV__LANES_ADD_(a, x) ((a) + (x))
#define QKV__LANES_MAX_(a, x) ((x) > (a) ? (x) : (a))

/* sum = Σ of expr over j in [0, n), in lanes: QKV__LANES_SUM(m, C, j, x[j])
 * sums the row x. */
#define QKV__LANES_SUM(sum, n, j, expr)                                                            \
    QKV__LANES_FOLD(sum, n, j, 0, QKV__LANES_ADD_, expr, qkv__lanes_sum)

/* mx = the largest of init and expr over j in [0, n), in lanes (a NaN
 * value is passed over, as `x > a ? x : a` does). */
#define QKV__LANES_MAX(mx, n, j, init, expr)                                                       \
    QKV__LANES_FOLD(mx, n, j, init, QKV__LANES_MAX_, expr, qkv__lanes_max)

#endif
