/* Misuse cases for qkv/custom.h: ops of your own. */
#include "custom_ops.h"
#include "misuse.h"

static qkv_real one = 1;

/* Two inputs the test op takes. */
static qkv_tensor **pair(void)
{
    static qkv_tensor *in[2];
    in[0] = tensor(SHAPE23);
    in[1] = tensor(SHAPE23);
    return in;
}

MISUSE(qkv_custom, null_arena)
{
    FAILS_NULL(qkv_custom(NULL, &scaled_product_op, pair(), 2, SHAPE23, &one), "arena is NULL");
}
MISUSE(qkv_custom, null_op)
{
    FAILS_NULL(qkv_custom(arena(), NULL, pair(), 2, SHAPE23, &one), "op is NULL");
}
MISUSE(qkv_custom, null_forward)
{
    qkv_custom_op op = {"f", NULL, scaled_product_op.backward};
    FAILS_NULL(qkv_custom(arena(), &op, pair(), 2, SHAPE23, &one), "op->forward is NULL");
}
MISUSE(qkv_custom, null_backward)
{
    qkv_custom_op op = {"f", scaled_product_op.forward, NULL};
    FAILS_NULL(qkv_custom(arena(), &op, pair(), 2, SHAPE23, &one), "op->backward is NULL");
}
MISUSE(qkv_custom, null_name)
{
    qkv_custom_op op = {NULL, scaled_product_op.forward, scaled_product_op.backward};
    FAILS_NULL(qkv_custom(arena(), &op, pair(), 2, SHAPE23, &one), "op->name is NULL");
}
MISUSE(qkv_custom, null_inputs)
{
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, NULL, 2, SHAPE23, &one), "inputs is NULL");
}
MISUSE(qkv_custom, no_inputs)
{
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, pair(), 0, SHAPE23, &one), "n_inputs is 0");
}
MISUSE(qkv_custom, too_many_inputs)
{
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, pair(), QKV_CUSTOM_MAX_INPUTS + 1, SHAPE23,
                          &one),
               "n_inputs is 17");
}
MISUSE(qkv_custom, null_input)
{
    qkv_tensor *in[2] = {tensor(SHAPE23), NULL};
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, in, 2, SHAPE23, &one), "inputs[1] is NULL");
}
MISUSE(qkv_custom, bad_shape)
{
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, pair(), 2, 0, (int[]){1}, &one), "not 0");
}
MISUSE(qkv_custom, forward_fails)
{
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, pair(), 2, QKV_SHAPE(7), &one),
               "op scaled_product: its forward failed");
}
MISUSE(qkv_custom, input_after_reset)
{
    qkv_tensor **in = pair();
    qkv_arena_reset(arena());
    FAILS_NULL(qkv_custom(arena(), &scaled_product_op, in, 2, SHAPE23, &one),
               "inputs[0] is from before its arena's reset");
}
