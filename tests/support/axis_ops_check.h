/* The forward values of the ops over any axis and of broadcasting (qkv/ops.h)
 * against plain loops written from each op's formula, run by both builds:
 * tests/tensor/test_axis_ops.c (float) and tests/tensor/grad_axis_ops.c (double).
 *
 *     int bad = axis_ops_forward_check(1e-5);   // mismatches, each printed to stderr
 *     ck_assert_int_eq(bad, 0);
 */
#ifndef QKV_AXIS_OPS_CHECK_H
#define QKV_AXIS_OPS_CHECK_H

#include "qkv/qkv.h"

/* Run every op over random shapes (1 to 4 dims, every axis, keepdim or not,
 * both operands broadcast) from a fixed seed and compare each value with the
 * loop's: |got - want| <= tol · max(1, |want|). Returns the number of ops
 * whose values (or shape) differ, or whose call failed. */
int axis_ops_forward_check(double tol);

#endif
