/* What the nn modules' suites (tests/nn/test_nn_*.c) share: a parameter
 * list, an rng and a ctx over an arena, and small tensor helpers. */
#ifndef QKV_TEST_NN_FIXTURE_H
#define QKV_TEST_NN_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qkv/nn.h"
#include "qkv/qkv.h"

/* What most tests need: a parameter list, an rng and a ctx over an arena. */
typedef struct fixture {
    qkv_params *p;
    qkv_rng rng;
    qkv_ctx ctx;
} fixture;

/* Open f: a new parameter list, its rng seeded with seed, a ctx over a
 * fresh arena, not training. */
void fx_open(fixture *f, uint64_t seed);

/* Free what fx_open made. */
void fx_close(fixture *f);

/* Allocate the parameters, then give every one N(0, std²) values, so that no
 * weight is special (LayerNorm 1, bias 0) and attention is far from uniform. */
void fx_alloc_random(fixture *f, double std);

/* A (B,T,C) tensor of N(0, 1) values. */
qkv_tensor *randn3(fixture *f, int B, int T, int C);

/* A copy of t in f's arena. */
qkv_tensor *copy_of(fixture *f, const qkv_tensor *t);

/* Rows [t0, t0+n) of x (B,T,C) as a new (B,n,C) tensor. */
qkv_tensor *rows_of(fixture *f, const qkv_tensor *x, int t0, int n);

/* The same values at position t of (B,T,C) tensors x and y (bit for bit), for every b. */
bool same_position(const qkv_tensor *x, const qkv_tensor *y, int t);

/* The largest |x[i] - y[i]| of n values. */
double max_abs_diff(const qkv_real *x, const qkv_real *y, size_t n);

/* Set the n x n matrix w to the identity. */
void set_identity(qkv_real *w, int n);

#endif
