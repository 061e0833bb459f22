/* Lifetime mistakes are refused, not silent: a tensor from before its arena's
 * reset, freeing an arena or a parameter list twice, a second backward
 * through a graph that was not kept for it (issue 22, points 5 and 7). */
#include "error_text.h"
#include "testing.h"

START_TEST(test_tensor_after_reset_is_refused)
{
    /* Before the generation check, the sum read x's old bytes and returned
     * a number; now it must return NULL and say why. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(3), (qkv_real[]){1, 2, 3});
    ck_assert_qkv(x);
    ck_assert_qkv(qkv_sum(a, x)); /* fine before the reset */
    qkv_arena_reset(a);
    FAILS_NULL(qkv_sum(a, x), "qkv_sum", "input x", "before its arena's reset");
    /* A backward from a stale loss is refused the same way. */
    qkv_tensor *w = qkv_from_array(a, QKV_SHAPE(1), (qkv_real[]){2});
    qkv_set_requires_grad(w, true);
    qkv_tensor *loss = qkv_sum(a, qkv_mul(a, w, w));
    ck_assert_qkv(loss);
    qkv_arena_reset(a);
    FAILS_INT(qkv_backward(a, loss), "qkv_backward", "before its arena's reset");
    /* Tensors made after the reset work as before. */
    qkv_tensor *y = qkv_from_array(a, QKV_SHAPE(2), (qkv_real[]){4, 5});
    qkv_tensor *s = qkv_sum(a, y);
    ck_assert_qkv(s);
    ck_assert(s->data[0] == 9);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_tensor_from_another_arena_after_its_reset)
{
    /* The op's arena is a fresh one; x's own arena was reset. */
    qkv_arena *old = qkv_arena_new(1 << 12), *step = qkv_arena_new(1 << 12);
    qkv_tensor *x = qkv_ones(old, QKV_SHAPE(2, 2));
    ck_assert_qkv(qkv_add(step, x, x));
    qkv_arena_reset(old);
    FAILS_NULL(qkv_add(step, x, x), "qkv_add", "before its arena's reset");
    qkv_arena_free(&old);
    qkv_arena_free(&step);
}
END_TEST

START_TEST(test_parameters_survive_resets)
{
    /* Parameters live outside any arena: no reset makes them stale. */
    qkv_params *p = qkv_params_new();
    qkv_tensor *w = qkv_params_add(p, "w", QKV_SHAPE(2), QKV_INIT_ONES, 0);
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    qkv_arena *a = qkv_arena_new(1 << 12);
    for (int i = 0; i < 3; i++) {
        ck_assert_qkv(qkv_sum(a, w));
        qkv_arena_reset(a);
    }
    qkv_arena_free(&a);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_free_twice_is_harmless)
{
    /* Before: the second free of the same pointer was a SIGSEGV (or, under
     * ASan, a double free). Now the first free clears the pointer. */
    qkv_arena *a = qkv_arena_new(1 << 12);
    qkv_arena_free(&a);
    ck_assert_ptr_null(a);
    qkv_arena_free(&a);
    qkv_params *p = qkv_params_new();
    ck_assert_ptr_nonnull(qkv_params_add(p, "w", QKV_SHAPE(2), QKV_INIT_ZEROS, 0));
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    qkv_params_free(&p);
    ck_assert_ptr_null(p);
    qkv_params_free(&p);
}
END_TEST

/* x = (1, 2, 3) wanting a gradient; loss = Σ x·x, so d loss / dx = 2x. */
static qkv_tensor *square_sum(qkv_arena *a, qkv_tensor **x)
{
    *x = qkv_from_array(a, QKV_SHAPE(3), (qkv_real[]){1, 2, 3});
    qkv_set_requires_grad(*x, true);
    return qkv_sum(a, qkv_mul(a, *x, *x));
}

START_TEST(test_second_backward_is_refused)
{
    /* Before: the second call added the gradients again (2x became 4x). */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(3), (qkv_real[]){1, 2, 3});
    qkv_set_requires_grad(x, true);
    qkv_tensor *sq = qkv_mul(a, x, x), *loss = qkv_sum(a, sq);
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    FAILS_INT(qkv_backward(a, loss), "qkv_backward", "backpropagated through already",
              "qkv_backward_retain_graph");
    for (int i = 0; i < 3; i++)
        ck_assert(x->grad[i] == 2 * x->data[i]); /* untouched by the refused call */
    /* A second loss sharing part of the used-up graph is refused too. */
    FAILS_INT(qkv_backward(a, qkv_sum(a, sq)), "qkv_backward", "(op qkv_mul)");
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_retained_graph_goes_twice)
{
    /* Kept on purpose, the graph takes a second pass, which accumulates:
     * 2x + 2x; the second (plain) pass uses it up. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x, *loss = square_sum(a, &x);
    ck_assert_int_eq(qkv_backward_retain_graph(a, loss), 0);
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    for (int i = 0; i < 3; i++)
        ck_assert(x->grad[i] == 4 * x->data[i]);
    FAILS_INT(qkv_backward(a, loss), "backpropagated through already");
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_accumulation_over_new_graphs)
{
    /* Gradient accumulation: a new graph per micro-batch adds up in the leaf. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *w = qkv_from_array(a, QKV_SHAPE(1), (qkv_real[]){3});
    qkv_set_requires_grad(w, true);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, w, w))), 0);
    ck_assert(w->grad[0] == 18);
    qkv_arena_free(&a);
}
END_TEST

static Suite *lifetime_suite(void)
{
    Suite *s = suite_create("lifetime");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_tensor_after_reset_is_refused);
    tcase_add_test(tc, test_tensor_from_another_arena_after_its_reset);
    tcase_add_test(tc, test_parameters_survive_resets);
    tcase_add_test(tc, test_free_twice_is_harmless);
    tcase_add_test(tc, test_second_backward_is_refused);
    tcase_add_test(tc, test_retained_graph_goes_twice);
    tcase_add_test(tc, test_accumulation_over_new_graphs);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(lifetime_suite)
