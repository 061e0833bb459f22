/* Misuse cases for qkv/tensor.h: tensors and autograd. */
#include "misuse.h"

MISUSE(qkv_tensor_new, null_arena) { FAILS_NULL(qkv_tensor_new(NULL, SHAPE23), "arena is NULL"); }
MISUSE(qkv_tensor_new, null_shape)
{
    FAILS_NULL(qkv_tensor_new(arena(), 2, NULL), "shape is NULL");
}
MISUSE(qkv_tensor_new, ndim_0) { FAILS_NULL(qkv_tensor_new(arena(), 0, (int[]){1}), "not 0"); }
MISUSE(qkv_tensor_new, ndim_5)
{
    FAILS_NULL(qkv_tensor_new(arena(), 5, (int[]){1, 1, 1, 1, 1}), "not 5");
}
MISUSE(qkv_tensor_new, negative_extent)
{
    FAILS_NULL(qkv_tensor_new(arena(), QKV_SHAPE(2, -1)), "is -1");
}
MISUSE(qkv_tensor_new, too_large)
{
    FAILS_NULL(qkv_tensor_new(arena(), QKV_SHAPE(1 << 30, 1 << 30, 1 << 30, 1 << 30)), "too large");
}
MISUSE(qkv_zeros, null_arena) { FAILS_NULL(qkv_zeros(NULL, SHAPE23), "arena is NULL"); }
MISUSE(qkv_zeros, null_shape) { FAILS_NULL(qkv_zeros(arena(), 2, NULL), "shape is NULL"); }
MISUSE(qkv_zeros, extent_0) { FAILS_NULL(qkv_zeros(arena(), QKV_SHAPE(2, 0)), "is 0"); }
MISUSE(qkv_ones, null_arena) { FAILS_NULL(qkv_ones(NULL, SHAPE23), "arena is NULL"); }
MISUSE(qkv_ones, ndim_9) { FAILS_NULL(qkv_ones(arena(), 9, (int[9]){1}), "not 9"); }
MISUSE(qkv_from_array, null_values)
{
    FAILS_NULL(qkv_from_array(arena(), SHAPE23, NULL), "values is NULL");
}
MISUSE(qkv_from_array, null_arena)
{
    FAILS_NULL(qkv_from_array(NULL, SHAPE23, (qkv_real[6]){0}), "arena is NULL");
}
MISUSE(qkv_randn, null_rng) { FAILS_NULL(qkv_randn(arena(), SHAPE23, 1, NULL), "rng is NULL"); }
MISUSE(qkv_randn, nan_std) { FAILS_NULL(qkv_randn(arena(), SHAPE23, NAN, rng()), "std"); }
MISUSE(qkv_randn, null_shape)
{
    FAILS_NULL(qkv_randn(arena(), 2, NULL, 1, rng()), "shape is NULL");
}
MISUSE(qkv_rand_uniform, null_rng)
{
    FAILS_NULL(qkv_rand_uniform(arena(), SHAPE23, 0, 1, NULL), "rng is NULL");
}
MISUSE(qkv_rand_uniform, nan_bound)
{
    FAILS_NULL(qkv_rand_uniform(arena(), SHAPE23, 0, NAN, rng()), "hi");
}
MISUSE(qkv_set_requires_grad, null) { REFUSES(qkv_set_requires_grad(NULL, true), "t is NULL"); }
MISUSE(qkv_same_shape, null_a)
{
    FAILS_AS(false, qkv_same_shape(NULL, tensor(SHAPE23)), "a is NULL");
}
MISUSE(qkv_same_shape, null_b)
{
    FAILS_AS(false, qkv_same_shape(tensor(SHAPE23), NULL), "b is NULL");
}
MISUSE(qkv_shape_str, null_tensor)
{
    char buf[64];
    FAILS_AS(buf, qkv_shape_str(NULL, buf, sizeof buf), "t is NULL");
    MISUSE_ASSERT(strcmp(buf, "(NULL)") == 0);
}
MISUSE(qkv_shape_str, null_buf)
{
    FAILS_NULL(qkv_shape_str(tensor(SHAPE23), NULL, 64), "buf is NULL");
}
MISUSE(qkv_shape_str, zero_len)
{
    char buf[1] = {'x'};
    FAILS_NULL(qkv_shape_str(tensor(SHAPE23), buf, 0), "len is 0");
    MISUSE_ASSERT(buf[0] == 'x');
}
MISUSE(qkv_grad_enabled, takes_no_arguments) { MISUSE_ASSERT(qkv_grad_enabled()); }
MISUSE(qkv_set_grad_enabled, takes_a_bool_only)
{
    MISUSE_ASSERT(qkv_set_grad_enabled(false) == true);
    MISUSE_ASSERT(qkv_set_grad_enabled(true) == false);
}
MISUSE(qkv_backward, null_arena)
{
    qkv_tensor *x = tensor(QKV_SHAPE(1));
    qkv_set_requires_grad(x, true);
    FAILS_INT(qkv_backward(NULL, qkv_sum(arena(), x)), "arena is NULL");
}
MISUSE(qkv_backward, null_loss) { FAILS_INT(qkv_backward(arena(), NULL), "loss is NULL"); }
MISUSE(qkv_backward, not_scalar) { FAILS_INT(qkv_backward(arena(), tensor(SHAPE23)), "one value"); }
MISUSE(qkv_backward, twice)
{
    qkv_tensor *x = tensor(QKV_SHAPE(1));
    qkv_set_requires_grad(x, true);
    qkv_tensor *loss = qkv_sum(arena(), qkv_mul(arena(), x, x));
    MISUSE_ASSERT(qkv_backward(arena(), loss) == 0);
    FAILS_INT(qkv_backward(arena(), loss), "backpropagated through already");
}
MISUSE(qkv_backward, after_reset)
{
    qkv_tensor *x = tensor(QKV_SHAPE(1));
    qkv_set_requires_grad(x, true);
    qkv_tensor *loss = qkv_sum(arena(), x);
    qkv_arena_reset(arena());
    FAILS_INT(qkv_backward(arena(), loss), "input loss", "before its arena's reset");
}
MISUSE(qkv_backward_retain_graph, null_loss)
{
    FAILS_INT(qkv_backward_retain_graph(arena(), NULL), "loss is NULL");
}
MISUSE(qkv_backward_retain_graph, not_scalar)
{
    FAILS_INT(qkv_backward_retain_graph(arena(), tensor(SHAPE23)), "one value");
}
MISUSE(qkv_retain_grad, null) { REFUSES(qkv_retain_grad(NULL), "t is NULL"); }

/* ---- inspection ---- */

/* A parameter never allocated: a shape, no values. */
static qkv_tensor *no_values(void)
{
    static qkv_params *p;
    p = qkv_params_new();
    return qkv_params_add(p, "w", SHAPE23, QKV_INIT_ZEROS, 0);
}

MISUSE(qkv_tensor_print, null_t) { FAILS_INT(qkv_tensor_print(NULL, "x", stdout), "t is NULL"); }
MISUSE(qkv_tensor_print, null_f) { FAILS_INT(qkv_tensor_print(tensor(SHAPE23), "x", NULL), "f is NULL"); }
MISUSE(qkv_tensor_print, unallocated) { FAILS_INT(qkv_tensor_print(no_values(), NULL, stdout), "t", "qkv_params_alloc"); }
MISUSE(qkv_tensor_get, null_t) { FAILS_INT(qkv_tensor_get(NULL, QKV_SHAPE(0, 0), &(qkv_real){0}), "t is NULL"); }
MISUSE(qkv_tensor_get, null_index) { FAILS_INT(qkv_tensor_get(tensor(SHAPE23), 2, NULL, &(qkv_real){0}), "index is NULL"); }
MISUSE(qkv_tensor_get, null_value) { FAILS_INT(qkv_tensor_get(tensor(SHAPE23), QKV_SHAPE(0, 0), NULL), "value is NULL"); }
MISUSE(qkv_tensor_get, wrong_ndim) { FAILS_INT(qkv_tensor_get(tensor(SHAPE23), QKV_SHAPE(0), &(qkv_real){0}), "ndim 1", "(2,3)", "2 indices"); }
MISUSE(qkv_tensor_get, index_too_large)
{
    FAILS_INT(qkv_tensor_get(tensor(SHAPE23), QKV_SHAPE(1, 3), &(qkv_real){0}), "index[1] = 3", "dim 1");
}
MISUSE(qkv_tensor_get, index_too_negative)
{
    FAILS_INT(qkv_tensor_get(tensor(SHAPE23), QKV_SHAPE(-3, 0), &(qkv_real){0}), "index[0] = -3");
}
MISUSE(qkv_tensor_get, unallocated) { FAILS_INT(qkv_tensor_get(no_values(), QKV_SHAPE(0, 0), &(qkv_real){0}), "t", "qkv_params_alloc"); }
