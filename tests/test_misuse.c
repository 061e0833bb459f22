/* No call through the public API crashes. Every function declared in
 * the public headers (include/qkv) is called here with NULL and out-of-range arguments, each
 * case in a child process of its own (tests/support/misuse.c): a signal, a
 * hang, a success where a failure is documented, or a message that does not
 * name the function and the argument fails the suite. tests/misuse_coverage.sh
 * checks that every public function has at least one case here. */
#include <stdlib.h>

#include "misuse.h"
#include "testing.h"

/* Under AddressSanitizer a huge malloc must return NULL like the real one;
 * visible, since the build hides symbols by default and ASan looks this one up. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* ================================================================ base.h */

MISUSE(qkv_last_error, takes_no_arguments) { MISUSE_ASSERT(qkv_last_error() != NULL); }

MISUSE(qkv_clear_error, takes_no_arguments)
{
    qkv_set_error("x");
    qkv_clear_error();
    MISUSE_ASSERT(qkv_last_error()[0] == '\0');
}

MISUSE(qkv_set_error, null_fmt) { FAILS_INT(qkv_set_error(NULL), "fmt is NULL"); }

MISUSE(qkv_set_allocator, null_hooks_mean_malloc_and_free)
{
    HARMLESS((qkv_set_allocator(NULL, NULL), 0));
    void *p = qkv_alloc(16);
    MISUSE_ASSERT(p != NULL);
    qkv_free(p);
}

MISUSE(qkv_alloc, huge) { FAILS_NULL(qkv_alloc(SIZE_MAX), "too large"); }
MISUSE(qkv_alloc, huge_minus_align) { FAILS_NULL(qkv_alloc(SIZE_MAX - 8), "too large"); }
MISUSE(qkv_calloc, huge) { FAILS_NULL(qkv_calloc(SIZE_MAX), "too large"); }
MISUSE(qkv_free, null) { HARMLESS((qkv_free(NULL), 0)); }
MISUSE(qkv_alloc_count, takes_no_arguments) { (void)qkv_alloc_count(); }
MISUSE(qkv_set_threads, negative) { FAILS_INT(qkv_set_threads(-1), "n -1"); }
MISUSE(qkv_set_threads, int_min) { FAILS_INT(qkv_set_threads(-2147483647 - 1), "n"); }
MISUSE(qkv_threads, takes_no_arguments) { MISUSE_ASSERT(qkv_threads() >= 1); }

/* ================================================================ version.h */

MISUSE(qkv_version, takes_no_arguments) { MISUSE_ASSERT(strcmp(qkv_version(), QKV_VERSION_STRING) == 0); }

/* ================================================================ arena.h */

MISUSE(qkv_arena_new, size_max) { FAILS_NULL(qkv_arena_new(SIZE_MAX), "too large"); }
MISUSE(qkv_arena_new, half_size_max) { FAILS_NULL(qkv_arena_new(SIZE_MAX / 2 + 1), "too large"); }
MISUSE(qkv_arena_free, null) { HARMLESS((qkv_arena_free(NULL), 0)); }
MISUSE(qkv_arena_alloc, null_arena) { FAILS_NULL(qkv_arena_alloc(NULL, 8), "arena is NULL"); }
MISUSE(qkv_arena_alloc, huge) { FAILS_NULL(qkv_arena_alloc(arena(), SIZE_MAX), "too large"); }
MISUSE(qkv_arena_alloc, growth_overflow)
{
    /* A first block near SIZE_MAX/4 must not wrap when the arena grows. */
    qkv_arena *a = qkv_arena_new(4096);
    MISUSE_ASSERT(a != NULL);
    FAILS_NULL(qkv_arena_alloc(a, SIZE_MAX / 4 - 4096), "too large");
    MISUSE_ASSERT(qkv_arena_alloc(a, 8) != NULL);
    qkv_arena_free(a);
}
MISUSE(qkv_arena_calloc, null_arena) { FAILS_NULL(qkv_arena_calloc(NULL, 8), "arena is NULL"); }
MISUSE(qkv_arena_calloc, huge) { FAILS_NULL(qkv_arena_calloc(arena(), SIZE_MAX), "too large"); }
MISUSE(qkv_arena_reset, null) { REFUSES(qkv_arena_reset(NULL), "arena is NULL"); }
MISUSE(qkv_arena_used, null) { FAILS_AS(0, qkv_arena_used(NULL), "arena is NULL"); }
MISUSE(qkv_arena_capacity, null) { FAILS_AS(0, qkv_arena_capacity(NULL), "arena is NULL"); }

/* ================================================================ rng.h */

MISUSE(qkv_rng_seed, null) { REFUSES(qkv_rng_seed(NULL, 1), "r is NULL"); }
MISUSE(qkv_rng_u64, null) { FAILS_AS(0, qkv_rng_u64(NULL), "r is NULL"); }
MISUSE(qkv_rng_uniform, null) { FAILS_NAN(qkv_rng_uniform(NULL), "r is NULL"); }
MISUSE(qkv_rng_normal, null) { FAILS_NAN(qkv_rng_normal(NULL), "r is NULL"); }
MISUSE(qkv_rng_below, null) { FAILS_AS(0, qkv_rng_below(NULL, 5), "r is NULL"); }
MISUSE(qkv_rng_below, zero) { FAILS_AS(0, qkv_rng_below(rng(), 0), "n is 0"); }

/* ================================================================ tensor.h */

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
MISUSE(qkv_retain_grad, null) { REFUSES(qkv_retain_grad(NULL), "t is NULL"); }

/* ================================================================ ops.h */

/* A tensor declared in params that were never allocated: no values yet. */
static qkv_tensor *unallocated(void)
{
    static qkv_params *p;
    p = qkv_params_new();
    return qkv_params_add(p, "w", SHAPE23, QKV_INIT_ZEROS, 0);
}

#define BINARY_CASES(op)                                                                           \
    MISUSE(qkv_##op, null_arena)                                                                   \
    {                                                                                              \
        FAILS_NULL(qkv_##op(NULL, tensor(SHAPE23), tensor(SHAPE23)), "arena is NULL");             \
    }                                                                                              \
    MISUSE(qkv_##op, null_x)                                                                       \
    {                                                                                              \
        FAILS_NULL(qkv_##op(arena(), NULL, tensor(SHAPE23)), "x is NULL");                         \
    }                                                                                              \
    MISUSE(qkv_##op, null_y)                                                                       \
    {                                                                                              \
        FAILS_NULL(qkv_##op(arena(), tensor(SHAPE23), NULL), "y is NULL");                         \
    }                                                                                              \
    MISUSE(qkv_##op, unallocated_y)                                                                \
    {                                                                                              \
        FAILS_NULL(qkv_##op(arena(), tensor(SHAPE23), unallocated()), "y", "qkv_params_alloc");    \
    }                                                                                              \
    MISUSE(qkv_##op, mismatch)                                                                     \
    {                                                                                              \
        FAILS_NULL(qkv_##op(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(4))), "(2,3)", "(4)");      \
    }
BINARY_CASES(add)
BINARY_CASES(sub)
BINARY_CASES(mul)

#define UNARY_CASES(op, ...)                                                                       \
    MISUSE(qkv_##op, null_arena)                                                                   \
    {                                                                                              \
        FAILS_NULL(qkv_##op(NULL, tensor(SHAPE23) __VA_ARGS__), "arena is NULL");                  \
    }                                                                                              \
    MISUSE(qkv_##op, null_x) { FAILS_NULL(qkv_##op(arena(), NULL __VA_ARGS__), "x is NULL"); }     \
    MISUSE(qkv_##op, unallocated_x)                                                                \
    {                                                                                              \
        FAILS_NULL(qkv_##op(arena(), unallocated() __VA_ARGS__), "x", "qkv_params_alloc");         \
    }
UNARY_CASES(scale, , 2)
UNARY_CASES(relu)
UNARY_CASES(gelu)
UNARY_CASES(relu2)
UNARY_CASES(sum)
UNARY_CASES(mean)
UNARY_CASES(transpose)
UNARY_CASES(softmax)
MISUSE(qkv_scale, nan) { FAILS_NULL(qkv_scale(arena(), tensor(SHAPE23), NAN), "s"); }
MISUSE(qkv_transpose, one_dim)
{
    FAILS_NULL(qkv_transpose(arena(), tensor(QKV_SHAPE(3))), "2 dimensions");
}

MISUSE(qkv_dropout, null_x)
{
    FAILS_NULL(qkv_dropout(arena(), NULL, 0.5, rng(), true), "x is NULL");
}
MISUSE(qkv_dropout, null_rng)
{
    FAILS_NULL(qkv_dropout(arena(), tensor(SHAPE23), 0.5, NULL, true), "rng");
}
MISUSE(qkv_dropout, p_1) { FAILS_NULL(qkv_dropout(arena(), tensor(SHAPE23), 1, rng(), true), "p"); }
MISUSE(qkv_dropout, p_nan)
{
    FAILS_NULL(qkv_dropout(arena(), tensor(SHAPE23), NAN, rng(), true), "p");
}
MISUSE(qkv_dropout, null_arena)
{
    FAILS_NULL(qkv_dropout(NULL, tensor(SHAPE23), 0.5, rng(), true), "arena is NULL");
}

MISUSE(qkv_reshape, null_x) { FAILS_NULL(qkv_reshape(arena(), NULL, QKV_SHAPE(6)), "x is NULL"); }
MISUSE(qkv_reshape, null_shape)
{
    FAILS_NULL(qkv_reshape(arena(), tensor(SHAPE23), 1, NULL), "shape is NULL");
}
MISUSE(qkv_reshape, wrong_size)
{
    FAILS_NULL(qkv_reshape(arena(), tensor(SHAPE23), QKV_SHAPE(5)), "(2,3)");
}
MISUSE(qkv_reshape, null_arena)
{
    FAILS_NULL(qkv_reshape(NULL, tensor(SHAPE23), QKV_SHAPE(6)), "arena is NULL");
}
MISUSE(qkv_permute, null_x) { FAILS_NULL(qkv_permute(arena(), NULL, (int[]){1, 0}), "x is NULL"); }
MISUSE(qkv_permute, null_perm)
{
    FAILS_NULL(qkv_permute(arena(), tensor(SHAPE23), NULL), "perm is NULL");
}
MISUSE(qkv_permute, not_a_permutation)
{
    FAILS_NULL(qkv_permute(arena(), tensor(SHAPE23), (int[]){1, 1}), "perm");
}
MISUSE(qkv_permute, out_of_range)
{
    FAILS_NULL(qkv_permute(arena(), tensor(SHAPE23), (int[]){0, 7}), "perm");
}
MISUSE(qkv_concat, null_xs) { FAILS_NULL(qkv_concat(arena(), 2, NULL), "xs is NULL"); }
MISUSE(qkv_concat, null_entry)
{
    FAILS_NULL(qkv_concat(arena(), 2, (qkv_tensor *[]){tensor(SHAPE23), NULL}), "xs[1] is NULL");
}
MISUSE(qkv_concat, n_0)
{
    FAILS_NULL(qkv_concat(arena(), 0, (qkv_tensor *[]){tensor(SHAPE23)}), "n");
}
MISUSE(qkv_concat, n_negative)
{
    FAILS_NULL(qkv_concat(arena(), -2, (qkv_tensor *[]){tensor(SHAPE23)}), "n");
}
MISUSE(qkv_concat, null_arena)
{
    FAILS_NULL(qkv_concat(NULL, 1, (qkv_tensor *[]){tensor(SHAPE23)}), "arena is NULL");
}
MISUSE(qkv_slice, null_x) { FAILS_NULL(qkv_slice(arena(), NULL, 0, 1), "x is NULL"); }
MISUSE(qkv_slice, past_the_end) { FAILS_NULL(qkv_slice(arena(), tensor(SHAPE23), 2, 2), "[2, 4)"); }
MISUSE(qkv_slice, negative) { FAILS_NULL(qkv_slice(arena(), tensor(SHAPE23), -1, 1), "-1"); }
MISUSE(qkv_slice, int_overflow)
{
    FAILS_NULL(qkv_slice(arena(), tensor(SHAPE23), 2, 2147483647), "columns");
}

MISUSE(qkv_matmul, null_arena)
{
    FAILS_NULL(qkv_matmul(NULL, tensor(SHAPE23), tensor(QKV_SHAPE(3, 2)), false, false),
               "arena is NULL");
}
MISUSE(qkv_matmul, null_x)
{
    FAILS_NULL(qkv_matmul(arena(), NULL, tensor(SHAPE23), false, false), "x is NULL");
}
MISUSE(qkv_matmul, null_w)
{
    FAILS_NULL(qkv_matmul(arena(), tensor(SHAPE23), NULL, false, false), "w is NULL");
}
MISUSE(qkv_matmul, unallocated_w)
{
    FAILS_NULL(qkv_matmul(arena(), tensor(QKV_SHAPE(3, 2)), unallocated(), false, false), "w",
               "qkv_params_alloc");
}
MISUSE(qkv_matmul, mismatch)
{
    FAILS_NULL(qkv_matmul(arena(), tensor(SHAPE23), tensor(SHAPE23), false, false), "(2,3)");
}
MISUSE(qkv_matmul, one_dim)
{
    FAILS_NULL(qkv_matmul(arena(), tensor(QKV_SHAPE(3)), tensor(SHAPE23), false, false), "(3)");
}
MISUSE(qkv_affine, null_x)
{
    FAILS_NULL(qkv_affine(arena(), NULL, tensor(SHAPE23), NULL), "x is NULL");
}
MISUSE(qkv_affine, null_w)
{
    FAILS_NULL(qkv_affine(arena(), tensor(SHAPE23), NULL, NULL), "w is NULL");
}
MISUSE(qkv_affine, null_arena)
{
    FAILS_NULL(qkv_affine(NULL, tensor(SHAPE23), tensor(SHAPE23), NULL), "arena is NULL");
}
MISUSE(qkv_affine, bad_bias)
{
    FAILS_NULL(qkv_affine(arena(), tensor(SHAPE23), tensor(SHAPE23), tensor(QKV_SHAPE(5))), "(5)");
}
MISUSE(qkv_affine, unallocated_bias)
{
    qkv_params *p = qkv_params_new();
    qkv_tensor *b = qkv_params_add(p, "b", QKV_SHAPE(2), QKV_INIT_ZEROS, 0);
    FAILS_NULL(qkv_affine(arena(), tensor(SHAPE23), tensor(SHAPE23), b), "b", "qkv_params_alloc");
}
MISUSE(qkv_embedding, null_table)
{
    FAILS_NULL(qkv_embedding(arena(), NULL, (int32_t[]){0}, QKV_SHAPE(1)), "table is NULL");
}
MISUSE(qkv_embedding, null_ids)
{
    FAILS_NULL(qkv_embedding(arena(), tensor(SHAPE23), NULL, QKV_SHAPE(1)), "ids is NULL");
}
MISUSE(qkv_embedding, null_shape)
{
    FAILS_NULL(qkv_embedding(arena(), tensor(SHAPE23), (int32_t[]){0}, 1, NULL), "shape is NULL");
}
MISUSE(qkv_embedding, id_out_of_range)
{
    FAILS_NULL(qkv_embedding(arena(), tensor(SHAPE23), (int32_t[]){2}, QKV_SHAPE(1)), "id 2");
}
MISUSE(qkv_embedding, ndim_4)
{
    /* the result has one more dim than the ids: at most 3 */
    FAILS_NULL(qkv_embedding(arena(), tensor(SHAPE23), (int32_t[]){0}, QKV_SHAPE(1, 1, 1, 1)),
               "1 to 3 dims");
}
MISUSE(qkv_embedding, table_1d)
{
    FAILS_NULL(qkv_embedding(arena(), tensor(QKV_SHAPE(3)), (int32_t[]){0}, QKV_SHAPE(1)), "(3)");
}
MISUSE(qkv_layernorm, null_x)
{
    FAILS_NULL(qkv_layernorm(arena(), NULL, NULL, NULL, 1e-5f), "x is NULL");
}
MISUSE(qkv_layernorm, bad_weight)
{
    FAILS_NULL(qkv_layernorm(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(2)), NULL, 1e-5f), "(2)");
}
MISUSE(qkv_layernorm, negative_eps)
{
    FAILS_NULL(qkv_layernorm(arena(), tensor(SHAPE23), NULL, NULL, -1), "eps");
}
MISUSE(qkv_layernorm, null_arena)
{
    FAILS_NULL(qkv_layernorm(NULL, tensor(SHAPE23), NULL, NULL, 1e-5f), "arena is NULL");
}
MISUSE(qkv_rmsnorm, null_x)
{
    FAILS_NULL(qkv_rmsnorm(arena(), NULL, NULL, 1e-5f), "x is NULL");
}
MISUSE(qkv_rmsnorm, bad_weight)
{
    FAILS_NULL(qkv_rmsnorm(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(2)), 1e-5f), "(2)");
}
MISUSE(qkv_rmsnorm, unallocated_weight)
{
    FAILS_NULL(qkv_rmsnorm(arena(), tensor(SHAPE23), unallocated(), 1e-5f), "w", "qkv_params_alloc");
}
MISUSE(qkv_rmsnorm, negative_eps)
{
    FAILS_NULL(qkv_rmsnorm(arena(), tensor(SHAPE23), NULL, -1), "eps");
}
MISUSE(qkv_rmsnorm, infinite_eps)
{
    FAILS_NULL(qkv_rmsnorm(arena(), tensor(SHAPE23), NULL, INFINITY), "eps");
}
MISUSE(qkv_rmsnorm, null_arena)
{
    FAILS_NULL(qkv_rmsnorm(NULL, tensor(SHAPE23), NULL, 1e-5f), "arena is NULL");
}
MISUSE(qkv_rope, null_arena)
{
    FAILS_NULL(qkv_rope(NULL, tensor(QKV_SHAPE(1, 3, 6)), 3, 0), "arena is NULL");
}
MISUSE(qkv_rope, null_x)
{
    FAILS_NULL(qkv_rope(arena(), NULL, 1, 0), "x is NULL");
}
MISUSE(qkv_rope, unallocated_x)
{
    FAILS_NULL(qkv_rope(arena(), unallocated(), 1, 0), "x", "qkv_params_alloc");
}
MISUSE(qkv_rope, two_dims)
{
    FAILS_NULL(qkv_rope(arena(), tensor(SHAPE23), 1, 0), "(2,3)", "(B,T,H·d)");
}
MISUSE(qkv_rope, odd_head_size)
{
    FAILS_NULL(qkv_rope(arena(), tensor(QKV_SHAPE(1, 3, 6)), 2, 0), "(1,3,6)", "2 heads of an even size");
}
MISUSE(qkv_rope, zero_heads)
{
    FAILS_NULL(qkv_rope(arena(), tensor(QKV_SHAPE(1, 3, 6)), 0, 0), "0 heads");
}
MISUSE(qkv_rope, int_min_heads)
{
    FAILS_NULL(qkv_rope(arena(), tensor(QKV_SHAPE(1, 3, 6)), -2147483647 - 1, 0), "heads");
}
MISUSE(qkv_rope, negative_position)
{
    FAILS_NULL(qkv_rope(arena(), tensor(QKV_SHAPE(1, 3, 6)), 3, -1), "position -1");
}
MISUSE(qkv_rope, huge_position)
{
    FAILS_NULL(qkv_rope(arena(), tensor(QKV_SHAPE(1, 3, 6)), 3, 2147483647), "position 2147483647");
}
MISUSE(qkv_softmax_masked, null_x)
{
    FAILS_NULL(qkv_softmax_masked(arena(), NULL, NULL, 1), "x is NULL");
}
MISUSE(qkv_softmax_masked, causal_tq_gt_tk)
{
    qkv_mask m = {.causal = true};
    FAILS_NULL(qkv_softmax_masked(arena(), tensor(QKV_SHAPE(1, 3, 2)), &m, 1), "Tq 3", "Tk 2");
}
MISUSE(qkv_softmax_masked, key_valid_1d)
{
    qkv_mask m = {.key_valid = (uint8_t[]){1, 1, 1}};
    FAILS_NULL(qkv_softmax_masked(arena(), tensor(QKV_SHAPE(3)), &m, 1), "(B");
}
MISUSE(qkv_softmax_masked, nan_scale)
{
    FAILS_NULL(qkv_softmax_masked(arena(), tensor(SHAPE23), NULL, NAN), "scale");
}
MISUSE(qkv_cross_entropy, null_logits)
{
    FAILS_NULL(qkv_cross_entropy(arena(), NULL, (int32_t[]){0, 0}, -1), "logits is NULL");
}
MISUSE(qkv_cross_entropy, null_targets)
{
    FAILS_NULL(qkv_cross_entropy(arena(), tensor(SHAPE23), NULL, -1), "targets is NULL");
}
MISUSE(qkv_cross_entropy, target_out_of_range)
{
    FAILS_NULL(qkv_cross_entropy(arena(), tensor(SHAPE23), (int32_t[]){0, 3}, -1), "target 3");
}
MISUSE(qkv_cross_entropy, null_arena)
{
    FAILS_NULL(qkv_cross_entropy(NULL, tensor(SHAPE23), (int32_t[]){0, 0}, -1), "arena is NULL");
}

#define QKV3 tensor(QKV_SHAPE(1, 2, 4)), tensor(QKV_SHAPE(1, 2, 4)), tensor(QKV_SHAPE(1, 2, 4))
MISUSE(qkv_attention, null_q)
{
    FAILS_NULL(qkv_attention(arena(), NULL, tensor(QKV_SHAPE(1, 2, 4)), tensor(QKV_SHAPE(1, 2, 4)),
                             NULL, 0, NULL, NULL),
               "q is NULL");
}
MISUSE(qkv_attention, null_v)
{
    FAILS_NULL(qkv_attention(arena(), tensor(QKV_SHAPE(1, 2, 4)), tensor(QKV_SHAPE(1, 2, 4)), NULL,
                             NULL, 0, NULL, NULL),
               "v is NULL");
}
MISUSE(qkv_attention, two_dims)
{
    FAILS_NULL(qkv_attention(arena(), tensor(QKV_SHAPE(2, 4)), tensor(QKV_SHAPE(2, 4)),
                             tensor(QKV_SHAPE(2, 4)), NULL, 0, NULL, NULL),
               "(B");
}
MISUSE(qkv_attention, causal_tq_gt_tk)
{
    qkv_mask m = {.causal = true};
    FAILS_NULL(qkv_attention(arena(), tensor(QKV_SHAPE(1, 3, 4)), tensor(QKV_SHAPE(1, 2, 4)),
                             tensor(QKV_SHAPE(1, 2, 4)), &m, 0, NULL, NULL),
               "Tq 3", "Tk 2");
}
MISUSE(qkv_attention, dropout_without_rng)
{
    FAILS_NULL(qkv_attention(arena(), QKV3, NULL, 0.5, NULL, NULL), "rng");
}
MISUSE(qkv_attention, dropout_nan)
{
    FAILS_NULL(qkv_attention(arena(), QKV3, NULL, NAN, rng(), NULL), "dropout");
}
MISUSE(qkv_attention, null_arena)
{
    FAILS_NULL(qkv_attention(NULL, QKV3, NULL, 0, NULL, NULL), "arena is NULL");
}
MISUSE(qkv_attention_heads, null_k)
{
    FAILS_NULL(qkv_attention_heads(arena(), tensor(QKV_SHAPE(1, 2, 4)), NULL,
                                   tensor(QKV_SHAPE(1, 2, 4)), 2, NULL, 0, NULL, NULL),
               "k is NULL");
}
MISUSE(qkv_attention_heads, n_head_0)
{
    FAILS_NULL(qkv_attention_heads(arena(), QKV3, 0, NULL, 0, NULL, NULL), "n_head");
}
MISUSE(qkv_attention_heads, n_head_3)
{
    FAILS_NULL(qkv_attention_heads(arena(), QKV3, 3, NULL, 0, NULL, NULL), "n_head");
}
MISUSE(qkv_attention_heads, causal_tq_gt_tk)
{
    qkv_mask m = {.causal = true};
    FAILS_NULL(qkv_attention_heads(arena(), tensor(QKV_SHAPE(1, 3, 4)), tensor(QKV_SHAPE(1, 2, 4)),
                                   tensor(QKV_SHAPE(1, 2, 4)), 2, &m, 0, NULL, NULL),
               "Tq 3", "Tk 2");
}
MISUSE(qkv_attention_heads, four_dims)
{
    FAILS_NULL(qkv_attention_heads(arena(), tensor(QKV_SHAPE(1, 1, 2, 4)),
                                   tensor(QKV_SHAPE(1, 1, 2, 4)), tensor(QKV_SHAPE(1, 1, 2, 4)), 2,
                                   NULL, 0, NULL, NULL),
               "(B");
}

/* A NULL input carries the cause of the failure that made it. */
MISUSE(qkv_matmul, null_input_keeps_the_cause)
{
    qkv_tensor *bad = qkv_add(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(4)));
    MISUSE_ASSERT(bad == NULL);
    qkv_tensor *y = qkv_matmul(arena(), bad, tensor(QKV_SHAPE(3, 3)), false, false);
    MISUSE_ASSERT(y == NULL);
    misuse_check_message("qkv_matmul(failed add)", MISUSE_PARTS("x is NULL", "qkv_add", "(4)"));
    /* once more down the chain: still the first cause, once */
    MISUSE_ASSERT(qkv_gelu(arena(), y) == NULL);
    const char *msg = qkv_last_error();
    MISUSE_ASSERT(strstr(msg, "qkv_gelu: input x is NULL") == msg);
    MISUSE_ASSERT(strstr(msg, "qkv_add") && !strstr(msg, "qkv_matmul"));
    /* with nothing failed before, no cause is made up */
    qkv_clear_error();
    MISUSE_ASSERT(qkv_matmul(arena(), NULL, tensor(SHAPE23), false, false) == NULL);
    MISUSE_ASSERT(strcmp(qkv_last_error(), "qkv_matmul: input x is NULL") == 0);
}

/* The message is valid right after a failure; a success does not clear it. */
MISUSE(qkv_last_error, stale_after_success)
{
    MISUSE_ASSERT(qkv_sum(arena(), NULL) == NULL);
    char first[512];
    snprintf(first, sizeof first, "%s", qkv_last_error());
    MISUSE_ASSERT(strcmp(first, "qkv_sum: input x is NULL") == 0);
    MISUSE_ASSERT(qkv_sum(arena(), tensor(SHAPE23)) != NULL);
    MISUSE_ASSERT(strcmp(qkv_last_error(), first) == 0);
    qkv_clear_error();
    MISUSE_ASSERT(qkv_last_error()[0] == '\0');
}

/* ================================================================ params.h */

MISUSE(qkv_params_new, takes_no_arguments) { qkv_params_free(qkv_params_new()); }
MISUSE(qkv_params_free, null) { HARMLESS((qkv_params_free(NULL), 0)); }
MISUSE(qkv_params_add, null_params)
{
    FAILS_NULL(qkv_params_add(NULL, "w", SHAPE23, QKV_INIT_ZEROS, 0), "p is NULL");
}
MISUSE(qkv_params_add, null_name)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, NULL, SHAPE23, QKV_INIT_ZEROS, 0), "name is NULL");
    qkv_params_free(p);
}
MISUSE(qkv_params_add, null_shape)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", 2, NULL, QKV_INIT_ZEROS, 0), "shape is NULL");
    qkv_params_free(p);
}
MISUSE(qkv_params_add, bad_init)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", SHAPE23, (qkv_init)9, 0), "init 9");
    qkv_params_free(p);
}
MISUSE(qkv_params_add, negative_std)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", SHAPE23, QKV_INIT_NORMAL, -1), "std");
    qkv_params_free(p);
}
MISUSE(qkv_params_add, empty_name)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "", SHAPE23, QKV_INIT_ZEROS, 0), "name");
    qkv_params_free(p);
}
MISUSE(qkv_params_add, after_alloc)
{
    FAILS_NULL(qkv_params_add(params(), "z", SHAPE23, QKV_INIT_ZEROS, 0), "alloc");
}
MISUSE(qkv_params_alloc, null) { FAILS_INT(qkv_params_alloc(NULL, rng()), "p is NULL"); }
MISUSE(qkv_params_alloc, twice) { FAILS_INT(qkv_params_alloc(params(), rng()), "already"); }
MISUSE(qkv_params_alloc, normal_without_rng)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", SHAPE23, QKV_INIT_NORMAL, 0.02);
    FAILS_INT(qkv_params_alloc(p, NULL), "rng");
    qkv_params_free(p);
}
MISUSE(qkv_params_zero_grad, null) { REFUSES(qkv_params_zero_grad(NULL), "p is NULL"); }
MISUSE(qkv_params_zero_grad, unallocated)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", SHAPE23, QKV_INIT_ZEROS, 0);
    REFUSES(qkv_params_zero_grad(p), "qkv_params_alloc");
    qkv_params_free(p);
}
MISUSE(qkv_params_find, null_params) { FAILS_NULL(qkv_params_find(NULL, "w"), "p is NULL"); }
MISUSE(qkv_params_find, null_name) { FAILS_NULL(qkv_params_find(params(), NULL), "name is NULL"); }

/* ================================================================ optim.h */

MISUSE(qkv_adamw_defaults, takes_no_arguments)
{
    MISUSE_ASSERT(qkv_adamw_defaults().kind == QKV_OPTIM_ADAMW);
}
MISUSE(qkv_sgd_defaults, takes_no_arguments)
{
    MISUSE_ASSERT(qkv_sgd_defaults().kind == QKV_OPTIM_SGD);
}
MISUSE(qkv_optim_new, null_params)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    FAILS_NULL(qkv_optim_new(NULL, &cfg), "p is NULL");
}
MISUSE(qkv_optim_new, null_config) { FAILS_NULL(qkv_optim_new(params(), NULL), "cfg is NULL"); }
MISUSE(qkv_optim_new, bad_kind)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.kind = (qkv_optim_kind)7;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "kind 7");
}
MISUSE(qkv_optim_new, nan_weight_decay)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.weight_decay = NAN;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "weight decay (nan)");
}
MISUSE(qkv_optim_free, null) { HARMLESS((qkv_optim_free(NULL), 0)); }
MISUSE(qkv_optim_step, null_optim) { FAILS_INT(qkv_optim_step(NULL, params(), 1e-3), "o is NULL"); }
MISUSE(qkv_optim_step, null_params) { FAILS_INT(qkv_optim_step(optim(), NULL, 1e-3), "p is NULL"); }
MISUSE(qkv_optim_step, nan_lr) { FAILS_INT(qkv_optim_step(optim(), params(), NAN), "lr"); }
MISUSE(qkv_optim_step, negative_lr) { FAILS_INT(qkv_optim_step(optim(), params(), -1e-3), "lr"); }
MISUSE(qkv_optim_step, infinite_lr)
{
    FAILS_INT(qkv_optim_step(optim(), params(), INFINITY), "lr");
}
MISUSE(qkv_lr_at, null) { FAILS_NAN(qkv_lr_at(NULL, 0), "s is NULL"); }
MISUSE(qkv_lr_at, negative_step)
{
    qkv_lr_schedule s = {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 10, .decay_iters = 50};
    FAILS_NAN(qkv_lr_at(&s, -5), "-5");
}
MISUSE(qkv_clip_grad_norm, null) { FAILS_INT(qkv_clip_grad_norm(NULL, 1), "p is NULL"); }
MISUSE(qkv_clip_grad_norm, negative_max)
{
    FAILS_INT(qkv_clip_grad_norm(params(), -1), "max_norm");
}
MISUSE(qkv_clip_grad_norm, nan_max) { FAILS_INT(qkv_clip_grad_norm(params(), NAN), "max_norm"); }

/* ================================================================ data.h */

MISUSE(qkv_tokenizer_build, null_tok)
{
    REFUSES(qkv_tokenizer_build(NULL, "abc", 3), "tok is NULL");
}
MISUSE(qkv_tokenizer_build, null_text)
{
    qkv_tokenizer t;
    REFUSES(qkv_tokenizer_build(&t, NULL, 3), "text is NULL");
    MISUSE_ASSERT(t.size == 0); /* an empty vocabulary, not garbage */
}
MISUSE(qkv_tokenizer_from_bytes, null_tok)
{
    FAILS_INT(qkv_tokenizer_from_bytes(NULL, (uint8_t[]){1}, 1), "tok is NULL");
}
MISUSE(qkv_tokenizer_from_bytes, null_bytes)
{
    qkv_tokenizer t;
    FAILS_INT(qkv_tokenizer_from_bytes(&t, NULL, 2), "bytes is NULL");
}
MISUSE(qkv_tokenizer_from_bytes, n_negative)
{
    qkv_tokenizer t;
    FAILS_INT(qkv_tokenizer_from_bytes(&t, (uint8_t[]){1}, -1), "-1");
}
MISUSE(qkv_tokenizer_from_bytes, n_300)
{
    qkv_tokenizer t;
    static uint8_t bytes[300];
    FAILS_INT(qkv_tokenizer_from_bytes(&t, bytes, 300), "300");
}
MISUSE(qkv_encode, null_tok)
{
    FAILS_INT(qkv_encode(NULL, "a", 1, (int32_t[1]){0}), "tok is NULL");
}
MISUSE(qkv_encode, null_text)
{
    FAILS_INT(qkv_encode(tok(), NULL, 1, (int32_t[1]){0}), "text is NULL");
}
MISUSE(qkv_encode, null_ids) { FAILS_INT(qkv_encode(tok(), "a", 1, NULL), "ids is NULL"); }
MISUSE(qkv_encode, unknown_byte)
{
    FAILS_INT(qkv_encode(tok(), "az", 2, (int32_t[2]){0}), "'z'", "position 1");
}
MISUSE(qkv_encode, corrupt_tokenizer)
{
    qkv_tokenizer t = *tok();
    t.id['a'] = 999; /* an id table no tokenizer builds */
    FAILS_INT(qkv_encode(&t, "a", 1, (int32_t[1]){0}), "tok");
}
MISUSE(qkv_decode, null_tok)
{
    FAILS_INT(qkv_decode(NULL, (int32_t[]){0}, 1, (char[1]){0}), "tok is NULL");
}
MISUSE(qkv_decode, null_ids) { FAILS_INT(qkv_decode(tok(), NULL, 1, (char[1]){0}), "ids is NULL"); }
MISUSE(qkv_decode, null_text)
{
    FAILS_INT(qkv_decode(tok(), (int32_t[]){0}, 1, NULL), "text is NULL");
}
MISUSE(qkv_decode, id_out_of_range)
{
    FAILS_INT(qkv_decode(tok(), (int32_t[]){0, 3}, 2, (char[2]){0}), "3", "position 1");
}
MISUSE(qkv_decode, corrupt_size)
{
    qkv_tokenizer t = *tok();
    t.size = 1000;
    FAILS_INT(qkv_decode(&t, (int32_t[]){500}, 1, (char[1]){0}), "tok");
}
MISUSE(qkv_corpus_load, null_path) { FAILS_NULL(qkv_corpus_load(NULL, NULL), "path is NULL"); }
MISUSE(qkv_corpus_load, missing)
{
    FAILS_NULL(qkv_corpus_load(tmp_path("missing.txt"), NULL), "missing.txt");
}
MISUSE(qkv_corpus_load, directory) { FAILS_NULL(qkv_corpus_load("/tmp", NULL), "/tmp"); }
MISUSE(qkv_corpus_load, byte_outside_vocab)
{
    FAILS_NULL(qkv_corpus_load(text_path(), tok()), "text.txt");
}
MISUSE(qkv_corpus_from_text, null_text)
{
    FAILS_NULL(qkv_corpus_from_text(NULL, 3, NULL), "text is NULL");
}
MISUSE(qkv_corpus_from_text, null_text_len_0)
{
    FAILS_NULL(qkv_corpus_from_text(NULL, 0, NULL), "text is NULL");
}
MISUSE(qkv_corpus_from_text, len_0) { FAILS_NULL(qkv_corpus_from_text("abc", 0, NULL), "empty"); }
MISUSE(qkv_corpus_from_text, byte_outside_vocab)
{
    FAILS_NULL(qkv_corpus_from_text("abz", 3, tok()), "'z'", "position 2");
}
MISUSE(qkv_corpus_free, null) { HARMLESS((qkv_corpus_free(NULL), 0)); }
MISUSE(qkv_batcher_init, null_sampler)
{
    FAILS_INT(qkv_batcher_init(NULL, corpus(), QKV_SPLIT_TRAIN, 2, 8, 1), "s is NULL");
}
MISUSE(qkv_batcher_init, null_corpus)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, NULL, QKV_SPLIT_TRAIN, 2, 8, 1), "c is NULL");
}
MISUSE(qkv_batcher_init, split_7)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), (qkv_split)7, 2, 8, 1), "split 7");
}
MISUSE(qkv_batcher_init, batch_0)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 0, 8, 1), "0");
}
MISUSE(qkv_batcher_init, block_too_long)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_VAL, 2, 1 << 20, 1), "1048577");
}
MISUSE(qkv_batcher_init, batch_times_block_overflows)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 1 << 30, 8, 1), "batch");
}
MISUSE(qkv_batcher_next, null_sampler)
{
    REFUSES(qkv_batcher_next(NULL, (int32_t[16]){0}, (int32_t[16]){0}), "s is NULL");
}
MISUSE(qkv_batcher_next, null_x)
{
    qkv_batcher s;
    MISUSE_ASSERT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 2, 8, 1) == 0);
    REFUSES(qkv_batcher_next(&s, NULL, (int32_t[16]){0}), "x is NULL");
}
MISUSE(qkv_batcher_next, uninitialised)
{
    qkv_batcher s = {0};
    int32_t x[16], y[16];
    REFUSES(qkv_batcher_next(&s, x, y), "s");
}

/* ================================================================ dates.h */

MISUSE(qkv_dates_vocab, takes_no_arguments) { MISUSE_ASSERT(qkv_dates_vocab()[0] != '\0'); }
MISUSE(qkv_dates_format_name, negative) { FAILS_NULL(qkv_dates_format_name(-1), "format -1"); }
MISUSE(qkv_dates_format_name, too_big)
{
    FAILS_NULL(qkv_dates_format_name(QKV_DATES_N_FORMATS), "format 13");
}
MISUSE(qkv_dates_format, null_input)
{
    FAILS_INT(qkv_dates_format(NULL, 40, 0, QKV_DATES_LOWER, 1998, 3, 3), "input is NULL");
}
MISUSE(qkv_dates_format, bad_case)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, (qkv_dates_case)9, 1998, 3, 3), "unknown case 9");
}
MISUSE(qkv_dates_format, bad_format)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 99, QKV_DATES_LOWER, 1998, 3, 3), "format 99");
}
MISUSE(qkv_dates_format, february_30)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_LOWER, 1998, 2, 30), "1998-2-30");
}
MISUSE(qkv_dates_format, short_buffer)
{
    char in[4];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_LOWER, 1998, 3, 3), "4-byte buffer");
}
MISUSE(qkv_dates_sample, null_rng)
{
    char in[40], out[16];
    FAILS_INT(qkv_dates_sample(NULL, in, sizeof in, out, sizeof out), "rng is NULL");
}
MISUSE(qkv_dates_sample, null_output)
{
    char in[40];
    FAILS_INT(qkv_dates_sample(rng(), in, sizeof in, NULL, 16), "output is NULL");
}
MISUSE(qkv_dates_sample, short_output)
{
    char in[40], out[4];
    FAILS_INT(qkv_dates_sample(rng(), in, sizeof in, out, sizeof out), "buffers of 40 and 4");
}
MISUSE(qkv_dates_sample_split, null_input)
{
    char out[16];
    FAILS_INT(qkv_dates_sample_split(rng(), true, NULL, 40, out, sizeof out), "input is NULL");
}
MISUSE(qkv_dates_sample_split, null_rng)
{
    char in[40], out[16];
    FAILS_INT(qkv_dates_sample_split(NULL, true, in, sizeof in, out, sizeof out), "rng is NULL");
}
MISUSE(qkv_dates_is_test, null) { FAILS_AS(false, qkv_dates_is_test(NULL), "input is NULL"); }

/* ================================================================ viz.h: pictures */

MISUSE(qkv_svg_heatmap, null_path)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(NULL, &s), "path is NULL");
}
MISUSE(qkv_svg_heatmap, null_spec)
{
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), NULL), "spec is NULL");
}
MISUSE(qkv_svg_heatmap, null_values)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "values");
}
MISUSE(qkv_svg_heatmap, zero_rows)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 0, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "0x1");
}
MISUSE(qkv_svg_heatmap, size_overflow)
{
    qkv_svg_heatmap_spec s = {
        .panels = 1 << 20, .rows = 1 << 20, .cols = 1 << 20, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "panels");
}
MISUSE(qkv_svg_lines, null_path)
{
    qkv_svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(NULL, "t", "x", "y", 1, &s), "path is NULL");
}
MISUSE(qkv_svg_lines, null_series)
{
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, NULL), "series is NULL");
}
MISUSE(qkv_svg_lines, null_xs)
{
    qkv_svg_series s = {.name = "a", .n = 2, .xs = NULL, .ys = (double[]){1, 2}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "xs");
}
MISUSE(qkv_svg_lines, negative_series)
{
    qkv_svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", -1, &s), "-1");
}
MISUSE(qkv_svg_lines, negative_points)
{
    qkv_svg_series s = {.name = "a", .n = -4, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "-4");
}

/* ================================================================ checkpoint.h */

static qkv_ckpt_model ckpt_model(void) { return (qkv_ckpt_model){.kind = "test"}; }

MISUSE(qkv_checkpoint_save, null_path)
{
    qkv_ckpt_model m = ckpt_model();
    FAILS_INT(qkv_checkpoint_save(NULL, &m, params(), NULL, NULL), "path is NULL");
}
MISUSE(qkv_checkpoint_save, null_model)
{
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), NULL, params(), NULL, NULL), "model is NULL");
}
MISUSE(qkv_checkpoint_save, null_kind)
{
    qkv_ckpt_model m = {.kind = NULL};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "kind");
}
MISUSE(qkv_checkpoint_save, null_params)
{
    qkv_ckpt_model m = ckpt_model();
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, NULL, NULL, NULL), "p is NULL");
}
MISUSE(qkv_checkpoint_save, config_len_without_config)
{
    qkv_ckpt_model m = {.kind = "test", .config = NULL, .config_len = 100};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "config");
}
MISUSE(qkv_checkpoint_save, rngs_null)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = 2, .rngs = NULL};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "rngs");
}
MISUSE(qkv_checkpoint_save, rng_entry_null)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = 1, .rngs = (qkv_rng *const[]){NULL}};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "rngs[0]");
}
MISUSE(qkv_checkpoint_save, negative_rngs)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = -1};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "-1");
}
MISUSE(qkv_checkpoint_open, null_path)
{
    FAILS_NULL(qkv_checkpoint_open(NULL, NULL), "path is NULL");
}
MISUSE(qkv_checkpoint_open, null_path_names_no_null_string)
{
    FAILS_NULL(qkv_checkpoint_open(NULL, "gpt"), "path is NULL");
    MISUSE_ASSERT(!strstr(qkv_last_error(), "(null)"));
}
MISUSE(qkv_checkpoint_open, not_a_checkpoint)
{
    FAILS_NULL(qkv_checkpoint_open(text_path(), NULL), "text.txt");
}
MISUSE(qkv_checkpoint_open_bytes, null_bytes)
{
    FAILS_NULL(qkv_checkpoint_open_bytes(NULL, 100, "x", NULL), "bytes is NULL");
}
MISUSE(qkv_checkpoint_open_bytes, null_name)
{
    FAILS_NULL(qkv_checkpoint_open_bytes("QKVCKPT", 8, NULL, NULL), "truncated");
    MISUSE_ASSERT(!strstr(qkv_last_error(), "(null)"));
}
MISUSE(qkv_checkpoint_open_bytes, huge_len)
{
    FAILS_NULL(qkv_checkpoint_open_bytes("", SIZE_MAX, "x", NULL), "too large");
}
MISUSE(qkv_checkpoint_load, null_checkpoint)
{
    FAILS_INT(qkv_checkpoint_load(NULL, params(), NULL, NULL), "ck is NULL");
}
MISUSE(qkv_checkpoint_load, null_params)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_checkpoint_load(ck, NULL, NULL, NULL), "p is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_checkpoint_load, progress_rngs_null)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    qkv_ckpt_progress prog = {.n_rngs = ck->n_rngs, .rngs = NULL};
    FAILS_INT(qkv_checkpoint_load(ck, trainer()->model->params, NULL, &prog), "rngs");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_checkpoint_close, null) { HARMLESS((qkv_checkpoint_close(NULL), 0)); }
MISUSE(qkv_crc32, null_data) { FAILS_AS(0, qkv_crc32(0, NULL, 5), "data is NULL"); }
MISUSE(qkv_crc32, null_data_empty) { MISUSE_ASSERT(qkv_crc32(7, NULL, 0) == 7); }

/* ================================================================ nn.h */

static qkv_tensor *btc(int C) { return tensor(QKV_SHAPE(1, 3, C)); }

/* A fresh params list, and an allocation of it. */
static qkv_params *fresh(void) { return qkv_params_new(); }
static void alloc(qkv_params *p) { MISUSE_ASSERT(qkv_params_alloc(p, rng()) == 0); }

MISUSE(qkv_linear_init, null_module)
{
    FAILS_INT(qkv_linear_init(NULL, fresh(), "l", 4, 4, true, 0.02f), "m is NULL");
}
MISUSE(qkv_linear_init, null_params)
{
    qkv_linear l;
    FAILS_INT(qkv_linear_init(&l, NULL, "l", 4, 4, true, 0.02f), "p is NULL");
}
MISUSE(qkv_linear_init, zero_in)
{
    qkv_linear l;
    FAILS_INT(qkv_linear_init(&l, fresh(), "l", 0, 4, true, 0.02f), "0");
}
MISUSE(qkv_linear_forward, null_module)
{
    FAILS_NULL(qkv_linear_forward(NULL, run(), btc(4)), "m is NULL");
}
MISUSE(qkv_linear_forward, null_run)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_linear_forward(&l, NULL, btc(4)), "r is NULL");
}
MISUSE(qkv_linear_forward, run_without_arena)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    qkv_run r = {0};
    FAILS_NULL(qkv_linear_forward(&l, &r, btc(4)), "arena is NULL");
}
MISUSE(qkv_linear_forward, before_params_alloc)
{
    qkv_linear l;
    qkv_linear_init(&l, fresh(), "l", 4, 4, true, 0.02f);
    FAILS_NULL(qkv_linear_forward(&l, run(), btc(4)), "qkv_params_alloc");
}
MISUSE(qkv_linear_forward, zeroed_module)
{
    qkv_linear l = {0};
    FAILS_NULL(qkv_linear_forward(&l, run(), btc(4)), "m");
}
MISUSE(qkv_linear_forward, null_x)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_linear_forward(&l, run(), NULL), "x is NULL");
}
MISUSE(qkv_embed_init, null_module)
{
    FAILS_INT(qkv_embed_init(NULL, fresh(), "e", 5, 4, 0.02f), "m is NULL");
}
MISUSE(qkv_embed_init, zero_vocab)
{
    qkv_embed e;
    FAILS_INT(qkv_embed_init(&e, fresh(), "e", 0, 4, 0.02f), "0");
}
MISUSE(qkv_embed_forward, null_ids)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, run(), NULL, QKV_SHAPE(1, 2)), "ids is NULL");
}
MISUSE(qkv_embed_forward, null_module)
{
    FAILS_NULL(qkv_embed_forward(NULL, run(), (int32_t[]){0}, QKV_SHAPE(1)), "m is NULL");
}
MISUSE(qkv_embed_forward, before_params_alloc)
{
    qkv_embed e;
    qkv_embed_init(&e, fresh(), "e", 5, 4, 0.02f);
    FAILS_NULL(qkv_embed_forward(&e, run(), (int32_t[]){0}, QKV_SHAPE(1)), "qkv_params_alloc");
}
MISUSE(qkv_embed_forward, null_run)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, NULL, (int32_t[]){0}, QKV_SHAPE(1)), "r is NULL");
}
MISUSE(qkv_ln_init, null_module)
{
    FAILS_INT(qkv_ln_init(NULL, fresh(), "ln", 4, true), "m is NULL");
}
MISUSE(qkv_rmsnorm_init, null_module)
{
    FAILS_INT(qkv_rmsnorm_init(NULL, fresh(), "rms", 4), "m is NULL");
}
MISUSE(qkv_rmsnorm_init, null_params)
{
    qkv_ln l;
    FAILS_INT(qkv_rmsnorm_init(&l, NULL, "rms", 4), "p is NULL");
}
MISUSE(qkv_rmsnorm_init, zero_dim)
{
    qkv_ln l;
    FAILS_INT(qkv_rmsnorm_init(&l, fresh(), "rms", 0), "extent 0");
}
MISUSE(qkv_ln_init, zero_dim)
{
    qkv_ln l;
    FAILS_INT(qkv_ln_init(&l, fresh(), "ln", 0, true), "0");
}
MISUSE(qkv_ln_forward, null_module)
{
    FAILS_NULL(qkv_ln_forward(NULL, run(), btc(4)), "m is NULL");
}
MISUSE(qkv_ln_forward, before_params_alloc)
{
    qkv_ln l;
    qkv_ln_init(&l, fresh(), "ln", 4, true);
    FAILS_NULL(qkv_ln_forward(&l, run(), btc(4)), "qkv_params_alloc");
}
MISUSE(qkv_ln_forward, null_run)
{
    qkv_ln l;
    qkv_params *p = fresh();
    qkv_ln_init(&l, p, "ln", 4, true);
    alloc(p);
    FAILS_NULL(qkv_ln_forward(&l, NULL, btc(4)), "r is NULL");
}
MISUSE(qkv_mlp_init, null_config)
{
    qkv_mlp m;
    FAILS_INT(qkv_mlp_init(&m, fresh(), "mlp", NULL), "cfg is NULL");
}
MISUSE(qkv_mlp_init, null_module)
{
    FAILS_INT(qkv_mlp_init(NULL, fresh(), "mlp", block_config()), "m is NULL");
}
MISUSE(qkv_mlp_forward, null_module)
{
    FAILS_NULL(qkv_mlp_forward(NULL, run(), btc(8)), "m is NULL");
}
MISUSE(qkv_mlp_forward, before_params_alloc)
{
    qkv_mlp m;
    qkv_mlp_init(&m, fresh(), "mlp", block_config());
    FAILS_NULL(qkv_mlp_forward(&m, run(), btc(8)), "qkv_params_alloc");
}
MISUSE(qkv_mlp_forward, null_run)
{
    qkv_mlp m;
    qkv_params *p = fresh();
    qkv_mlp_init(&m, p, "mlp", block_config());
    alloc(p);
    FAILS_NULL(qkv_mlp_forward(&m, NULL, btc(8)), "r is NULL");
}
MISUSE(qkv_attn_head_init, null_module)
{
    FAILS_INT(qkv_attn_head_init(NULL, fresh(), "h", 8, 4, true), "m is NULL");
}
MISUSE(qkv_attn_head_init, zero_head_size)
{
    qkv_attn_head h;
    FAILS_INT(qkv_attn_head_init(&h, fresh(), "h", 8, 0, true), "0");
}
MISUSE(qkv_attn_head_forward, null_module)
{
    FAILS_NULL(qkv_attn_head_forward(NULL, run(), btc(8), NULL), "m is NULL");
}
MISUSE(qkv_attn_head_forward, before_params_alloc)
{
    qkv_attn_head h;
    qkv_attn_head_init(&h, fresh(), "h", 8, 4, true);
    FAILS_NULL(qkv_attn_head_forward(&h, run(), btc(8), NULL), "qkv_params_alloc");
}
MISUSE(qkv_attn_head_forward, null_run)
{
    qkv_attn_head h;
    qkv_params *p = fresh();
    qkv_attn_head_init(&h, p, "h", 8, 4, true);
    alloc(p);
    FAILS_NULL(qkv_attn_head_forward(&h, NULL, btc(8), NULL), "r is NULL");
}
MISUSE(qkv_attn_head_forward, two_dims)
{
    qkv_attn_head h;
    qkv_params *p = fresh();
    qkv_attn_head_init(&h, p, "h", 8, 4, true);
    alloc(p);
    FAILS_NULL(qkv_attn_head_forward(&h, run(), tensor(QKV_SHAPE(3, 8)), NULL), "(3,8)");
}

/* A module of each attention kind, its parameters allocated. */
static qkv_self_attn self_attn(void)
{
    qkv_self_attn m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_self_attn_init(&m, p, "a", block_config(), true) == 0);
    alloc(p);
    return m;
}
static qkv_cross_attn cross_attn(void)
{
    qkv_cross_attn m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_cross_attn_init(&m, p, "c", block_config(), 6) == 0);
    alloc(p);
    return m;
}
static qkv_block block(void)
{
    qkv_block m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_block_init(&m, p, "b", block_config(), true) == 0);
    alloc(p);
    return m;
}
static qkv_cross_block cross_block(void)
{
    qkv_cross_block m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_cross_block_init(&m, p, "d", block_config(), 6) == 0);
    alloc(p);
    return m;
}

MISUSE(qkv_self_attn_init, null_config)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, fresh(), "a", NULL, true), "cfg is NULL");
}
MISUSE(qkv_self_attn_init, rope_odd_head_size)
{
    qkv_self_attn m;
    qkv_block_config c = {.n_embd = 9, .n_head = 3, .n_layer = 1, .rope = true};
    FAILS_INT(qkv_self_attn_init(&m, fresh(), "a", &c, true), "head size 3 is odd");
}
MISUSE(qkv_self_attn_init, null_params)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, NULL, "a", block_config(), true), "p is NULL");
}
MISUSE(qkv_self_attn_init, null_name)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, fresh(), NULL, block_config(), true), "name is NULL");
}
MISUSE(qkv_self_attn_forward, null_module)
{
    FAILS_NULL(qkv_self_attn_forward(NULL, run(), btc(8), NULL, NULL), "m is NULL");
}
MISUSE(qkv_self_attn_forward, null_run)
{
    qkv_self_attn m = self_attn();
    FAILS_NULL(qkv_self_attn_forward(&m, NULL, btc(8), NULL, NULL), "r is NULL");
}
MISUSE(qkv_self_attn_forward, run_without_arena)
{
    qkv_self_attn m = self_attn();
    qkv_run r = {0};
    FAILS_NULL(qkv_self_attn_forward(&m, &r, btc(8), NULL, NULL), "arena is NULL");
}
MISUSE(qkv_self_attn_forward, null_x)
{
    qkv_self_attn m = self_attn();
    FAILS_NULL(qkv_self_attn_forward(&m, run(), NULL, NULL, NULL), "x is NULL");
}
MISUSE(qkv_self_attn_forward, before_params_alloc)
{
    qkv_self_attn m;
    qkv_self_attn_init(&m, fresh(), "a", block_config(), true);
    FAILS_NULL(qkv_self_attn_forward(&m, run(), btc(8), NULL, NULL), "qkv_params_alloc");
}
MISUSE(qkv_self_attn_forward, dropout_without_rng)
{
    qkv_self_attn m = self_attn();
    m.dropout = 0.5f;
    qkv_run r = {.arena = arena(), .train = true, .rng = NULL};
    FAILS_NULL(qkv_self_attn_forward(&m, &r, btc(8), NULL, NULL), "rng");
}
MISUSE(qkv_cross_attn_init, null_config)
{
    qkv_cross_attn m;
    FAILS_INT(qkv_cross_attn_init(&m, fresh(), "c", NULL, 6), "cfg is NULL");
}
MISUSE(qkv_cross_attn_init, zero_memory_width)
{
    qkv_cross_attn m;
    FAILS_INT(qkv_cross_attn_init(&m, fresh(), "c", block_config(), 0), "n_mem");
}
MISUSE(qkv_cross_attn_forward, null_memory)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward(&m, run(), btc(8), NULL, NULL, NULL), "memory is NULL");
}
MISUSE(qkv_cross_attn_forward, null_module)
{
    FAILS_NULL(qkv_cross_attn_forward(NULL, run(), btc(8), btc(6), NULL, NULL), "m is NULL");
}
MISUSE(qkv_cross_attn_forward, null_run)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward(&m, NULL, btc(8), btc(6), NULL, NULL), "r is NULL");
}
MISUSE(qkv_cross_attn_memory, null_k_out)
{
    qkv_cross_attn m = cross_attn();
    qkv_tensor *v;
    FAILS_INT(qkv_cross_attn_memory(&m, run(), btc(6), NULL, &v), "k is NULL");
}
MISUSE(qkv_cross_attn_memory, null_module)
{
    qkv_tensor *k, *v;
    FAILS_INT(qkv_cross_attn_memory(NULL, run(), btc(6), &k, &v), "m is NULL");
}
MISUSE(qkv_cross_attn_memory, null_memory)
{
    qkv_cross_attn m = cross_attn();
    qkv_tensor *k, *v;
    FAILS_INT(qkv_cross_attn_memory(&m, run(), NULL, &k, &v), "memory is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, null_k)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward_kv(&m, run(), btc(8), NULL, btc(8), NULL, NULL), "k is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, null_module)
{
    FAILS_NULL(qkv_cross_attn_forward_kv(NULL, run(), btc(8), btc(8), btc(8), NULL, NULL),
               "m is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, mismatched_kv)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward_kv(&m, run(), btc(8), btc(8), tensor(QKV_SHAPE(1, 4, 8)),
                                         NULL, NULL),
               "(1,4,8)");
}
MISUSE(qkv_block_init, null_module)
{
    FAILS_INT(qkv_block_init(NULL, fresh(), "b", block_config(), true), "m is NULL");
}
MISUSE(qkv_block_init, null_config)
{
    qkv_block m;
    FAILS_INT(qkv_block_init(&m, fresh(), "b", NULL, true), "cfg is NULL");
}
MISUSE(qkv_block_forward, null_module)
{
    FAILS_NULL(qkv_block_forward(NULL, run(), btc(8), NULL, NULL), "m is NULL");
}
MISUSE(qkv_block_forward, null_run)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward(&m, NULL, btc(8), NULL, NULL), "r is NULL");
}
MISUSE(qkv_block_forward, run_without_arena)
{
    qkv_block m = block();
    qkv_run r = {0};
    FAILS_NULL(qkv_block_forward(&m, &r, btc(8), NULL, NULL), "arena is NULL");
}
MISUSE(qkv_block_forward, before_params_alloc)
{
    qkv_block m;
    qkv_block_init(&m, fresh(), "b", block_config(), true);
    FAILS_NULL(qkv_block_forward(&m, run(), btc(8), NULL, NULL), "qkv_params_alloc");
}
MISUSE(qkv_block_forward, two_dims)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward(&m, run(), tensor(QKV_SHAPE(3, 8)), NULL, NULL), "(3,8)");
}
MISUSE(qkv_cross_block_init, null_module)
{
    FAILS_INT(qkv_cross_block_init(NULL, fresh(), "d", block_config(), 6), "m is NULL");
}
MISUSE(qkv_cross_block_init, null_params)
{
    qkv_cross_block m;
    FAILS_INT(qkv_cross_block_init(&m, NULL, "d", block_config(), 6), "p is NULL");
}
MISUSE(qkv_cross_block_forward, null_memory)
{
    qkv_cross_block m = cross_block();
    FAILS_NULL(qkv_cross_block_forward(&m, run(), btc(8), NULL, NULL, NULL, NULL),
               "memory is NULL");
}
MISUSE(qkv_cross_block_forward, null_module)
{
    FAILS_NULL(qkv_cross_block_forward(NULL, run(), btc(8), btc(6), NULL, NULL, NULL), "m is NULL");
}
MISUSE(qkv_cross_block_forward, null_run)
{
    qkv_cross_block m = cross_block();
    FAILS_NULL(qkv_cross_block_forward(&m, NULL, btc(8), btc(6), NULL, NULL, NULL), "r is NULL");
}

static qkv_kv_cache *cache(void)
{
    qkv_kv_cache *c = qkv_kv_cache_new(block_config(), 1, 8);
    MISUSE_ASSERT(c != NULL);
    return c;
}

MISUSE(qkv_kv_cache_new, null_config) { FAILS_NULL(qkv_kv_cache_new(NULL, 1, 8), "cfg is NULL"); }
MISUSE(qkv_kv_cache_new, zero_batch) { FAILS_NULL(qkv_kv_cache_new(block_config(), 0, 8), "0"); }
MISUSE(qkv_kv_cache_new, huge)
{
    qkv_block_config cfg = *block_config();
    cfg.n_layer = 1 << 20;
    FAILS_NULL(qkv_kv_cache_new(&cfg, 1 << 20, 1 << 20), "kv_cache");
}
MISUSE(qkv_kv_cache_free, null) { HARMLESS((qkv_kv_cache_free(NULL), 0)); }
MISUSE(qkv_kv_cache_reset, null) { REFUSES(qkv_kv_cache_reset(NULL), "c is NULL"); }
MISUSE(qkv_self_attn_forward_cached, null_cache)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, run(), btc(8), NULL, 0), "c is NULL");
}
MISUSE(qkv_self_attn_forward_cached, layer_out_of_range)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, run(), btc(8), cache(), 5), "layer 5");
}
MISUSE(qkv_self_attn_forward_cached, negative_layer)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, run(), btc(8), cache(), -1), "layer -1");
}
MISUSE(qkv_self_attn_forward_cached, null_module)
{
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(NULL, run(), btc(8), cache(), 0), "m is NULL");
}
MISUSE(qkv_block_forward_cached, null_cache)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_block_forward_cached(&m, run(), btc(8), NULL, 0), "c is NULL");
}
MISUSE(qkv_block_forward_cached, null_run)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_block_forward_cached(&m, NULL, btc(8), cache(), 0), "r is NULL");
}
MISUSE(qkv_cross_block_forward_cached, null_k)
{
    qkv_cross_block m = cross_block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_cross_block_forward_cached(&m, run(), btc(8), cache(), 0, NULL, btc(8), NULL),
               "k is NULL");
}
MISUSE(qkv_cross_block_forward_cached, null_module)
{
    qkv_set_grad_enabled(false);
    FAILS_NULL(
        qkv_cross_block_forward_cached(NULL, run(), btc(8), cache(), 0, btc(8), btc(8), NULL),
        "m is NULL");
}

/* ================================================================ gpt.h */

MISUSE(qkv_gpt_config_pack, null_config)
{
    uint8_t out[QKV_GPT_CONFIG_BYTES] = {0};
    REFUSES(qkv_gpt_config_pack(NULL, out), "cfg is NULL");
}
MISUSE(qkv_gpt_config_pack, null_out)
{
    REFUSES(qkv_gpt_config_pack(&gpt()->cfg, NULL), "out is NULL");
}
MISUSE(qkv_gpt_config_unpack, null_config)
{
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(&gpt()->cfg, blob);
    FAILS_INT(qkv_gpt_config_unpack(NULL, blob, sizeof blob), "cfg is NULL");
}
MISUSE(qkv_gpt_config_unpack, null_blob)
{
    qkv_gpt_config c;
    FAILS_INT(qkv_gpt_config_unpack(&c, NULL, QKV_GPT_CONFIG_BYTES), "blob is NULL");
}
MISUSE(qkv_gpt_config_unpack, short_blob)
{
    qkv_gpt_config c;
    FAILS_INT(qkv_gpt_config_unpack(&c, (uint8_t[4]){0}, 4), "4 bytes");
}
MISUSE(qkv_gpt_config_check, null) { FAILS_INT(qkv_gpt_config_check(NULL), "cfg is NULL"); }
MISUSE(qkv_gpt_config_check, heads_not_dividing)
{
    qkv_gpt_config c = gpt()->cfg;
    c.n_head = 3;
    FAILS_INT(qkv_gpt_config_check(&c), "n_head 3");
}
MISUSE(qkv_gpt_new, null_config) { FAILS_NULL(qkv_gpt_new(NULL, 1), "cfg is NULL"); }
MISUSE(qkv_gpt_new, rope_odd_head_size)
{
    qkv_gpt_config c = {.vocab_size = 5, .block_size = 4, .n_layer = 1, .n_head = 1, .n_embd = 5,
                        .rope = true};
    FAILS_NULL(qkv_gpt_new(&c, 1), "rope needs an even head size, not 5");
}
MISUSE(qkv_gpt_new, zero_vocab)
{
    qkv_gpt_config c = {.vocab_size = 0, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    FAILS_NULL(qkv_gpt_new(&c, 1), "vocab_size 0");
}
MISUSE(qkv_gpt_free, null) { HARMLESS((qkv_gpt_free(NULL), 0)); }
MISUSE(qkv_gpt_logits, null_model)
{
    FAILS_NULL(qkv_gpt_logits(NULL, run(), (int32_t[]){0}, 1, 1, NULL), "m is NULL");
}
MISUSE(qkv_gpt_logits, null_run)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), NULL, (int32_t[]){0}, 1, 1, NULL), "r is NULL");
}
MISUSE(qkv_gpt_logits, run_without_arena)
{
    qkv_run r = {0};
    FAILS_NULL(qkv_gpt_logits(gpt(), &r, (int32_t[]){0}, 1, 1, NULL), "arena is NULL");
}
MISUSE(qkv_gpt_logits, null_idx)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), run(), NULL, 1, 1, NULL), "idx is NULL");
}
MISUSE(qkv_gpt_logits, negative_batch)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), run(), (int32_t[]){0}, -1, 1, NULL), "-1");
}
MISUSE(qkv_gpt_logits, too_long)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), run(), (int32_t[9]){0}, 1, 9, NULL), "9");
}
MISUSE(qkv_gpt_logits, dropout_without_rng)
{
    qkv_gpt_config c = gpt()->cfg;
    c.dropout = 0.5;
    qkv_gpt *m = qkv_gpt_new(&c, 1);
    MISUSE_ASSERT(m != NULL);
    qkv_run r = {.arena = arena(), .train = true, .rng = NULL};
    FAILS_NULL(qkv_gpt_logits(m, &r, (int32_t[]){0, 1}, 1, 2, NULL), "rng");
    qkv_gpt_free(m);
}
MISUSE(qkv_gpt_loss, null_targets)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), run(), (int32_t[]){0}, NULL, 1, 1), "targets is NULL");
}
MISUSE(qkv_gpt_loss, null_model)
{
    FAILS_NULL(qkv_gpt_loss(NULL, run(), (int32_t[]){0}, (int32_t[]){0}, 1, 1), "m is NULL");
}
MISUSE(qkv_gpt_loss, null_run)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), NULL, (int32_t[]){0}, (int32_t[]){0}, 1, 1), "r is NULL");
}
MISUSE(qkv_gpt_loss, bad_target)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), run(), (int32_t[]){0}, (int32_t[]){9}, 1, 1), "target 9");
}

MISUSE(qkv_sample_opts_check, null) { FAILS_INT(qkv_sample_opts_check(NULL), "opts is NULL"); }
MISUSE(qkv_sample_opts_check, negative_temperature)
{
    FAILS_INT(qkv_sample_opts_check(&(qkv_sample_opts){.temperature = -1, .top_p = 1}),
              "temperature -1");
}
MISUSE(qkv_sample_token, null_logits)
{
    qkv_real scratch[10];
    FAILS_INT(qkv_sample_token(NULL, 5, &OPTS, rng(), scratch), "logits is NULL");
}
MISUSE(qkv_sample_token, null_opts)
{
    qkv_real logits[5] = {0}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, NULL, rng(), scratch), "opts is NULL");
}
MISUSE(qkv_sample_token, null_rng)
{
    qkv_real logits[5] = {0}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, NULL, scratch), "rng is NULL");
}
MISUSE(qkv_sample_token, null_scratch)
{
    qkv_real logits[5] = {0};
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, rng(), NULL), "scratch is NULL");
}
MISUSE(qkv_sample_token, zero_vocab)
{
    qkv_real logits[1] = {0}, scratch[2];
    FAILS_INT(qkv_sample_token(logits, 0, &OPTS, rng(), scratch), "V 0");
}
MISUSE(qkv_sample_token, negative_temperature)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = -1, .top_p = 1};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "temperature -1");
}
MISUSE(qkv_sample_token, top_p_nan)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = 1, .top_p = NAN};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "top_p");
}
MISUSE(qkv_sample_token, nan_logits)
{
    qkv_real logits[5] = {NAN, NAN, NAN, NAN, NAN}, scratch[10];
    FAILS_INT(qkv_sample_token(logits, 5, &OPTS, rng(), scratch), "logits");
}
MISUSE(qkv_gpt_generate, null_model)
{
    FAILS_INT(qkv_gpt_generate(NULL, (int32_t[]){1}, 1, 2, &OPTS, rng(), true, NULL, NULL),
              "m is NULL");
}
MISUSE(qkv_gpt_generate, null_prompt)
{
    FAILS_INT(qkv_gpt_generate(gpt(), NULL, 1, 2, &OPTS, rng(), true, NULL, NULL),
              "prompt is NULL");
}
MISUSE(qkv_gpt_generate, null_opts)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, NULL, rng(), true, NULL, NULL),
              "opts is NULL");
}
MISUSE(qkv_gpt_generate, null_rng)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, &OPTS, NULL, true, NULL, NULL),
              "rng is NULL");
}
MISUSE(qkv_gpt_generate, empty_prompt)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 0, 2, &OPTS, rng(), true, NULL, NULL), "0");
}
MISUSE(qkv_gpt_generate, negative_temperature)
{
    qkv_sample_opts o = {.temperature = -1, .top_p = 1};
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, &o, rng(), false, NULL, NULL),
              "temperature -1");
}

static const int32_t PROMPT[2] = {1, 2};

MISUSE(qkv_generate, null_lm)
{
    FAILS_INT(qkv_generate(NULL, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm is NULL");
}
MISUSE(qkv_generate, null_logits_fn)
{
    qkv_lm lm = FLAT;
    lm.logits = NULL;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->logits is NULL");
}
MISUSE(qkv_generate, null_prompt)
{
    FAILS_INT(qkv_generate(&FLAT, NULL, 2, 3, &OPTS, rng(), NULL, NULL), "prompt is NULL");
}
MISUSE(qkv_generate, null_opts)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, 3, NULL, rng(), NULL, NULL), "opts is NULL");
}
MISUSE(qkv_generate, null_rng)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, 3, &OPTS, NULL, NULL, NULL), "rng is NULL");
}
MISUSE(qkv_generate, empty_prompt)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 0, 3, &OPTS, rng(), NULL, NULL), "got 0");
}
MISUSE(qkv_generate, negative_n_new)
{
    FAILS_INT(qkv_generate(&FLAT, PROMPT, 2, -1, &OPTS, rng(), NULL, NULL), "-1 new tokens");
}
MISUSE(qkv_generate, prompt_outside_vocab)
{
    FAILS_INT(qkv_generate(&FLAT, (int32_t[]){1, 5}, 2, 3, &OPTS, rng(), NULL, NULL), "token 5");
}
MISUSE(qkv_generate, context_0)
{
    qkv_lm lm = FLAT;
    lm.context = 0;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->context 0");
}
MISUSE(qkv_generate, vocab_int_min)
{
    qkv_lm lm = FLAT;
    lm.vocab_size = -2147483647 - 1;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "lm->vocab_size");
}
MISUSE(qkv_generate, failing_model)
{
    qkv_lm lm = FLAT;
    lm.model = &lm;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "flat: asked to fail");
}
MISUSE(qkv_generate, logits_of_the_wrong_size)
{
    qkv_lm lm = FLAT;
    lm.vocab_size = 3;
    FAILS_INT(qkv_generate(&lm, PROMPT, 2, 3, &OPTS, rng(), NULL, NULL), "(1,5)", "vocab_size 3");
}
MISUSE(qkv_generate_text, null_lm)
{
    FAILS_INT(qkv_generate_text(NULL, tok(), "a", 3, &OPTS, rng(), NULL, NULL), "lm is NULL");
}
MISUSE(qkv_generate_text, null_tok)
{
    FAILS_INT(qkv_generate_text(&FLAT, NULL, "a", 3, &OPTS, rng(), NULL, NULL), "tok is NULL");
}
MISUSE(qkv_generate_text, null_prompt)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), NULL, 3, &OPTS, rng(), NULL, NULL), "prompt is NULL");
}
MISUSE(qkv_generate_text, empty_prompt)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), "", 3, &OPTS, rng(), NULL, NULL), "empty");
}
MISUSE(qkv_generate_text, vocab_mismatch)
{
    FAILS_INT(qkv_generate_text(&FLAT, tok(), "a", 3, &OPTS, rng(), NULL, NULL), "3 tokens",
              "vocab_size is 5");
}
MISUSE(qkv_generate_text, prompt_outside_vocab)
{
    qkv_tokenizer t;
    qkv_tokenizer_build(&t, "abcde", 5);
    FAILS_INT(qkv_generate_text(&FLAT, &t, "az", 3, &OPTS, rng(), NULL, NULL), "'z'");
}
MISUSE(qkv_generate_text, null_opts)
{
    qkv_tokenizer t;
    qkv_tokenizer_build(&t, "abcde", 5);
    FAILS_INT(qkv_generate_text(&FLAT, &t, "a", 3, NULL, rng(), NULL, NULL), "opts is NULL");
}
MISUSE(qkv_gpt_lm_new, null_model) { FAILS_NULL(qkv_gpt_lm_new(NULL, true), "m is NULL"); }
MISUSE(qkv_gpt_lm_free, null) { HARMLESS((qkv_gpt_lm_free(NULL), 0)); }
MISUSE(qkv_gpt_lm_free, not_made_by_lm_new)
{
    qkv_lm lm = FLAT;
    REFUSES(qkv_gpt_lm_free(&lm), "not made by qkv_gpt_lm_new");
}

/* ================================================================ trainer.h */

MISUSE(qkv_train_defaults, takes_no_arguments) { MISUSE_ASSERT(qkv_train_defaults().iters > 0); }
MISUSE(qkv_trainer_new, null_model_config)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_trainer_new(NULL, &tc, corpus()), "mc is NULL");
}
MISUSE(qkv_trainer_new, null_train_config)
{
    qkv_gpt_config mc = {
        .vocab_size = corpus()->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    FAILS_NULL(qkv_trainer_new(&mc, NULL, corpus()), "tc is NULL");
}
MISUSE(qkv_trainer_new, null_corpus)
{
    qkv_gpt_config mc = {.vocab_size = 5, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_trainer_new(&mc, &tc, NULL), "corpus is NULL");
}
MISUSE(qkv_trainer_new, nan_lr)
{
    qkv_gpt_config mc = {
        .vocab_size = corpus()->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    qkv_train_config tc = qkv_train_defaults();
    tc.lr = NAN;
    FAILS_NULL(qkv_trainer_new(&mc, &tc, corpus()), "lr");
}
MISUSE(qkv_trainer_free, null) { HARMLESS((qkv_trainer_free(NULL), 0)); }
MISUSE(qkv_trainer_step, null) { FAILS_INT(qkv_trainer_step(NULL, NULL, NULL), "t is NULL"); }
MISUSE(qkv_trainer_eval, null) { FAILS_NAN(qkv_trainer_eval(NULL, QKV_SPLIT_VAL), "t is NULL"); }
MISUSE(qkv_trainer_eval, split_9)
{
    FAILS_NAN(qkv_trainer_eval(trainer(), (qkv_split)9), "split 9");
}
MISUSE(qkv_trainer_eval, split_negative)
{
    FAILS_NAN(qkv_trainer_eval(trainer(), (qkv_split)-1), "split -1");
}
MISUSE(qkv_trainer_save, null_trainer)
{
    FAILS_INT(qkv_trainer_save(NULL, tmp_path("t.ckpt")), "t is NULL");
}
MISUSE(qkv_trainer_save, null_path)
{
    FAILS_INT(qkv_trainer_save(trainer(), NULL), "path is NULL");
}
MISUSE(qkv_trainer_resume, null_path)
{
    FAILS_NULL(qkv_trainer_resume(NULL, text_path(), 0), "path is NULL");
}
MISUSE(qkv_trainer_resume, null_corpus_path)
{
    FAILS_NULL(qkv_trainer_resume(ckpt_path(), NULL, 0), "corpus_path is NULL");
}
MISUSE(qkv_trainer_resume, negative_iters)
{
    FAILS_NULL(qkv_trainer_resume(ckpt_path(), text_path(), -5), "-5");
}
MISUSE(qkv_gpt_mean_loss, null_model)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(NULL, &trainer()->eval[0], 1, arena(), x, y), "m is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_sampler)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, NULL, 1, arena(), x, y), "s is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_arena)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 1, NULL, x, y),
              "arena is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_x)
{
    int32_t y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 1, arena(), NULL, y),
              "x is NULL");
}
MISUSE(qkv_gpt_mean_loss, zero_iters)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 0, arena(), x, y),
              "iters 0");
}
MISUSE(qkv_gpt_load, null_path)
{
    qkv_tokenizer v;
    FAILS_NULL(qkv_gpt_load(NULL, &v), "path is NULL");
}
MISUSE(qkv_gpt_load, null_vocab) { FAILS_NULL(qkv_gpt_load(ckpt_path(), NULL), "vocab is NULL"); }

/* ================================================================ training.h */

MISUSE(qkv_train_config_check, null) { FAILS_INT(qkv_train_config_check(NULL), "tc is NULL"); }
MISUSE(qkv_train_config_check, nan_lr)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.lr = NAN;
    FAILS_INT(qkv_train_config_check(&tc), "lr nan");
}
MISUSE(qkv_train_config_check, negative_batch)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.batch_size = -1;
    FAILS_INT(qkv_train_config_check(&tc), "batch_size -1");
}
MISUSE(qkv_training_new, null_model)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(NULL, &tc), "model is NULL");
}
MISUSE(qkv_training_new, null_config)
{
    qkv_training_model plug = trainer()->run->model;
    FAILS_NULL(qkv_training_new(&plug, NULL), "tc is NULL");
}
MISUSE(qkv_training_new, no_loss)
{
    qkv_training_model plug = {.kind = "x", .params = params()};
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "loss");
}
MISUSE(qkv_training_new, too_many_streams)
{
    qkv_training_model plug = trainer()->run->model;
    plug.n_rngs = 99;
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "99");
}
MISUSE(qkv_training_free, null) { HARMLESS((qkv_training_free(NULL), 0)); }
MISUSE(qkv_training_step, null) { FAILS_INT(qkv_training_step(NULL, NULL, NULL), "t is NULL"); }
MISUSE(qkv_training_lr, null) { FAILS_NAN(qkv_training_lr(NULL, 0), "t is NULL"); }
MISUSE(qkv_training_lr, negative_step) { FAILS_NAN(qkv_training_lr(trainer()->run, -3), "-3"); }
MISUSE(qkv_training_eval, null) { FAILS_NAN(qkv_training_eval(NULL, 0), "t is NULL"); }
MISUSE(qkv_training_eval, which_9) { FAILS_NAN(qkv_training_eval(trainer()->run, 9), "9"); }
MISUSE(qkv_training_eval, which_negative)
{
    FAILS_NAN(qkv_training_eval(trainer()->run, -1), "-1");
}
MISUSE(qkv_training_set_iters, null) { FAILS_INT(qkv_training_set_iters(NULL, 5), "t is NULL"); }
MISUSE(qkv_training_set_iters, zero)
{
    FAILS_INT(qkv_training_set_iters(trainer()->run, 0), "iters 0");
}
MISUSE(qkv_training_set_iters, huge)
{
    FAILS_INT(qkv_training_set_iters(trainer()->run, INT64_MAX), "iters");
}
MISUSE(qkv_training_save, null_run)
{
    FAILS_INT(qkv_training_save(NULL, tmp_path("r.ckpt")), "t is NULL");
}
MISUSE(qkv_training_save, null_path)
{
    FAILS_INT(qkv_training_save(trainer()->run, NULL), "path is NULL");
}
MISUSE(qkv_training_config_load, null_config)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_training_config_load(NULL, ck, QKV_GPT_CONFIG_BYTES), "tc is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_config_load, null_checkpoint)
{
    qkv_train_config tc;
    FAILS_INT(qkv_training_config_load(&tc, NULL, QKV_GPT_CONFIG_BYTES), "ck is NULL");
}
MISUSE(qkv_training_config_load, huge_model_bytes)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    qkv_train_config tc;
    FAILS_INT(qkv_training_config_load(&tc, ck, SIZE_MAX), "config of");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_load, null_run)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_training_load(NULL, ck), "t is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_load, null_checkpoint)
{
    FAILS_INT(qkv_training_load(trainer()->run, NULL), "ck is NULL");
}

/* ================================================================ seq2seq.h */

MISUSE(qkv_seq2seq_config_pack, null_config)
{
    uint8_t out[QKV_SEQ2SEQ_CONFIG_BYTES];
    REFUSES(qkv_seq2seq_config_pack(NULL, out), "cfg is NULL");
}
MISUSE(qkv_seq2seq_config_pack, null_out)
{
    REFUSES(qkv_seq2seq_config_pack(&s2s()->cfg, NULL), "out is NULL");
}
MISUSE(qkv_seq2seq_config_unpack, null_blob)
{
    qkv_seq2seq_config c;
    FAILS_INT(qkv_seq2seq_config_unpack(&c, NULL, QKV_SEQ2SEQ_CONFIG_BYTES), "blob is NULL");
}
MISUSE(qkv_seq2seq_config_unpack, null_config)
{
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(&s2s()->cfg, blob);
    FAILS_INT(qkv_seq2seq_config_unpack(NULL, blob, sizeof blob), "cfg is NULL");
}
MISUSE(qkv_seq2seq_config_check, null) { FAILS_INT(qkv_seq2seq_config_check(NULL), "cfg is NULL"); }
MISUSE(qkv_seq2seq_config_check, zero_layers)
{
    qkv_seq2seq_config c = s2s()->cfg;
    c.n_layer = 0;
    FAILS_INT(qkv_seq2seq_config_check(&c), "n_layer 0");
}
MISUSE(qkv_seq2seq_new, null_config) { FAILS_NULL(qkv_seq2seq_new(NULL, tok(), 1), "cfg is NULL"); }
MISUSE(qkv_seq2seq_new, null_chars)
{
    FAILS_NULL(qkv_seq2seq_new(&s2s()->cfg, NULL, 1), "chars is NULL");
}
MISUSE(qkv_seq2seq_free, null) { HARMLESS((qkv_seq2seq_free(NULL), 0)); }
MISUSE(qkv_seq2seq_zero_cross, null) { REFUSES(qkv_seq2seq_zero_cross(NULL), "m is NULL"); }
MISUSE(qkv_seq2seq_batch_new, null_model)
{
    FAILS_NULL(qkv_seq2seq_batch_new(NULL, 2), "m is NULL");
}
MISUSE(qkv_seq2seq_batch_new, zero_cap) { FAILS_NULL(qkv_seq2seq_batch_new(s2s(), 0), "0"); }
MISUSE(qkv_seq2seq_batch_free, null) { HARMLESS((qkv_seq2seq_batch_free(NULL), 0)); }
MISUSE(qkv_seq2seq_batch_fill, null_batch)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), NULL, 1, in, NULL), "b is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_inputs)
{
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 1, NULL, NULL), "inputs is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_input_string)
{
    const char *in[2] = {"1.2.2003", NULL};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 2, in, NULL), "inputs[1] is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_target_string)
{
    const char *in[1] = {"1.2.2003"}, *out[1] = {NULL};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 1, in, out), "targets[0] is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, too_many)
{
    const char *in[3] = {"a", "b", "c"};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 3, in, NULL), "3");
}
MISUSE(qkv_seq2seq_batch_fill, null_model)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_batch_fill(NULL, s2s_batch(), 1, in, NULL), "m is NULL");
}
MISUSE(qkv_seq2seq_encode, null_src)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), run(), NULL, NULL, 1, 2), "src is NULL");
}
MISUSE(qkv_seq2seq_encode, null_model)
{
    FAILS_NULL(qkv_seq2seq_encode(NULL, run(), (int32_t[]){3, 4}, NULL, 1, 2), "m is NULL");
}
MISUSE(qkv_seq2seq_encode, null_run)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), NULL, (int32_t[]){3, 4}, NULL, 1, 2), "r is NULL");
}
MISUSE(qkv_seq2seq_encode, too_long)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), run(), (int32_t[64]){3}, NULL, 1, 64), "64");
}
MISUSE(qkv_seq2seq_encode, zero_batch)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), run(), (int32_t[]){3}, NULL, 0, 1), "0");
}
MISUSE(qkv_seq2seq_decode, null_memory)
{
    FAILS_NULL(qkv_seq2seq_decode(s2s(), run(), NULL, NULL, (int32_t[]){1}, 1, 1, NULL),
               "memory is NULL");
}
MISUSE(qkv_seq2seq_decode, null_dec_in)
{
    qkv_tensor *mem = qkv_seq2seq_encode(s2s(), run(), (int32_t[]){3, 4}, NULL, 1, 2);
    MISUSE_ASSERT(mem != NULL);
    FAILS_NULL(qkv_seq2seq_decode(s2s(), run(), mem, NULL, NULL, 1, 1, NULL), "dec_in is NULL");
}
MISUSE(qkv_seq2seq_decode, null_model)
{
    FAILS_NULL(qkv_seq2seq_decode(NULL, run(), tensor(QKV_SHAPE(1, 2, 16)), NULL, (int32_t[]){1}, 1,
                                  1, NULL),
               "m is NULL");
}
MISUSE(qkv_seq2seq_decode, wrong_memory_shape)
{
    FAILS_NULL(qkv_seq2seq_decode(s2s(), run(), tensor(QKV_SHAPE(2, 16)), NULL, (int32_t[]){1}, 1,
                                  1, NULL),
               "(2,16)");
}
MISUSE(qkv_seq2seq_loss, null_batch)
{
    FAILS_NULL(qkv_seq2seq_loss(s2s(), run(), NULL), "b is NULL");
}
MISUSE(qkv_seq2seq_loss, null_model)
{
    FAILS_NULL(qkv_seq2seq_loss(NULL, run(), s2s_batch()), "m is NULL");
}
MISUSE(qkv_seq2seq_loss, null_run)
{
    FAILS_NULL(qkv_seq2seq_loss(s2s(), NULL, s2s_batch()), "r is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_src)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), NULL, NULL, 1, 2, true, out), "src is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_out)
{
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3, 4}, NULL, 1, 2, true, NULL), "out is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_model)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(NULL, (int32_t[]){3, 4}, NULL, 1, 2, true, out), "m is NULL");
}
MISUSE(qkv_seq2seq_greedy, zero_batch)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3, 4}, NULL, 0, 2, false, out), "0");
}
MISUSE(qkv_seq2seq_detokenize, null_row)
{
    char text[64];
    REFUSES(qkv_seq2seq_detokenize(s2s(), NULL, text), "row is NULL");
}
MISUSE(qkv_seq2seq_detokenize, null_text)
{
    REFUSES(qkv_seq2seq_detokenize(s2s(), (int32_t[64]){2}, NULL), "text is NULL");
}
MISUSE(qkv_seq2seq_detokenize, null_model)
{
    char text[64] = "x";
    REFUSES(qkv_seq2seq_detokenize(NULL, (int32_t[64]){2}, text), "m is NULL");
    MISUSE_ASSERT(text[0] == '\0');
}
MISUSE(qkv_seq2seq_detokenize, id_out_of_range)
{
    char text[64];
    int32_t row[64] = {500, 2};
    REFUSES(qkv_seq2seq_detokenize(s2s(), row, text), "500");
}
MISUSE(qkv_seq2seq_translate, null_inputs)
{
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, NULL, outs), "inputs is NULL");
}
MISUSE(qkv_seq2seq_translate, null_outputs)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, NULL), "outputs is NULL");
}
MISUSE(qkv_seq2seq_translate, null_input_string)
{
    const char *in[1] = {NULL};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, outs), "inputs[0] is NULL");
}
MISUSE(qkv_seq2seq_translate, null_output_buffer)
{
    const char *in[1] = {"1.2.2003"};
    char *outs[1] = {NULL};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, outs), "outputs[0] is NULL");
}
MISUSE(qkv_seq2seq_translate, negative_n)
{
    const char *in[1] = {"1.2.2003"};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), -1, in, outs), "-1");
}
MISUSE(qkv_seq2seq_translate, null_model)
{
    const char *in[1] = {"1.2.2003"};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(NULL, 1, in, outs), "m is NULL");
}
MISUSE(qkv_seq2seq_save, null_model)
{
    FAILS_INT(qkv_seq2seq_save(NULL, tmp_path("s.ckpt"), 0), "m is NULL");
}
MISUSE(qkv_seq2seq_save, null_path) { FAILS_INT(qkv_seq2seq_save(s2s(), NULL, 0), "path is NULL"); }
MISUSE(qkv_seq2seq_save, negative_step)
{
    FAILS_INT(qkv_seq2seq_save(s2s(), tmp_path("s.ckpt"), -1), "step -1");
}
MISUSE(qkv_seq2seq_load, null_path) { FAILS_NULL(qkv_seq2seq_load(NULL), "path is NULL"); }
MISUSE(qkv_seq2seq_load, a_gpt_checkpoint) { FAILS_NULL(qkv_seq2seq_load(ckpt_path()), "gpt"); }
MISUSE(qkv_seq2seq_task_find, null) { FAILS_NULL(qkv_seq2seq_task_find(NULL), "name is NULL"); }
MISUSE(qkv_seq2seq_task_find, unknown) { FAILS_NULL(qkv_seq2seq_task_find("poems"), "poems"); }
MISUSE(qkv_seq2seq_config_for, null_task)
{
    qkv_seq2seq_config c;
    REFUSES(c = qkv_seq2seq_config_for(NULL, 1, 2, 16, 0), "task is NULL");
    MISUSE_ASSERT(qkv_seq2seq_config_check(&c) < 0); /* an unusable config, refused later */
}
MISUSE(qkv_seq2seq_accuracy, null_model)
{
    FAILS_NAN(qkv_seq2seq_accuracy(NULL, qkv_seq2seq_task_find("dates"), 2, 1, NULL, NULL),
              "m is NULL");
}
MISUSE(qkv_seq2seq_accuracy, null_task)
{
    FAILS_NAN(qkv_seq2seq_accuracy(s2s(), NULL, 2, 1, NULL, NULL), "task is NULL");
}
MISUSE(qkv_seq2seq_accuracy, zero_pairs)
{
    FAILS_NAN(qkv_seq2seq_accuracy(s2s(), qkv_seq2seq_task_find("dates"), 0, 1, NULL, NULL), "0");
}
MISUSE(qkv_seq2seq_trainer_new, null_model_config)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_seq2seq_trainer_new(NULL, &tc, qkv_seq2seq_task_find("dates")), "mc is NULL");
}
MISUSE(qkv_seq2seq_trainer_new, null_train_config)
{
    FAILS_NULL(qkv_seq2seq_trainer_new(&s2s()->cfg, NULL, qkv_seq2seq_task_find("dates")),
               "tc is NULL");
}
MISUSE(qkv_seq2seq_trainer_new, null_task)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_seq2seq_trainer_new(&s2s()->cfg, &tc, NULL), "task is NULL");
}
MISUSE(qkv_seq2seq_trainer_free, null) { HARMLESS((qkv_seq2seq_trainer_free(NULL), 0)); }
MISUSE(qkv_seq2seq_trainer_step, null)
{
    FAILS_INT(qkv_seq2seq_trainer_step(NULL, NULL, NULL), "t is NULL");
}
MISUSE(qkv_seq2seq_trainer_eval, null) { FAILS_NAN(qkv_seq2seq_trainer_eval(NULL), "t is NULL"); }
MISUSE(qkv_seq2seq_trainer_save, null_trainer)
{
    FAILS_INT(qkv_seq2seq_trainer_save(NULL, tmp_path("s.ckpt")), "t is NULL");
}
MISUSE(qkv_seq2seq_trainer_save, null_path)
{
    FAILS_INT(qkv_seq2seq_trainer_save(s2s_trainer(), NULL), "path is NULL");
}
MISUSE(qkv_seq2seq_trainer_resume, null_path)
{
    FAILS_NULL(qkv_seq2seq_trainer_resume(NULL, qkv_seq2seq_task_find("dates"), 0), "path is NULL");
}
MISUSE(qkv_seq2seq_trainer_resume, null_task)
{
    const char *path = tmp_path("s2s_run.ckpt");
    MISUSE_ASSERT(qkv_seq2seq_trainer_save(s2s_trainer(), path) == 0);
    FAILS_NULL(qkv_seq2seq_trainer_resume(path, NULL, 0), "task is NULL");
}
MISUSE(qkv_seq2seq_trainer_resume, negative_iters)
{
    FAILS_NULL(qkv_seq2seq_trainer_resume(tmp_path("none"), qkv_seq2seq_task_find("dates"), -2),
               "-2");
}
MISUSE(qkv_seq2seq_trainer_resume, a_gpt_checkpoint)
{
    FAILS_NULL(qkv_seq2seq_trainer_resume(ckpt_path(), qkv_seq2seq_task_find("dates"), 0), "gpt");
}
MISUSE(qkv_seq2seq_cross_weights, null_model)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(NULL, run(), "1.2.2003", 0, out), "m is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_input)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), run(), NULL, 0, out), "input is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_output)
{
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), run(), "1.2.2003", 0, NULL), "output is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_run)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), NULL, "1.2.2003", 0, out), "r is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, layer_out_of_range)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), run(), "1.2.2003", 3, out), "layer 3");
}
MISUSE(qkv_attn_svg, null_path)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(NULL, tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "path is NULL");
}
MISUSE(qkv_attn_svg, null_weights)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), NULL, &s), "weights is NULL");
}
MISUSE(qkv_attn_svg, null_spec)
{
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), NULL), "spec is NULL");
}
MISUSE(qkv_attn_svg, bad_head)
{
    qkv_attn_svg_spec s = {.head = 5};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "head 5");
}
MISUSE(qkv_attn_svg, three_dims)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(2, 3, 3)), &s), "(2,3,3)");
}

/* ================================================================ viz.h */

MISUSE(qkv_attn_html_gpt, null_path)
{
    FAILS_INT(qkv_attn_html_gpt(NULL, gpt(), tok(), "ab"), "path is NULL");
}
MISUSE(qkv_attn_html_gpt, null_model)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), NULL, tok(), "ab"), "m is NULL");
}
MISUSE(qkv_attn_html_gpt, null_vocab)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), NULL, "ab"), "vocab is NULL");
}
MISUSE(qkv_attn_html_gpt, null_text)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), tok(), NULL), "text is NULL");
}
MISUSE(qkv_attn_html_gpt, text_too_long)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), tok(), "abcabcabcabc"), "12 characters");
}
MISUSE(qkv_attn_html_seq2seq, null_path)
{
    FAILS_INT(qkv_attn_html_seq2seq(NULL, s2s(), "1.2.2003"), "path is NULL");
}
MISUSE(qkv_attn_html_seq2seq, null_model)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), NULL, "1.2.2003"), "m is NULL");
}
MISUSE(qkv_attn_html_seq2seq, null_input)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), s2s(), NULL), "input is NULL");
}
MISUSE(qkv_attn_html_seq2seq, empty_input)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), s2s(), ""), "input");
}

/* ================================================================ more sizes out of range */

MISUSE(qkv_seq2seq_greedy, zero_length)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3}, NULL, 1, 0, true, out), "0");
}
MISUSE(qkv_seq2seq_greedy, longer_than_the_model)
{
    static int32_t src[1000], out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), src, NULL, 1, 1000, true, out), "1000");
}
MISUSE(qkv_embed_forward, null_shape)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, run(), (int32_t[]){0}, 1, NULL), "shape is NULL");
}
MISUSE(qkv_embed_forward, id_out_of_range)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, run(), (int32_t[]){7}, QKV_SHAPE(1)), "id 7");
}
MISUSE(qkv_reshape, ndim_0)
{
    FAILS_NULL(qkv_reshape(arena(), tensor(SHAPE23), 0, (int[]){6}), "not 0");
}
MISUSE(qkv_slice, zero_len) { FAILS_NULL(qkv_slice(arena(), tensor(SHAPE23), 0, 0), "[0, 0)"); }
MISUSE(qkv_layernorm, nan_eps)
{
    FAILS_NULL(qkv_layernorm(arena(), tensor(SHAPE23), NULL, NULL, NAN), "eps");
}
MISUSE(qkv_dropout, negative_p)
{
    FAILS_NULL(qkv_dropout(arena(), tensor(SHAPE23), -0.5f, rng(), true), "p");
}
MISUSE(qkv_checkpoint_save, kind_too_long)
{
    qkv_ckpt_model m = {.kind = "a-model-kind-much-longer-than-thirty-one-characters"};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "kind");
}
MISUSE(qkv_checkpoint_open, kind_not_matching)
{
    FAILS_NULL(qkv_checkpoint_open(ckpt_path(), "seq2seq"), "gpt");
}
MISUSE(qkv_kv_cache_new, heads_not_dividing)
{
    qkv_block_config cfg = *block_config();
    cfg.n_head = 3;
    FAILS_NULL(qkv_kv_cache_new(&cfg, 1, 8), "n_head 3");
}
MISUSE(qkv_block_forward_cached, grad_mode_on)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward_cached(&m, run(), btc(8), cache(), 0), "grad");
}
MISUSE(qkv_block_forward_cached, cache_full)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    qkv_kv_cache *c = cache(); /* 8 positions */
    MISUSE_ASSERT(qkv_block_forward_cached(&m, run(), tensor(QKV_SHAPE(1, 6, 8)), c, 0) != NULL);
    FAILS_NULL(qkv_block_forward_cached(&m, run(), tensor(QKV_SHAPE(1, 6, 8)), c, 0), "do not fit");
}
MISUSE(qkv_gpt_generate, negative_new)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, -3, &OPTS, rng(), true, NULL, NULL), "-3");
}
MISUSE(qkv_gpt_generate, prompt_id_out_of_range)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){9}, 1, 2, &OPTS, rng(), true, NULL, NULL), "9");
}
MISUSE(qkv_sample_token, top_k_negative)
{
    qkv_real logits[5] = {0}, scratch[10];
    qkv_sample_opts o = {.temperature = 1, .top_k = -1, .top_p = 1};
    FAILS_INT(qkv_sample_token(logits, 5, &o, rng(), scratch), "top_k -1");
}

/* ================================================================ file.h */

MISUSE(qkv_protect_input, null_path) { FAILS_INT(qkv_protect_input(NULL), "path is NULL"); }
MISUSE(qkv_output_check, null_path) { FAILS_INT(qkv_output_check(NULL), "path is NULL"); }
MISUSE(qkv_output_lock, null_path) { FAILS_INT(qkv_output_lock(NULL), "path is NULL"); }
MISUSE(qkv_output_lock, empty_path) { FAILS_INT(qkv_output_lock(""), "path is empty"); }
MISUSE(qkv_output_unlock, null_path) { HARMLESS((qkv_output_unlock(NULL), 0)); }
MISUSE(qkv_output_unlock, not_held) { HARMLESS((qkv_output_unlock(tmp_path("never.ckpt")), 0)); }
MISUSE(qkv_output_open, null_path) { FAILS_NULL(qkv_output_open(NULL), "path is NULL"); }
MISUSE(qkv_output_file, null_output) { MISUSE_ASSERT(qkv_output_file(NULL) == NULL); }
MISUSE(qkv_output_publish, null_output) { FAILS_INT(qkv_output_publish(NULL), "o is NULL"); }
MISUSE(qkv_output_commit, null_output) { FAILS_INT(qkv_output_commit(NULL), "o is NULL"); }
MISUSE(qkv_output_abort, null_output) { HARMLESS((qkv_output_abort(NULL), 0)); }
MISUSE(qkv_input_open, null_path) { FAILS_NULL(qkv_input_open(NULL), "path is NULL"); }

/* ================================================================ the suite */

START_TEST(test_case) { misuse_run(_i); }
END_TEST

static Suite *misuse_suite(void)
{
    Suite *s = suite_create("misuse");
    TCase *tc = tcase_create("every public function");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_case, 0, misuse_count());
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(misuse_suite)
