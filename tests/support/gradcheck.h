/* The tests' gradient check: qkv_gradcheck (qkv/gradcheck.h), run in the
 * double build, printing the worst entry when it exceeds the tolerance.
 *
 *     static qkv_tensor *loss(qkv_arena *a, qkv_tensor **in, void *ud)
 *     { return qkv_gelu(a, in[0]); }                 // any shape: weighted below
 *     double err = gradcheck(loss, 1, inputs, NULL);
 *     ck_assert_msg(err <= GRADCHECK_TOL, "gelu: relative error %g", err);
 */
#ifndef QKV_TEST_GRADCHECK_H
#define QKV_TEST_GRADCHECK_H

#include "qkv/gradcheck.h"
#include "qkv/qkv.h"

/* The relative error the double build must meet for smooth ops. */
#define GRADCHECK_TOL QKV_GRADCHECK_TOL

/* Builds the function under test from the inputs; any output shape. */
typedef qkv_gradcheck_fn gradcheck_fn;

/* qkv_gradcheck(f, inputs, n_inputs, ud), printing qkv's message to stderr
 * when the result exceeds GRADCHECK_TOL or the check failed (INFINITY then). */
double gradcheck(gradcheck_fn f, int n_inputs, qkv_tensor **inputs, void *ud);

#endif
