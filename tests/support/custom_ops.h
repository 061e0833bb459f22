/* Custom ops (qkv/custom.h) the tests define: a product of two inputs scaled
 * by the user's number, right, and the same with a wrong backward, which a
 * gradient check must catch. */
#ifndef QKV_TEST_CUSTOM_OPS_H
#define QKV_TEST_CUSTOM_OPS_H

#include "qkv/custom.h"

/* out = x ⊙ y ⊙ *(qkv_real *)user, x and y of one shape. */
extern const qkv_custom_op scaled_product_op;

/* The same forward; its backward forgets the user's scale. */
extern const qkv_custom_op scaled_product_wrong_op;

/* The same forward; its backward assigns (=) the gradients instead of adding (+=). */
extern const qkv_custom_op scaled_product_assigning_op;

/* How many times any of these ops' backward ran (a counter the tests reset). */
extern int scaled_product_backwards;

#endif
