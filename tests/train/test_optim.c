/* AdamW and SGD against PyTorch, the lr schedule, gradient clipping. */
#include <omp.h>

#include "qkv/optim.h"
#include "testing.h"

/* Reference values: torch.optim.AdamW / SGD in float64 (torch 1.13) on the
 * same two tensors, weight decay 0.1 on w only, lr 0.1 then 0.05. */
static const qkv_real W0[6] = {0.5, -1.0, 2.0, 0.0, 0.25, -0.75};
static const qkv_real B0[3] = {0.1, -0.2, 0.3};
static const qkv_real GW[2][6] = {{0.1, -0.2, 0.3, -0.4, 0.5, -0.6},
                                  {-0.3, 0.1, 0.0, 0.2, 0.7, -0.1}};
static const qkv_real GB[2][3] = {{1.0, -0.5, 0.25}, {-2.0, 0.5, 0.125}};
static const double LR[2] = {0.1, 0.05};

/* A (2,3) matrix "w" (decayed) and a (3) bias "b" (not), at W0 and B0. */
static qkv_params *two_params(qkv_tensor **w, qkv_tensor **b)
{
    qkv_params *p = qkv_params_new();
    *w = qkv_params_add(p, "w", QKV_SHAPE(2, 3), QKV_INIT_ZEROS, 0);
    *b = qkv_params_add(p, "b", QKV_SHAPE(3), QKV_INIT_ZEROS, 0);
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    memcpy((*w)->data, W0, sizeof W0);
    memcpy((*b)->data, B0, sizeof B0);
    return p;
}

/* Two steps of cfg with the reference gradients; checks against want_w/want_b. */
static void two_steps(const qkv_optim_config *cfg, const double want_w[2][6],
                      const double want_b[2][3])
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    qkv_optim *o = qkv_optim_new(p, cfg);
    ck_assert_qkv(o);
    for (int k = 0; k < 2; k++) {
        memcpy(w->grad, GW[k], sizeof GW[k]);
        memcpy(b->grad, GB[k], sizeof GB[k]);
        ck_assert_int_eq(qkv_optim_step(o, p, LR[k]), 0);
        ck_assert_int_eq(o->step, k + 1);
        for (int i = 0; i < 6; i++)
            ck_assert_msg(fabs(w->data[i] - want_w[k][i]) < 2e-6, "step %d w[%d] = %.9g, want %.9g",
                          k + 1, i, (double)w->data[i], want_w[k][i]);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(fabs(b->data[i] - want_b[k][i]) < 2e-6, "step %d b[%d] = %.9g, want %.9g",
                          k + 1, i, (double)b->data[i], want_b[k][i]);
    }
    qkv_optim_free(o);
    qkv_params_free(&p);
}

START_TEST(test_adamw_matches_pytorch_two_steps)
{
    static const double want_w[2][6] = {
        {0.39500001, -0.890000005, 1.88000000333, 0.0999999975, 0.147500002, -0.642500001667},
        {0.417689916413, -0.872215034366, 1.83702099754, 0.112834968544, 0.0970506706473,
         -0.600037003512}};
    static const double want_b[2][3] = {{9.99999985596e-10, -0.100000002, 0.200000004},
                                        {0.0182803865513, -0.102631580895, 0.153327606276}};
    qkv_optim_config cfg = qkv_adamw_defaults();
    two_steps(&cfg, want_w, want_b);
}
END_TEST

START_TEST(test_sgd_momentum_matches_pytorch_two_steps)
{
    static const double want_w[2][6] = {
        {0.485, -0.97, 1.95, 0.04, 0.1975, -0.6825},
        {0.490825, -0.95665, 1.91775, 0.0478, 0.1378875, -0.6437125}};
    static const double want_b[2][3] = {{0, -0.15, 0.275}, {0.055, -0.1525, 0.2575}};
    qkv_optim_config cfg = qkv_sgd_defaults();
    cfg.weight_decay = 0.1;
    two_steps(&cfg, want_w, want_b);
}
END_TEST

/* With zero gradients AdamW's adaptive term is 0, so what remains is the
 * decay: the matrix shrinks by 1 - lr·wd, the bias does not move. */
START_TEST(test_adamw_decays_only_matrices)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.weight_decay = 0.5;
    qkv_optim *o = qkv_optim_new(p, &cfg);
    ck_assert_qkv(o);
    ck_assert_int_eq(qkv_optim_step(o, p, 0.1), 0);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq_tol(w->data[i], W0[i] * (1 - 0.1 * 0.5), 1e-7);
    for (int i = 0; i < 3; i++)
        ck_assert_float_eq(b->data[i], B0[i]);
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_optim_rejects_bad_use)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.beta2 = 1;
    ck_assert_ptr_null(qkv_optim_new(p, &cfg));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "beta"));
    cfg = qkv_adamw_defaults();
    qkv_optim *o = qkv_optim_new(p, &cfg);
    qkv_params *other = qkv_params_new();
    qkv_params_add(other, "x", QKV_SHAPE(100), QKV_INIT_ZEROS, 0);
    ck_assert_int_eq(qkv_params_alloc(other, NULL), 0);
    ck_assert_int_eq(qkv_optim_step(o, other, 0.1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_optim_step"));
    ck_assert_int_eq(o->step, 0);
    qkv_params_free(&other);
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_schedule_warmup_cosine_floor)
{
    qkv_lr_schedule s = {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 100, .decay_iters = 2000};
    ck_assert_double_eq_tol(qkv_lr_at(&s, 0), 1e-3 / 101, 1e-15);        /* warmup start */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 99), 1e-3 * 100 / 101, 1e-15); /* warmup end */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 100), 1e-3, 1e-15);    /* cosine start: the peak */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 1050), 5.5e-4, 1e-15); /* halfway: the middle */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 2000), 1e-4, 1e-15);   /* end of decay */
    ck_assert_double_eq(qkv_lr_at(&s, 2001), 1e-4);              /* after: the floor */
    ck_assert_double_eq(qkv_lr_at(&s, 100000), 1e-4);
    for (int64_t it = 100; it < 2000; it++)
        ck_assert(qkv_lr_at(&s, it + 1) <= qkv_lr_at(&s, it));
    /* No room for a cosine: straight to the floor, no 0/0. */
    qkv_lr_schedule flat = {.lr = 1, .min_lr = 0.25, .warmup_iters = 10, .decay_iters = 10};
    ck_assert_double_eq(qkv_lr_at(&flat, 10), 0.25);
}
END_TEST

START_TEST(test_schedule_warmup_stable_decay)
{
    /* 2000 steps, warmup 100, the last 20% (400 steps) decaying from 1e-3 to 1e-4. */
    qkv_lr_schedule s = {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 100, .decay_iters = 2000,
                         .wsd_decay = 0.2};
    ck_assert_double_eq_tol(qkv_lr_at(&s, 0), 1e-3 / 101, 1e-15);     /* the same warmup */
    ck_assert_double_eq(qkv_lr_at(&s, 100), 1e-3);                    /* stable... */
    ck_assert_double_eq(qkv_lr_at(&s, 1599), 1e-3);                   /* ...to the last 400 */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 1800), 5.5e-4, 1e-15);      /* halfway down */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 1999), 1e-4 + 9e-4 / 400, 1e-15); /* the last step */
    ck_assert_double_eq_tol(qkv_lr_at(&s, 2000), 1e-4, 1e-15);       /* end of decay */
    ck_assert_double_eq(qkv_lr_at(&s, 5000), 1e-4);
    for (int64_t it = 100; it < 2100; it++)
        ck_assert(qkv_lr_at(&s, it + 1) <= qkv_lr_at(&s, it));
    /* A decay longer than the run after warmup starts right after it. */
    s.wsd_decay = 1;
    ck_assert_double_eq(qkv_lr_at(&s, 100), 1e-3);
    ck_assert_double_eq_tol(qkv_lr_at(&s, 1050), 5.5e-4, 1e-15);
    /* The decay spans a whole number of steps, round(wsd_decay·decay) (qkv/optim.h):
     * 0.25 of 10 is 2.5 steps, rounded to 3, so it starts at step 7 and step 8
     * is a third of the way down (7.0e-4), not a fifth from 7.5 (8.2e-4). */
    qkv_lr_schedule r = {.lr = 1e-3, .min_lr = 1e-4, .decay_iters = 10, .wsd_decay = 0.25};
    ck_assert_double_eq(qkv_lr_at(&r, 6), 1e-3);
    ck_assert_double_eq_tol(qkv_lr_at(&r, 7), 1e-3, 1e-15);
    ck_assert_double_eq_tol(qkv_lr_at(&r, 8), 7e-4, 1e-15);
}
END_TEST

START_TEST(test_clip_scales_to_max_norm)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    memcpy(w->grad, GW[0], sizeof GW[0]);
    memcpy(b->grad, GB[0], sizeof GB[0]);
    double sq = 0;
    for (int i = 0; i < 6; i++)
        sq += (double)GW[0][i] * GW[0][i];
    for (int i = 0; i < 3; i++)
        sq += (double)GB[0][i] * GB[0][i];
    double norm = sqrt(sq);
    /* Above the norm: nothing changes. */
    ck_assert_double_eq_tol(qkv_clip_grad_norm(p, 10.0), norm, 1e-12);
    ck_assert_float_eq(w->grad[1], GW[0][1]);
    /* Below: every gradient scaled by max / (norm + 1e-6), as PyTorch. */
    ck_assert_double_eq_tol(qkv_clip_grad_norm(p, 0.5), norm, 1e-12);
    double k = 0.5 / (norm + 1e-6);
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq_tol(w->grad[i], GW[0][i] * k, 1e-7);
    for (int i = 0; i < 3; i++)
        ck_assert_float_eq_tol(b->grad[i], GB[0][i] * k, 1e-7);
    ck_assert_double_eq_tol(qkv_clip_grad_norm(p, 1e9), 0.5, 1e-6);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_clip_norm_same_at_every_thread_count)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "big", QKV_SHAPE(1000, 1001), QKV_INIT_ZEROS, 0);
    qkv_params_add(p, "odd", QKV_SHAPE(37), QKV_INIT_ZEROS, 0);
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    for (size_t i = 0; i < p->total; i++)
        p->grad[i] = (qkv_real)qkv_rng_normal(&rng);
    double norms[3];
    for (int t = 1; t <= 3; t++) {
        omp_set_num_threads(t);
        norms[t - 1] = qkv_clip_grad_norm(p, 1e30); /* measure only */
    }
    ck_assert_msg(norms[0] == norms[1] && norms[1] == norms[2], "norms %.17g %.17g %.17g", norms[0],
                  norms[1], norms[2]);
    ck_assert_double_eq_tol(norms[0], sqrt((double)(1000 * 1001 + 37)), 5.0); /* ~√n */
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_clip_leaves_nonfinite_gradients_alone)
{
    qkv_tensor *w, *b;
    qkv_params *p = two_params(&w, &b);
    memcpy(w->grad, GW[0], sizeof GW[0]);
    b->grad[1] = NAN;
    ck_assert(isnan(qkv_clip_grad_norm(p, 0.1)));
    ck_assert_float_eq(w->grad[2], GW[0][2]);
    qkv_params_free(&p);
}
END_TEST

static Suite *optim_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_adamw_matches_pytorch_two_steps);
    tcase_add_test(tc, test_sgd_momentum_matches_pytorch_two_steps);
    tcase_add_test(tc, test_adamw_decays_only_matrices);
    tcase_add_test(tc, test_optim_rejects_bad_use);
    tcase_add_test(tc, test_schedule_warmup_cosine_floor);
    tcase_add_test(tc, test_schedule_warmup_stable_decay);
    tcase_add_test(tc, test_clip_scales_to_max_norm);
    tcase_add_test(tc, test_clip_norm_same_at_every_thread_count);
    tcase_add_test(tc, test_clip_leaves_nonfinite_gradients_alone);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(optim_suite)
