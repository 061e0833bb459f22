/* Central finite differences against qkv_backward, for the double build.
 *
 *     static qkv_tensor *loss(qkv_arena *a, qkv_tensor **in, void *ud)
 *     { return qkv_gelu(a, in[0]); }                 // any shape: weighted below
 *     double err = gradcheck(loss, 1, inputs, NULL);
 *     ck_assert_msg(err <= GRADCHECK_TOL, "gelu: relative error %g", err);
 */
#ifndef QKV_GRADCHECK_H
#define QKV_GRADCHECK_H

#include "qkv/qkv.h"

/* The relative error the double build must meet for smooth ops. */
#define GRADCHECK_TOL 1e-6

/* Builds the function under test from the inputs; any output shape. */
typedef qkv_tensor *(*gradcheck_fn)(qkv_arena *a, qkv_tensor **inputs, void *ud);

/* For every input with requires_grad and every value of it, compare the
 * analytic gradient of L = Σ f(inputs) ⊙ R (R fixed random N(0,1) weights, so
 * every output value matters differently) with (L(x+h) - L(x-h)) / 2h.
 * Returns the worst |analytic - numeric| / max(|analytic|, |numeric|, 1e-3);
 * on failure to build f, returns INFINITY. Prints the worst entry to stderr
 * when it exceeds GRADCHECK_TOL. */
double gradcheck(gradcheck_fn f, int n_inputs, qkv_tensor **inputs, void *ud);

#endif
