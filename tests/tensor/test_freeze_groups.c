/* Frozen parameters and parameter groups (qkv_params_freeze,
 * qkv_optim_set_group): a frozen parameter gets no gradient and no step
 * touches it, a group learns at its own rate and decays with its own weight
 * decay, and parameters outside any group step as before. */
#include "qkv/optim.h"
#include "qkv/ops.h"
#include "testing.h"

#include <math.h>
#include <string.h>

/* The last error names all of these. */
#define ck_assert_error_has(a, b) \
    ck_assert_msg(strstr(qkv_last_error(), a) && strstr(qkv_last_error(), b), "%s", qkv_last_error())
#define ck_assert_real_near(x, want, tol) \
    ck_assert_msg(fabs((double)(x) - (double)(want)) <= (tol), "%g, not %g", (double)(x), (double)(want))

/* A (2,3) matrix "w.weight" and a (3) bias "w.bias" at fixed values. */
static qkv_params *two_params(qkv_tensor **w, qkv_tensor **b)
{
    qkv_params *p = qkv_params_new();
    *w = qkv_params_add(p, "w.weight", QKV_SHAPE(2, 3), QKV_INIT_ZEROS, 0);
    *b = qkv_params_add(p, "w.bias", QKV_SHAPE(3), QKV_INIT_ZEROS, 0);
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    for (int i = 0; i < 6; i++)
        (*w)->data[i] = (qkv_real)(0.5 - 0.25 * i);
    for (int i = 0; i < 3; i++)
        (*b)->data[i] = (qkv_real)(0.1 * (i + 1));
    return p;
}

START_TEST(test_frozen_weight_does_not_move)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    ck_assert_int_eq(qkv_params_freeze(p, "w.weight", true), 1);
    ck_assert(!w->requires_grad && b->requires_grad);
    qkv_real w0[6];
    memcpy(w0, w->data, sizeof w0);
    qkv_optim_config cfg = qkv_adamw_defaults(); /* weight decay 0.1 on matrices */
    qkv_optim *o = qkv_optim_new(p, &cfg);
    ck_assert_qkv(o);
    /* A gradient in w's buffer anyway (say, left there by the caller): still no step. */
    for (int i = 0; i < 6; i++)
        w->grad[i] = 1;
    for (int i = 0; i < 3; i++)
        b->grad[i] = 1;
    for (int s = 0; s < 3; s++)
        ck_assert_int_eq(qkv_optim_step(o, p, 0.1), 0);
    for (int i = 0; i < 6; i++) {
        ck_assert(w->data[i] == w0[i]);          /* no update, no decay */
        ck_assert(o->m[w->data - p->data + i] == 0); /* no moments */
        ck_assert(o->v[w->data - p->data + i] == 0);
    }
    ck_assert(b->data[0] != (qkv_real)0.1); /* the bias stepped */
    /* Unfrozen, it steps again. */
    ck_assert_int_eq(qkv_params_freeze(p, "w.", false), 2);
    ck_assert_int_eq(qkv_optim_step(o, p, 0.1), 0);
    ck_assert(w->data[0] != w0[0]);
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_frozen_weight_gets_no_gradient)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    ck_assert_int_eq(qkv_params_freeze(p, "w.weight", true), 1);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_params_zero_grad(p);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(1, 2), (qkv_real[]){1, 2});
    qkv_tensor *y = qkv_sum(a, qkv_add(a, qkv_matmul(a, x, w, false, false), b));
    ck_assert_qkv(y);
    ck_assert_int_eq(qkv_backward(a, y), 0);
    for (int i = 0; i < 6; i++)
        ck_assert(w->grad[i] == 0);
    for (int i = 0; i < 3; i++)
        ck_assert(b->grad[i] == 1);
    qkv_arena_free(&a);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_group_lr_and_decay)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    qkv_real w0[6], b0[3];
    memcpy(w0, w->data, sizeof w0);
    memcpy(b0, b->data, sizeof b0);
    /* Plain SGD, no decay: w - lr·g for w, w - 2·lr·g for the bias group. */
    qkv_optim_config cfg = qkv_sgd_defaults();
    cfg.momentum = 0;
    qkv_optim *o = qkv_optim_new(p, &cfg);
    ck_assert_qkv(o);
    ck_assert_int_eq(qkv_optim_set_group(o, p, "w.bias", 2, 0), 1);
    for (int i = 0; i < 6; i++)
        w->grad[i] = (qkv_real)(0.1 * i);
    for (int i = 0; i < 3; i++)
        b->grad[i] = (qkv_real)(1 + i);
    ck_assert_int_eq(qkv_optim_step(o, p, 0.5), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_real_near(w->data[i], w0[i] - (qkv_real)0.5 * w->grad[i], 1e-6);
    for (int i = 0; i < 3; i++)
        ck_assert_real_near(b->data[i], b0[i] - (qkv_real)(0.5 * 2) * b->grad[i], 1e-6);
    qkv_optim_free(o);

    /* AdamW with zero gradients moves only by decay: the bias, in a group with
     * weight decay 0.5, shrinks by 1 - lr·0.5 (never decayed by nanoGPT's rule),
     * and the matrix, in a group of its own without decay, stays. */
    memcpy(w->data, w0, sizeof w0);
    memcpy(b->data, b0, sizeof b0);
    qkv_params_zero_grad(p);
    cfg = qkv_adamw_defaults();
    o = qkv_optim_new(p, &cfg);
    ck_assert_int_eq(qkv_optim_set_group(o, p, "w.bias", 1, 0.5), 1);
    ck_assert_int_eq(qkv_optim_set_group(o, p, "w.weight", 1, 0), 1);
    ck_assert_int_eq(qkv_optim_step(o, p, 0.1), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_real_near(b->data[i], b0[i] * (1 - 0.1 * 0.5), 1e-6);
    for (int i = 0; i < 6; i++)
        ck_assert(w->data[i] == w0[i]);
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_group_needs_its_params)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    qkv_optim_config cfg = qkv_adamw_defaults();
    qkv_optim *o = qkv_optim_new(p, &cfg);
    ck_assert_int_eq(qkv_optim_set_group(o, p, "lm_head.", 1, 0), -1);
    ck_assert_error_has("qkv_optim_set_group", "prefix 'lm_head.'");
    ck_assert_int_eq(qkv_params_freeze(p, "wte", true), -1);
    ck_assert_error_has("qkv_params_freeze", "prefix 'wte'");
    ck_assert_int_eq(qkv_optim_set_group(o, p, "", 0.5, 0.01), 2); /* "" is every parameter */
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_summary_lists_every_parameter)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    ck_assert_int_eq(qkv_params_freeze(p, "w.bias", true), 1);
    char buf[1024] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    ck_assert_int_eq(qkv_params_print(p, f), 0);
    fclose(f);
    ck_assert_msg(strstr(buf, "w.weight   (2,3)") && strstr(buf, "w.bias     (3) ") &&
                      strstr(buf, "3  frozen\n") &&
                      strstr(buf, "2 parameters, 9 values: 6 trainable, 3 frozen\n"),
                  "%s", buf);
    qkv_params_free(&p);
}
END_TEST

static Suite *freeze_groups_suite(void)
{
    Suite *s = suite_create("freeze_groups");
    TCase *c = tcase_create("core");
    tcase_add_test(c, test_frozen_weight_does_not_move);
    tcase_add_test(c, test_frozen_weight_gets_no_gradient);
    tcase_add_test(c, test_group_lr_and_decay);
    tcase_add_test(c, test_group_needs_its_params);
    tcase_add_test(c, test_summary_lists_every_parameter);
    suite_add_tcase(s, c);
    return s;
}

QKV_TEST_MAIN(freeze_groups_suite)
