/* qkv/gradcheck.h — check a backward against its forward by central finite
 * differences: what to run on an op of your own (qkv/custom.h) before
 * training with it.
 *
 *     static qkv_tensor *square(qkv_arena *a, qkv_tensor **in, void *user)
 *     {
 *         (void)user;
 *         return qkv_mul(a, in[0], in[0]);
 *     }
 *
 *     qkv_arena *a = qkv_arena_new(1 << 16);
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1);
 *     qkv_tensor *x = qkv_randn(a, QKV_SHAPE(2, 3), 1, &rng);
 *     qkv_set_requires_grad(x, true);
 *     double err = qkv_gradcheck(square, &x, 1, NULL);
 *     if (!(err <= QKV_GRADCHECK_TOL)) fprintf(stderr, "%s\n", qkv_last_error());
 *     qkv_arena_free(&a);
 */
#ifndef QKV_GRADCHECK_H
#define QKV_GRADCHECK_H

#include "qkv/tensor.h"

QKV_BEGIN_DECLS

/* The step of the differences and the relative error a correct smooth op
 * meets, per precision (the check sums L in double either way). In double
 * the truncation error (step²) and the rounding (1e-16 / step) are both far
 * below 1e-6. In float each output value is rounded by 6e-8 of itself, which
 * the differences divide by the step: a step of 1e-2 keeps that near 1e-5
 * while the truncation stays small for ops that are not sharply curved;
 * composed ops (gelu, softmax) then come out near 5e-3, and 2e-2 leaves room
 * for that while a wrong backward (a missing factor, a sign, a transposed
 * index) is off by far more. Ops with kinks (relu, max) or sharp curvature
 * (a norm of values near 0) can exceed it where a value sits within a step
 * of the kink: check those in the double build (build/libqkv64.a, -DQKV_DOUBLE). */
#ifdef QKV_DOUBLE
#define QKV_GRADCHECK_STEP 1e-5
#define QKV_GRADCHECK_TOL 1e-6
#else
#define QKV_GRADCHECK_STEP 1e-2
#define QKV_GRADCHECK_TOL 2e-2
#endif

/* Builds the function under test from the inputs into a (any output shape);
 * NULL on failure. Called once with grad mode on, then twice per value with
 * it off. */
typedef qkv_tensor *(*qkv_gradcheck_fn)(qkv_arena *a, qkv_tensor **inputs, void *user);

/* For every input with requires_grad (a leaf: its values are moved by
 * QKV_GRADCHECK_STEP) and every value of it, compare the analytic gradient
 * of L = Σ f(inputs) ⊙ R (R fixed N(0,1) weights, so every output value
 * counts differently) with (L(x+h) - L(x-h)) / 2h. Returns the worst
 * |analytic - numeric| / max(|analytic|, |numeric|, 1e-3); when that exceeds
 * QKV_GRADCHECK_TOL, qkv_last_error() names the worst value. The inputs'
 * values and gradients are as before afterwards. NAN with a message on a bad
 * argument or when f or its backward fails. The inputs' gradients hold a
 * non-zero value before the backward, which is taken off after: a backward
 * that assigns (=) an input's gradient instead of adding to it (+=) fails
 * the check even when its op is the input's only consumer. */
double qkv_gradcheck(qkv_gradcheck_fn f, qkv_tensor **inputs, int n_inputs, void *user);

QKV_END_DECLS
#endif
