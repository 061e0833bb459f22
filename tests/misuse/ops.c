/* Misuse cases for qkv/ops.h: the tensor ops. */
#include <limits.h>

#include "misuse.h"

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
UNARY_CASES(silu)
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
MISUSE(qkv_dropout, negative_p)
{
    FAILS_NULL(qkv_dropout(arena(), tensor(SHAPE23), -0.5f, rng(), true), "p");
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
MISUSE(qkv_reshape, ndim_0)
{
    FAILS_NULL(qkv_reshape(arena(), tensor(SHAPE23), 0, (int[]){6}), "not 0");
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
MISUSE(qkv_slice, zero_len) { FAILS_NULL(qkv_slice(arena(), tensor(SHAPE23), 0, 0), "[0, 0)"); }

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
MISUSE(qkv_layernorm, nan_eps)
{
    FAILS_NULL(qkv_layernorm(arena(), tensor(SHAPE23), NULL, NULL, NAN), "eps");
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

#define QK2 tensor(QKV_SHAPE(1, 3, 4)), tensor(QKV_SHAPE(1, 3, 4))
MISUSE(qkv_attention_weights, null_arena)
{
    FAILS_NULL(qkv_attention_weights(NULL, QK2, 2, NULL, 0, 3), "arena is NULL");
}
MISUSE(qkv_attention_weights, null_k)
{
    FAILS_NULL(qkv_attention_weights(arena(), tensor(QKV_SHAPE(1, 3, 4)), NULL, 2, NULL, 0, 3),
               "k is NULL");
}
MISUSE(qkv_attention_weights, n_head_3)
{
    FAILS_NULL(qkv_attention_weights(arena(), QK2, 3, NULL, 0, 3), "n_head 3");
}
MISUSE(qkv_attention_weights, rows_past_the_queries)
{
    FAILS_NULL(qkv_attention_weights(arena(), QK2, 2, NULL, 2, 2), "rows [2, 4)", "3 queries");
}
MISUSE(qkv_attention_weights, negative_row0)
{
    FAILS_NULL(qkv_attention_weights(arena(), QK2, 2, NULL, -1, 2), "rows [-1, 1)");
}
MISUSE(qkv_attention_weights, n_rows_int_max)
{
    FAILS_NULL(qkv_attention_weights(arena(), QK2, 2, NULL, 1, INT_MAX), "rows [1, 2147483648)");
}
MISUSE(qkv_attention_weights, no_rows)
{
    FAILS_NULL(qkv_attention_weights(arena(), QK2, 2, NULL, 0, 0), "rows [0, 0)");
}
MISUSE(qkv_attention_weights, causal_tq_gt_tk)
{
    qkv_mask m = {.causal = true};
    FAILS_NULL(qkv_attention_weights(arena(), tensor(QKV_SHAPE(1, 3, 4)),
                                     tensor(QKV_SHAPE(1, 2, 4)), 2, &m, 0, 1),
               "Tq 3", "Tk 2");
}
MISUSE(qkv_attention_weights, two_dims)
{
    FAILS_NULL(qkv_attention_weights(arena(), tensor(QKV_SHAPE(3, 4)), tensor(QKV_SHAPE(3, 4)), 2,
                                     NULL, 0, 1),
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

/* ---- the ops over any axis, div and the elementwise functions (issue 22) ---- */

#define MASK23 (const uint8_t[]){1, 0, 1, 1, 1, 0}
BINARY_CASES(div)
UNARY_CASES(exp)
UNARY_CASES(log)
UNARY_CASES(tanh)
UNARY_CASES(sigmoid)
UNARY_CASES(sum_axis, , 0, false)
UNARY_CASES(mean_axis, , -1, true)
UNARY_CASES(max_axis, , 1, false)
UNARY_CASES(argmax, , 0)
UNARY_CASES(masked_mean, , 1, MASK23)
UNARY_CASES(slice_axis, , 0, 0, 1)
UNARY_CASES(transpose_axes, , 0, 1)
MISUSE(qkv_add, both_stretched_mismatch)
{
    FAILS_NULL(qkv_add(arena(), tensor(QKV_SHAPE(2, 1, 3)), tensor(QKV_SHAPE(4, 2))), "(2,1,3)",
               "(4,2)", "broadcast");
}
MISUSE(qkv_sum_axis, axis_too_large) { FAILS_NULL(qkv_sum_axis(arena(), tensor(SHAPE23), 2, false), "axis 2"); }
MISUSE(qkv_sum_axis, int_min_axis)
{
    FAILS_NULL(qkv_sum_axis(arena(), tensor(SHAPE23), -2147483647 - 1, false), "axis -2147483648");
}
MISUSE(qkv_mean_axis, axis_too_negative)
{
    FAILS_NULL(qkv_mean_axis(arena(), tensor(SHAPE23), -3, true), "axis -3", "(2,3)");
}
MISUSE(qkv_max_axis, axis_too_large) { FAILS_NULL(qkv_max_axis(arena(), tensor(SHAPE23), 7, true), "axis 7"); }
MISUSE(qkv_argmax, axis_too_large) { FAILS_NULL(qkv_argmax(arena(), tensor(SHAPE23), 2), "axis 2"); }
MISUSE(qkv_masked_mean, null_mask)
{
    FAILS_NULL(qkv_masked_mean(arena(), tensor(SHAPE23), 1, NULL), "mask is NULL");
}
MISUSE(qkv_masked_mean, axis_too_large)
{
    FAILS_NULL(qkv_masked_mean(arena(), tensor(SHAPE23), 2, MASK23), "axis 2");
}
MISUSE(qkv_concat_axis, null_xs) { FAILS_NULL(qkv_concat_axis(arena(), 2, NULL, 0), "xs is NULL"); }
MISUSE(qkv_concat_axis, null_entry)
{
    FAILS_NULL(qkv_concat_axis(arena(), 2, (qkv_tensor *[]){tensor(SHAPE23), NULL}, 0), "xs[1] is NULL");
}
MISUSE(qkv_concat_axis, n_0) { FAILS_NULL(qkv_concat_axis(arena(), 0, (qkv_tensor *[]){tensor(SHAPE23)}, 0), "n"); }
MISUSE(qkv_concat_axis, null_arena)
{
    FAILS_NULL(qkv_concat_axis(NULL, 1, (qkv_tensor *[]){tensor(SHAPE23)}, 0), "arena is NULL");
}
MISUSE(qkv_concat_axis, axis_too_large)
{
    FAILS_NULL(qkv_concat_axis(arena(), 1, (qkv_tensor *[]){tensor(SHAPE23)}, 2), "axis 2");
}
MISUSE(qkv_concat_axis, other_dims_differ)
{
    FAILS_NULL(qkv_concat_axis(arena(), 2, (qkv_tensor *[]){tensor(SHAPE23), tensor(QKV_SHAPE(2, 4))}, 0),
               "(2,3)", "(2,4)", "axis 0");
}
MISUSE(qkv_concat_axis, ndim_differs)
{
    FAILS_NULL(qkv_concat_axis(arena(), 2, (qkv_tensor *[]){tensor(SHAPE23), tensor(QKV_SHAPE(3))}, 0),
               "(2,3)", "(3)");
}
MISUSE(qkv_slice_axis, past_the_end)
{
    FAILS_NULL(qkv_slice_axis(arena(), tensor(SHAPE23), 0, 1, 2), "[1, 3)", "dim 0");
}
MISUSE(qkv_slice_axis, negative_start) { FAILS_NULL(qkv_slice_axis(arena(), tensor(SHAPE23), 1, -1, 1), "-1"); }
MISUSE(qkv_slice_axis, zero_len) { FAILS_NULL(qkv_slice_axis(arena(), tensor(SHAPE23), 1, 0, 0), "[0, 0)"); }
MISUSE(qkv_slice_axis, int_overflow)
{
    FAILS_NULL(qkv_slice_axis(arena(), tensor(SHAPE23), 1, 2, 2147483647), "indices");
}
MISUSE(qkv_slice_axis, axis_too_large) { FAILS_NULL(qkv_slice_axis(arena(), tensor(SHAPE23), 2, 0, 1), "axis 2"); }
MISUSE(qkv_transpose_axes, d0_too_large)
{
    FAILS_NULL(qkv_transpose_axes(arena(), tensor(SHAPE23), 2, 0), "d0 2");
}
MISUSE(qkv_transpose_axes, d1_too_negative)
{
    FAILS_NULL(qkv_transpose_axes(arena(), tensor(SHAPE23), 0, -3), "d1 -3");
}

/* ---- the 1.2 ops ---- */

UNARY_CASES(softplus)
UNARY_CASES(sqrt)
UNARY_CASES(abs)
UNARY_CASES(pow, , 2)
UNARY_CASES(clamp, , -1, 1)
UNARY_CASES(min_axis, , 0, false)
UNARY_CASES(var_axis, , 1, false, 1)
UNARY_CASES(cumsum, , 0)
UNARY_CASES(index_select, , 1, 2, (const int32_t[]){0, 2})
UNARY_CASES(gather, , 0, 1, (const int32_t[]){0, 1, 1})
UNARY_CASES(topk, , 2, NULL)
UNARY_CASES(sort, , true, NULL)
UNARY_CASES(log_softmax)
MISUSE(qkv_pow, nan_exponent) { FAILS_NULL(qkv_pow(arena(), tensor(SHAPE23), NAN), "p"); }
MISUSE(qkv_clamp, lo_above_hi) { FAILS_NULL(qkv_clamp(arena(), tensor(SHAPE23), 1, -1), "lo 1", "hi -1"); }
MISUSE(qkv_clamp, nan_bound) { FAILS_NULL(qkv_clamp(arena(), tensor(SHAPE23), NAN, 1), "NaN"); }
MISUSE(qkv_where, null_arena)
{
    FAILS_NULL(qkv_where(NULL, MASK23, tensor(SHAPE23), tensor(SHAPE23)), "arena is NULL");
}
MISUSE(qkv_where, null_cond) { FAILS_NULL(qkv_where(arena(), NULL, tensor(SHAPE23), tensor(SHAPE23)), "cond is NULL"); }
MISUSE(qkv_where, null_x) { FAILS_NULL(qkv_where(arena(), MASK23, NULL, tensor(SHAPE23)), "x is NULL"); }
MISUSE(qkv_where, null_y) { FAILS_NULL(qkv_where(arena(), MASK23, tensor(SHAPE23), NULL), "y is NULL"); }
MISUSE(qkv_where, shapes_differ)
{
    FAILS_NULL(qkv_where(arena(), MASK23, tensor(SHAPE23), tensor(QKV_SHAPE(3, 2))), "(2,3)", "(3,2)");
}
MISUSE(qkv_min_axis, axis_too_large) { FAILS_NULL(qkv_min_axis(arena(), tensor(SHAPE23), 2, false), "qkv_min_axis", "axis 2"); }
MISUSE(qkv_var_axis, correction_too_large)
{
    FAILS_NULL(qkv_var_axis(arena(), tensor(SHAPE23), 0, false, 2), "correction 2");
}
MISUSE(qkv_var_axis, negative_correction)
{
    FAILS_NULL(qkv_var_axis(arena(), tensor(SHAPE23), 1, false, -1), "correction -1");
}
MISUSE(qkv_var_axis, axis_too_negative) { FAILS_NULL(qkv_var_axis(arena(), tensor(SHAPE23), -3, false, 0), "axis -3"); }
MISUSE(qkv_cumsum, axis_too_large) { FAILS_NULL(qkv_cumsum(arena(), tensor(SHAPE23), 2), "axis 2"); }
MISUSE(qkv_index_select, null_ids) { FAILS_NULL(qkv_index_select(arena(), tensor(SHAPE23), 1, 2, NULL), "ids is NULL"); }
MISUSE(qkv_index_select, id_out_of_range)
{
    FAILS_NULL(qkv_index_select(arena(), tensor(SHAPE23), 1, 2, (const int32_t[]){0, 3}), "ids[1] = 3", "[0, 3)");
}
MISUSE(qkv_index_select, negative_id)
{
    FAILS_NULL(qkv_index_select(arena(), tensor(SHAPE23), 0, 1, (const int32_t[]){-1}), "ids[0] = -1");
}
MISUSE(qkv_index_select, n_0) { FAILS_NULL(qkv_index_select(arena(), tensor(SHAPE23), 0, 0, (const int32_t[]){0}), "n must be at least 1"); }
MISUSE(qkv_index_select, axis_too_large)
{
    FAILS_NULL(qkv_index_select(arena(), tensor(SHAPE23), 2, 1, (const int32_t[]){0}), "axis 2");
}
MISUSE(qkv_gather, id_out_of_range)
{
    FAILS_NULL(qkv_gather(arena(), tensor(SHAPE23), 1, 1, (const int32_t[]){0, 5}), "ids[1] = 5");
}
MISUSE(qkv_gather, null_ids) { FAILS_NULL(qkv_gather(arena(), tensor(SHAPE23), 1, 1, NULL), "ids is NULL"); }
MISUSE(qkv_topk, k_0) { FAILS_NULL(qkv_topk(arena(), tensor(SHAPE23), 0, NULL), "k 0", "[1, 3]"); }
MISUSE(qkv_topk, k_too_large) { FAILS_NULL(qkv_topk(arena(), tensor(SHAPE23), 4, NULL), "k 4", "(2,3)"); }
MISUSE(qkv_mse_loss, null_arena) { FAILS_NULL(qkv_mse_loss(NULL, tensor(SHAPE23), tensor(SHAPE23)), "arena is NULL"); }
MISUSE(qkv_mse_loss, null_pred) { FAILS_NULL(qkv_mse_loss(arena(), NULL, tensor(SHAPE23)), "pred is NULL"); }
MISUSE(qkv_mse_loss, null_target) { FAILS_NULL(qkv_mse_loss(arena(), tensor(SHAPE23), NULL), "target is NULL"); }
MISUSE(qkv_mse_loss, unallocated_target)
{
    FAILS_NULL(qkv_mse_loss(arena(), tensor(SHAPE23), unallocated()), "target", "qkv_params_alloc");
}
MISUSE(qkv_mse_loss, shapes_differ)
{
    FAILS_NULL(qkv_mse_loss(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(6))), "(2,3)", "(6)");
}
