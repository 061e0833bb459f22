/* Gradient checks (double build) of the modern-recipe options: the rmsnorm,
 * rope and relu2 ops (relu2 also fused into the product before it), the
 * attention and block that use them, and a whole GPT with every option on,
 * against central finite differences. Each check prints its worst relative
 * error (the figure the README quotes). */
#include <omp.h>

#include "tensor/op_affine.h"

#include "gradcheck.h"
#include "testing.h"

/* gradcheck f on the inputs and fail above the tolerance, printing the error. */
static void check(const char *what, gradcheck_fn f, int n, qkv_tensor **in, void *ud)
{
    omp_set_num_threads(1); /* thousands of tiny forwards: threads only add waiting */
    double err = gradcheck(f, n, in, ud);
    fprintf(stderr, "gradcheck %-34s max relative error %.2e\n", what, err);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: relative error %g", what, err);
}

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    ck_assert_qkv(t);
    qkv_set_requires_grad(t, true);
    return t;
}

/* ---- the ops ---- */

static qkv_tensor *f_rmsnorm(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_rmsnorm(a, in[0], ud ? in[1] : NULL, 1e-5);
}

START_TEST(test_rmsnorm_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 21);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *in[2] = {param(a, &rng, QKV_SHAPE(2, 3, 7)), param(a, &rng, QKV_SHAPE(7))};
    check("rmsnorm (x, w)", f_rmsnorm, 2, in, (void *)1);
    check("rmsnorm (x, no scale)", f_rmsnorm, 1, in, NULL);
    /* Rows wider than the backward's blocks of 32 columns (op_rmsnorm.c): two and a part. */
    qkv_tensor *wide[2] = {param(a, &rng, QKV_SHAPE(3, 70)), param(a, &rng, QKV_SHAPE(70))};
    check("rmsnorm (x, w), 70 columns", f_rmsnorm, 2, wide, (void *)1);
    qkv_arena_free(&a);
}
END_TEST

/* RoPE of (B,T,H·d) with *ud = (n_head, pos0). */
static qkv_tensor *f_rope(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const int *hp = ud;
    return qkv_rope(a, in[0], hp[0], hp[1]);
}

START_TEST(test_rope_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 22);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(2, 5, 12));
    int at0[2] = {3, 0}, later[2] = {2, 37};
    check("rope (3 heads of 4, from 0)", f_rope, 1, &x, at0);
    check("rope (2 heads of 6, from 37)", f_rope, 1, &x, later);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_rope_values)
{
    /* One head of size 2 at positions 0, 1, 2: the point (1, 0) turned by 0,
     * 1 and 2 radians (θ_0 = 1); and a query and key dotted after RoPE depend
     * only on their distance. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(1, 3, 2), (qkv_real[]){1, 0, 1, 0, 1, 0});
    qkv_tensor *y = qkv_rope(a, x, 1, 0);
    ck_assert_qkv(y);
    qkv_test_assert_close(y, (qkv_real[]){1, 0, cos(1.0), sin(1.0), cos(2.0), sin(2.0)}, 1e-12);
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    qkv_tensor *q = qkv_randn(a, QKV_SHAPE(1, 1, 8), 1, &rng);
    qkv_tensor *k = qkv_randn(a, QKV_SHAPE(1, 1, 8), 1, &rng);
    double dots[2];
    for (int i = 0; i < 2; i++) { /* q at 7 and k at 3, then q at 24 and k at 20 */
        qkv_tensor *rq = qkv_rope(a, q, 2, i ? 24 : 7), *rk = qkv_rope(a, k, 2, i ? 20 : 3);
        ck_assert_qkv(rq && rk ? rq : NULL);
        dots[i] = 0;
        for (int j = 0; j < 8; j++)
            dots[i] += rq->data[j] * rk->data[j];
    }
    ck_assert_msg(fabs(dots[0] - dots[1]) < 1e-12, "distance 4: %g vs %g", dots[0], dots[1]);
    qkv_arena_free(&a);
}
END_TEST

static qkv_tensor *f_relu2(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_relu2(a, in[0]);
}

START_TEST(test_relu2_grad_and_values)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 23);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(3, 4, 5));
    check("relu2", f_relu2, 1, &x, NULL);
    qkv_tensor *v = qkv_from_array(a, QKV_SHAPE(4), (qkv_real[]){-2, 0, 0.5, 3});
    qkv_test_assert_close(qkv_relu2(a, v), (qkv_real[]){0, 0, 0.25, 9}, 0);
    qkv_arena_free(&a);
}
END_TEST

/* relu2(x·Wᵀ + b) with the ReLU² applied by the product's epilogue: the MLP's path. */
static qkv_tensor *f_affine_relu2(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv__affine_act(a, in[0], in[1], in[2], QKV_ACTIVATION_RELU2);
}

START_TEST(test_affine_relu2_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 27);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *in[3] = {param(a, &rng, QKV_SHAPE(2, 3, 5)), param(a, &rng, QKV_SHAPE(7, 5)),
                         param(a, &rng, QKV_SHAPE(7))};
    check("linear + relu2, fused", f_affine_relu2, 3, in, NULL);
    qkv_arena_free(&a);
}
END_TEST

/* ---- the modules and the model ---- */

/* Give every parameter of p a random N(0, 0.5²) value (no norm scale stays
 * 1, so the scales' gradients are checked away from a special point) and
 * append the parameters to in after n inputs; the new count. */
static int random_params(qkv_params *p, qkv_rng *rng, qkv_tensor **in, int n)
{
    ck_assert_msg(qkv_params_alloc(p, rng) == 0, "%s", qkv_last_error());
    for (size_t i = 0; i < p->total; i++)
        p->data[i] = 0.5 * qkv_rng_normal(rng);
    for (int i = 0; i < p->count; i++)
        in[n++] = p->items[i].t;
    return n;
}

static qkv_tensor *f_self_attn(qkv_arena *a, qkv_tensor **in, void *ud)
{
    qkv_ctx ctx = {.arena = a};
    return qkv_self_attn_forward(ud, &ctx, in[0], NULL, NULL);
}

static qkv_tensor *f_block(qkv_arena *a, qkv_tensor **in, void *ud)
{
    qkv_ctx ctx = {.arena = a};
    return qkv_block_forward(ud, &ctx, in[0], NULL, NULL);
}

START_TEST(test_attention_with_rope_and_qk_norm_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 24);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_params *p = qkv_params_new();
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1, .opts.rope = true,
                            .opts.qk_norm = true};
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_self_attn_init(&attn, p, "attn", &cfg, true), 0);
    ck_assert_ptr_nonnull(qkv_params_find(p, "attn.q_norm.weight"));
    qkv_tensor *in[16] = {param(a, &rng, QKV_SHAPE(2, 4, 8))};
    int n = random_params(p, &rng, in, 1);
    check("self-attention, rope + qk-norm", f_self_attn, n, in, &attn);
    qkv_params_free(&p);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_block_with_rmsnorm_and_relu2_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 25);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_params *p = qkv_params_new();
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 2, .opts.no_bias = true,
                            .opts.rmsnorm = true,
                            .opts.relu2 = true, .opts.rope = true, .opts.qk_norm = true};
    qkv_block block;
    ck_assert_int_eq(qkv_block_init(&block, p, "h.0", &cfg, true), 0);
    ck_assert_ptr_null(qkv_params_find(p, "h.0.ln_1.bias")); /* RMSNorm has no shift */
    qkv_tensor *in[32] = {param(a, &rng, QKV_SHAPE(2, 3, 8))};
    int n = random_params(p, &rng, in, 1);
    check("block, every option", f_block, n, in, &block);
    qkv_params_free(&p);
    qkv_arena_free(&a);
}
END_TEST

/* Targets of the GPT check: each next id of ids. */
static const int32_t gpt_ids[2][4] = {{1, 4, 2, 6}, {0, 3, 3, 5}};
static const int32_t gpt_targets[2][4] = {{4, 2, 6, 0}, {3, 3, 5, 1}};

static qkv_tensor *f_gpt(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)in;
    qkv_ctx ctx = {.arena = a};
    return qkv_gpt_loss(ud, &ctx, &gpt_ids[0][0], &gpt_targets[0][0], 2, 4);
}

START_TEST(test_gpt_with_every_option_grad)
{
    qkv_gpt_config mc = {.vocab_size = 7, .block_size = 4, .n_layer = 2, .n_head = 2,
                         .n_embd = 8, .opts.rope = true, .opts.rmsnorm = true, .opts.relu2 = true,
                         .opts.qk_norm = true, .opts.untied = true};
    qkv_gpt *m = qkv_gpt_new(&mc, 3);
    ck_assert_qkv(m);
    ck_assert_ptr_null(qkv_params_find(m->params, "wpe.weight"));
    ck_assert_ptr_nonnull(qkv_params_find(m->params, "lm_head.weight"));
    qkv_rng rng;
    qkv_rng_seed(&rng, 26);
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] = 0.5 * qkv_rng_normal(&rng);
    qkv_tensor *in[64];
    for (int i = 0; i < m->params->count; i++)
        in[i] = m->params->items[i].t;
    check("gpt loss, every option", f_gpt, m->params->count, in, m);
    qkv_gpt_free(m);
}
END_TEST

static Suite *grad_options_suite(void)
{
    Suite *s = suite_create("grad_options");
    TCase *tc = tcase_create("options");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rmsnorm_grad);
    tcase_add_test(tc, test_rope_grad);
    tcase_add_test(tc, test_rope_values);
    tcase_add_test(tc, test_relu2_grad_and_values);
    tcase_add_test(tc, test_affine_relu2_grad);
    tcase_add_test(tc, test_attention_with_rope_and_qk_norm_grad);
    tcase_add_test(tc, test_block_with_rmsnorm_and_relu2_grad);
    tcase_add_test(tc, test_gpt_with_every_option_grad);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(grad_options_suite)
