/* The nn modules (float build): initialisation (statistics, names, the
 * std and biases the config chooses), error messages that name the shapes,
 * dropout only in training, embedding and
 * linear layers. Gradients are checked in grad_nn.c. */
#include "qkv/nn.h"
#include "error_text.h"
#include "nn_fixture.h"
#include "testing.h"

static double mean_of(const qkv_tensor *t)
{
    double s = 0;
    for (size_t i = 0; i < t->size; i++)
        s += t->data[i];
    return s / (double)t->size;
}

static double std_of(const qkv_tensor *t)
{
    double m = mean_of(t), s = 0;
    for (size_t i = 0; i < t->size; i++)
        s += ((double)t->data[i] - m) * ((double)t->data[i] - m);
    return sqrt(s / (double)t->size);
}

/* The parameter's values have mean ≈ 0 and standard deviation ≈ std. */
static void assert_normal_init(const qkv_params *p, const char *name, double std)
{
    qkv_param *it = qkv_params_find(p, name);
    ck_assert_msg(it != NULL, "no parameter %s", name);
    double n = (double)it->t->size, s = std_of(it->t);
    ck_assert_msg(fabs(s - std) <= 5 * std / sqrt(2 * n), "%s: std %g, expected %g", name, s, std);
    ck_assert_msg(fabs(mean_of(it->t)) <= 5 * std / sqrt(n), "%s: mean %g", name, mean_of(it->t));
}

static void assert_constant(const qkv_params *p, const char *name, qkv_real value)
{
    qkv_param *it = qkv_params_find(p, name);
    ck_assert_msg(it != NULL, "no parameter %s", name);
    for (size_t i = 0; i < it->t->size; i++)
        ck_assert_msg(it->t->data[i] == value, "%s[%zu] = %g, expected %g", name, i,
                      (double)it->t->data[i], (double)value);
}

/* The weights of block "h.0" and decoder block "dec.0" in p: N(0, std²), the
 * residual projections N(0, (std/√(2·n_layer))²). */
static void assert_block_stds(const qkv_params *p, double std, int n_layer)
{
    double resid = std / sqrt(2.0 * n_layer);
    const char *plain[] = {"h.0.attn.c_attn.weight", "h.0.mlp.c_fc.weight",
                           "dec.0.cross.c_q.weight", "dec.0.cross.c_kv.weight"};
    const char *residual[] = {"h.0.attn.c_proj.weight", "h.0.mlp.c_proj.weight",
                              "dec.0.cross.c_proj.weight"};
    for (int i = 0; i < 4; i++)
        assert_normal_init(p, plain[i], std);
    for (int i = 0; i < 3; i++)
        assert_normal_init(p, residual[i], resid);
}

START_TEST(test_init_statistics_and_names)
{
    fixture f;
    fx_open(&f, 11);
    qkv_block_config cfg = {.n_embd = 64, .n_head = 4, .n_layer = 4};
    qkv_block block;
    qkv_cross_block dec;
    qkv_embed wte;
    ck_assert_int_eq(qkv_embed_init(&wte, f.p, "wte", 50, 64, (qkv_real)0.02), 0);
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec.0", &cfg, 32), 0);
    ck_assert_int_eq(qkv_params_alloc(f.p, &f.rng), 0);
    const char *names[] = {"wte.weight",
                           "h.0.ln_1.weight", "h.0.ln_1.bias",
                           "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias",
                           "h.0.attn.c_proj.weight", "h.0.attn.c_proj.bias",
                           "h.0.ln_2.weight", "h.0.ln_2.bias",
                           "h.0.mlp.c_fc.weight", "h.0.mlp.c_fc.bias",
                           "h.0.mlp.c_proj.weight", "h.0.mlp.c_proj.bias"};
    for (int i = 0; i < 13; i++)
        ck_assert_str_eq(f.p->items[i].name, names[i]);
    ck_assert_int_eq(f.p->count, 13 + 20);
    qkv_tensor *w = block.attn.c_attn.weight;
    ck_assert(w->ndim == 2 && w->shape[0] == 192 && w->shape[1] == 64);
    assert_normal_init(f.p, "wte.weight", 0.02);
    assert_block_stds(f.p, 0.02, 4);
    const char *ones[] = {"h.0.ln_1.weight", "h.0.ln_2.weight", "dec.0.ln_1.weight",
                          "dec.0.ln_2.weight", "dec.0.ln_3.weight"};
    for (int i = 0; i < 5; i++)
        assert_constant(f.p, ones[i], 1);
    const char *zeros[] = {"h.0.ln_1.bias", "h.0.attn.c_attn.bias", "h.0.attn.c_proj.bias",
                           "h.0.mlp.c_fc.bias", "h.0.mlp.c_proj.bias", "dec.0.cross.c_kv.bias",
                           "dec.0.ln_3.bias"};
    for (int i = 0; i < 7; i++)
        assert_constant(f.p, zeros[i], 0);
    fx_close(&f);
}
END_TEST

/* init_std sets every weight's std, the residual projections' at
 * init_std/√(2·n_layer); 0 is 0.02. */
START_TEST(test_init_std_chosen_in_the_config)
{
    fixture f;
    fx_open(&f, 11);
    qkv_block_config cfg = {.n_embd = 64, .n_head = 4, .n_layer = 2, .init_std = (qkv_real)0.1};
    qkv_block block;
    qkv_cross_block dec;
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec.0", &cfg, 32), 0);
    ck_assert_int_eq(qkv_params_alloc(f.p, &f.rng), 0);
    assert_block_stds(f.p, 0.1, 2);
    fx_close(&f);
    /* 0 and 0.02 draw the same weights. */
    qkv_block_config zero = {.n_embd = 16, .n_head = 2}, explicit = zero;
    explicit.init_std = (qkv_real)0.02;
    qkv_params *p[2] = {qkv_params_new(), qkv_params_new()};
    qkv_block b[2];
    for (int i = 0; i < 2; i++) {
        qkv_rng rng;
        qkv_rng_seed(&rng, 5);
        ck_assert_int_eq(qkv_block_init(&b[i], p[i], "h", i ? &explicit : &zero, true), 0);
        ck_assert_int_eq(qkv_params_alloc(p[i], &rng), 0);
    }
    ck_assert_int_eq(p[0]->total, p[1]->total);
    ck_assert(memcmp(p[0]->data, p[1]->data, p[0]->total * sizeof(qkv_real)) == 0);
    qkv_params_free(&p[0]);
    qkv_params_free(&p[1]);
}
END_TEST

START_TEST(test_no_bias_config)
{
    fixture f;
    fx_open(&f, 12);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1, .opts.no_bias = true};
    qkv_block block;
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    ck_assert_int_eq(f.p->count, 6); /* two LayerNorm weights and four Linear weights */
    ck_assert_ptr_null(block.ln_1.bias);
    ck_assert_ptr_null(block.attn.c_attn.bias);
    fx_alloc_random(&f, 0.5);
    ck_assert_qkv(qkv_block_forward(&block, &f.ctx, randn3(&f, 2, 3, 8), NULL, NULL));
    fx_close(&f);
}
END_TEST

START_TEST(test_error_messages_name_the_shapes)
{
    fixture f;
    fx_open(&f, 13);
    qkv_block_config bad = {.n_embd = 10, .n_head = 3, .n_layer = 1};
    qkv_self_attn attn;
    qkv_cross_attn cross;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "h.0.attn", &bad, true), -1);
    ck_assert_error("h.0.attn", "n_embd 10", "n_head 3");
    bad = (qkv_block_config){.n_embd = 8, .n_head = 2, .n_layer = 1, .dropout = 1.5};
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &bad, true), -1);
    ck_assert_error("dropout 1.5");
    char longname[80];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    qkv_linear lin;
    ck_assert_int_eq(qkv_linear_init(&lin, f.p, longname, 2, 2, true, 1), -1);
    ck_assert_error("longer than");

    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    ck_assert_int_eq(qkv_cross_attn_init(&cross, f.p, "cross", &cfg, 6), 0);
    ck_assert_int_eq(qkv_linear_init(&lin, f.p, "fc", 8, 3, true, 1), 0);
    fx_alloc_random(&f, 0.5);
    ck_assert_ptr_null(qkv_self_attn_forward(&attn, &f.ctx, randn3(&f, 2, 3, 5), NULL, NULL));
    ck_assert_error("(2,3,5)", "(B,T,8)");
    ck_assert_ptr_null(qkv_linear_forward(&lin, &f.ctx, randn3(&f, 2, 3, 5)));
    ck_assert_error("fc.weight", "(3,8)", "(2,3,5)");
    qkv_tensor *x = randn3(&f, 2, 3, 8);
    ck_assert_ptr_null(qkv_cross_attn_forward(&cross, &f.ctx, x, randn3(&f, 2, 4, 7), NULL, NULL));
    ck_assert_error("(2,4,7)", "(B,T,6)");
    ck_assert_ptr_null(qkv_cross_attn_forward(&cross, &f.ctx, x, randn3(&f, 3, 4, 6), NULL, NULL));
    ck_assert_error("(2,3,8)", "(3,4,6)", "batch");
    /* A NULL input (an earlier failure) passes through, its message kept as the cause. */
    qkv_set_error("earlier");
    ck_assert_ptr_null(qkv_self_attn_forward(&attn, &f.ctx, NULL, NULL, NULL));
    ck_assert_str_eq(qkv_last_error(),
                     "qkv_self_attn_forward: input x is NULL: an earlier call failed: earlier");
    fx_close(&f);
}
END_TEST

START_TEST(test_dropout_only_in_training)
{
    fixture f;
    fx_open(&f, 15);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1, .dropout = 0.5};
    qkv_block block;
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    fx_alloc_random(&f, 0.5);
    qkv_tensor *x = randn3(&f, 2, 4, 8);
    qkv_tensor *y1 = qkv_block_forward(&block, &f.ctx, x, NULL, NULL);
    qkv_tensor *y2 = qkv_block_forward(&block, &f.ctx, x, NULL, NULL);
    ck_assert(y1 && y2 && memcmp(y1->data, y2->data, y1->size * sizeof(qkv_real)) == 0);
    f.ctx.train = true;
    qkv_tensor *y3 = qkv_block_forward(&block, &f.ctx, x, NULL, NULL);
    ck_assert_qkv(y3);
    ck_assert_double_gt(max_abs_diff(y1->data, y3->data, y1->size), 1e-3);
    f.ctx.rng = NULL;
    ck_assert_ptr_null(qkv_block_forward(&block, &f.ctx, x, NULL, NULL));
    ck_assert_error("rng");
    fx_close(&f);
}
END_TEST

START_TEST(test_embedding_and_linear)
{
    fixture f;
    fx_open(&f, 16);
    qkv_embed wte;
    qkv_linear lin;
    ck_assert_int_eq(qkv_embed_init(&wte, f.p, "wte", 5, 3, 1), 0);
    ck_assert_int_eq(qkv_linear_init(&lin, f.p, "fc", 3, 2, true, 1), 0);
    fx_alloc_random(&f, 1);
    const int32_t ids[2][2] = {{4, 0}, {2, 4}};
    qkv_tensor *e = qkv_embed_forward(&wte, &f.ctx, &ids[0][0], QKV_SHAPE(2, 2));
    ck_assert_qkv(e);
    ck_assert(e->ndim == 3 && e->shape[2] == 3);
    ck_assert_int_eq(memcmp(e->data + 3 * 3, wte.weight->data + 4 * 3, 3 * sizeof(qkv_real)), 0);
    qkv_tensor *y = qkv_linear_forward(&lin, &f.ctx, e);
    ck_assert_qkv(y);
    for (int r = 0; r < 4; r++)
        for (int o = 0; o < 2; o++) {
            double want = lin.bias->data[o];
            for (int i = 0; i < 3; i++)
                want += (double)e->data[r * 3 + i] * lin.weight->data[o * 3 + i];
            ck_assert_double_eq_tol(y->data[r * 2 + o], want, 1e-5);
        }
    fx_close(&f);
}
END_TEST

static Suite *nn_modules_suite(void)
{
    Suite *s = suite_create("nn_modules");
    TCase *tc = tcase_create("modules");
    tcase_add_test(tc, test_init_statistics_and_names);
    tcase_add_test(tc, test_init_std_chosen_in_the_config);
    tcase_add_test(tc, test_no_bias_config);
    tcase_add_test(tc, test_error_messages_name_the_shapes);
    tcase_add_test(tc, test_dropout_only_in_training);
    tcase_add_test(tc, test_embedding_and_linear);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(nn_modules_suite)
