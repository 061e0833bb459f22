/* The API's one rule for configs (qkv/base.h): a field left 0 takes its
 * documented default, so zero-initialised configs work; required sizes left
 * 0 are errors naming them. Also the thread-count setting. */
#include <omp.h>
#include <unistd.h>

#include "error_text.h"
#include "qkv/seq2seq.h"
#include "testing.h"

/* A (2,3) matrix and a (3) bias with fixed values and gradients. */
static qkv_params *small_params(void)
{
    qkv_params *p = qkv_params_new();
    qkv_tensor *w = qkv_params_add(p, "w", QKV_SHAPE(2, 3), QKV_INIT_ZEROS, 0);
    qkv_tensor *b = qkv_params_add(p, "b", QKV_SHAPE(3), QKV_INIT_ZEROS, 0);
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    for (int i = 0; i < 6; i++)
        w->data[i] = (qkv_real)(0.5 * i - 1), w->grad[i] = (qkv_real)(0.1 * (i % 4) - 0.15);
    for (int i = 0; i < 3; i++)
        b->data[i] = (qkv_real)(0.2 * i), b->grad[i] = (qkv_real)(0.3 - 0.25 * i);
    return p;
}

/* p's values after three optimizer steps of cfg at lr 0.1, into out (9 values). */
static void three_steps(const qkv_optim_config *cfg, qkv_real out[9], qkv_optim_config *used)
{
    qkv_params *p = small_params();
    qkv_optim *o = qkv_optim_new(p, cfg);
    ck_assert_qkv(o);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(qkv_optim_step(o, p, 0.1), 0);
    memcpy(out, p->data, 9 * sizeof *out);
    *used = o->cfg;
    qkv_optim_free(o);
    qkv_params_free(&p);
}

START_TEST(test_zero_optim_config_is_adamw_without_decay)
{
    qkv_real zero[9], explicit_[9], recipe[9];
    qkv_optim_config used, want = qkv_adamw_defaults(), used_recipe;
    want.weight_decay = 0;
    three_steps(&(qkv_optim_config){0}, zero, &used);
    ck_assert_int_eq(used.kind, QKV_OPTIM_ADAMW);
    ck_assert(used.beta1 == 0.9 && used.beta2 == 0.99 && used.eps == 1e-8);
    ck_assert(used.weight_decay == 0 && used.momentum == 0);
    three_steps(&want, explicit_, &used);
    ck_assert_mem_eq(zero, explicit_, sizeof zero);
    /* Only weight decay set: the rest defaults, and equals the recipe. */
    three_steps(&(qkv_optim_config){.weight_decay = 0.1}, zero, &used);
    three_steps(&(qkv_optim_config[]){qkv_adamw_defaults()}[0], recipe, &used_recipe);
    ck_assert_mem_eq(zero, recipe, sizeof zero);
    /* SGD left at zero: plain SGD, w ← w − lr·g. */
    qkv_params *p = small_params();
    qkv_optim *o = qkv_optim_new(p, &(qkv_optim_config){.kind = QKV_OPTIM_SGD});
    ck_assert_qkv(o);
    qkv_real w0 = p->data[1], g0 = p->grad[1];
    ck_assert_int_eq(qkv_optim_step(o, p, 0.5), 0);
    ck_assert(p->data[1] == (qkv_real)(w0 - (qkv_real)0.5 * g0));
    qkv_optim_free(o);
    /* Settings that are wrong stay wrong, and say so. */
    ck_assert_ptr_null(qkv_optim_new(p, &(qkv_optim_config){.kind = 7}));
    ck_assert_error("unknown kind 7");
    ck_assert_ptr_null(qkv_optim_new(p, &(qkv_optim_config){.beta1 = 1}));
    ck_assert_error("AdamW", "beta1");
    ck_assert_ptr_null(qkv_optim_new(NULL, &(qkv_optim_config){0}));
    ck_assert_error("qkv_optim_new", "p is NULL");
    ck_assert_ptr_null(qkv_optim_new(p, NULL));
    ck_assert_error("qkv_optim_new", "cfg is NULL");
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_zero_lr_schedule_is_constant)
{
    qkv_lr_schedule zero = {0}, lr = {.lr = 3e-4}, warm = {.lr = 2e-3, .warmup_iters = 3};
    for (int64_t it = 0; it < 50; it += 7) {
        ck_assert_double_eq(qkv_lr_at(&zero, it), 1e-3);
        ck_assert_double_eq(qkv_lr_at(&lr, it), 3e-4);
    }
    ck_assert_double_eq(qkv_lr_at(&warm, 0), 2e-3 / 4);
    ck_assert_double_eq(qkv_lr_at(&warm, 3), 2e-3);
    ck_assert_double_eq(qkv_lr_at(&warm, 1000), 2e-3);
    ck_assert(isnan(qkv_lr_at(NULL, 0)));
    ck_assert_error("qkv_lr_at", "NULL");
}
END_TEST

START_TEST(test_block_config_needs_only_its_width_and_heads)
{
    qkv_block_config only = {.n_embd = 16, .n_head = 2}, one = {.n_embd = 16, .n_head = 2,
                                                               .n_layer = 1};
    qkv_params *a = qkv_params_new(), *b = qkv_params_new();
    qkv_cross_attn ca, cb;
    qkv_cross_block xa;
    qkv_block ba;
    /* A standalone cross-attention (the case) and blocks, with n_layer left 0. */
    ck_assert_int_eq(qkv_cross_attn_init(&ca, a, "x", &only, 8), 0);
    ck_assert_int_eq(qkv_cross_block_init(&xa, a, "xb", &only, 8), 0);
    ck_assert_int_eq(qkv_block_init(&ba, a, "b", &only, true), 0);
    ck_assert_int_eq(qkv_cross_attn_init(&cb, b, "x", &one, 8), 0);
    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 3);
    qkv_rng_seed(&r2, 3);
    ck_assert_int_eq(qkv_params_alloc(a, &r1), 0);
    ck_assert_int_eq(qkv_params_alloc(b, &r2), 0);
    /* n_layer 0 is n_layer 1: the same initial weights (the residual projection's std too). */
    size_t n = b->total;
    ck_assert_mem_eq(a->data, b->data, n * sizeof(qkv_real));
    qkv_kv_cache *c = qkv_kv_cache_new(&only, 1, 4);
    ck_assert_qkv(c);
    ck_assert_int_eq(c->n_layer, 1);
    qkv_kv_cache_free(c);
    /* The sizes are required. */
    ck_assert_int_eq(qkv_self_attn_init(&(qkv_self_attn){0}, a, "s", &(qkv_block_config){0},
                                        true), -1);
    ck_assert_error("n_embd 0", "n_head 0");
    ck_assert_int_eq(qkv_mlp_init(&(qkv_mlp){0}, a, "m",
                                  &(qkv_block_config){.n_embd = 8, .n_head = 2, .n_layer = -1}),
                     -1);
    ck_assert_error("n_layer -1");
    qkv_params_free(&a);
    qkv_params_free(&b);
}
END_TEST

START_TEST(test_model_configs_require_only_their_sizes)
{
    qkv_gpt *m = qkv_gpt_new(&(qkv_gpt_config){.vocab_size = 5, .block_size = 4, .n_layer = 1,
                                                .n_head = 1, .n_embd = 4}, 1);
    ck_assert_qkv(m);
    ck_assert(m->cfg.dropout == 0 && !m->cfg.opts.no_bias);
    ck_assert_ptr_nonnull(qkv_params_find(m->params, "h.0.attn.c_attn.bias"));
    qkv_gpt_free(m);
    ck_assert_int_eq(qkv_gpt_config_check(&(qkv_gpt_config){0}), -1);
    ck_assert_error("vocab_size");
    ck_assert_int_eq(qkv_seq2seq_config_check(&(qkv_seq2seq_config){0}), -1);
    ck_assert_error("0");
}
END_TEST

/* Whether two run settings are the same, field by field. */
static bool same_run_settings(const qkv_train_config *a, const qkv_train_config *b)
{
    return a->iters == b->iters && a->batch_size == b->batch_size && a->lr == b->lr &&
           a->min_lr == b->min_lr && a->warmup == b->warmup &&
           a->weight_decay == b->weight_decay && a->grad_clip == b->grad_clip &&
           a->eval_iters == b->eval_iters && a->seed == b->seed;
}

START_TEST(test_zero_train_config_takes_its_defaults)
{
    /* What (qkv_train_config){0} stands for: the recipe's lengths and lr,
     * and 0 (none) where 0 is a setting of its own. */
    qkv_train_config want = qkv_train_defaults();
    want.min_lr = 0, want.warmup = 0, want.weight_decay = 0, want.grad_clip = 0, want.seed = 0;
    ck_assert(want.iters == 2000 && want.batch_size == 12 && want.lr == 1e-3 &&
              want.eval_iters == 200);
    char text[4000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "to be or not to be, that is the question.\n"[i % 42];
    qkv_corpus *c = qkv_corpus_from_text(text, sizeof text, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = {.vocab_size = c->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2,
                         .n_embd = 16};
    test_run *t = gpt_run_new(&mc, &(qkv_train_config){0}, c);
    ck_assert_qkv(t);
    ck_assert(same_run_settings(&t->run->cfg, &want));
    ck_assert_double_eq(qkv_training_lr(t->run, 0), 1e-3); /* no warmup */
    ck_assert_double_eq(qkv_training_lr(t->run, 2000), 0); /* the cosine ends at 0 */
    /* The batches are sized by the filled-in settings: the first step's loss
     * is the model's on 12 windows from the training stream (seed 0 + 1). */
    qkv_batcher batches;
    ck_assert_int_eq(qkv_batcher_init(&batches, c, QKV_SPLIT_TRAIN, 12, 8, 1), 0);
    int32_t x[12 * 8], y[12 * 8];
    qkv_batcher_next(&batches, x, y);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    qkv_tensor *expected = qkv_gpt_loss(t->model, &(qkv_ctx){.arena = arena}, x, y, 12, 8);
    ck_assert_qkv(expected);
    double first_batch = expected->data[0];
    qkv_arena_free(&arena);
    double first = 0, loss = 0;
    for (int i = 0; i < 40; i++) {
        ck_assert_msg(qkv_training_step(t->run, &loss, NULL) == 0, "%s", qkv_last_error());
        if (i == 0)
            first = loss;
    }
    ck_assert_msg(fabs(first - first_batch) < 1e-5, "first step's loss %.9g, not the %.9g of "
                  "12 windows", first, first_batch);
    ck_assert_msg(loss < first - 0.2, "the loss went from %g to %g only", first, loss);
    /* The checkpoint holds the values used, so a resume runs the same run. */
    char dir[64], path[96];
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_defaults");
    snprintf(path, sizeof path, "%s/zero.ckpt", dir);
    ck_assert_int_eq(qkv_training_save(t->run, path), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    qkv_train_config back;
    ck_assert_int_eq(qkv_training_config_load(&back, ck, QKV_GPT_CONFIG_BYTES), 0);
    ck_assert(same_run_settings(&back, &want));
    qkv_checkpoint_close(ck);
    test_run_free(t);
    qkv_corpus_free(c);
    qkv_test_remove_tmpdir(dir);

    /* The encoder-decoder too: its batch is sized by the filled-in settings. */
    const qkv_seq2seq_task *task = qkv_seq2seq_task_find("dates");
    qkv_seq2seq_config sc = qkv_seq2seq_config_for(task, 1, 2, 16, 0);
    test_run *s = s2s_run_new(&sc, &(qkv_train_config){0}, task);
    ck_assert_qkv(s);
    ck_assert(same_run_settings(&s->run->cfg, &want));
    ck_assert_msg(qkv_training_step(s->run, &loss, NULL) == 0, "%s", qkv_last_error());
    ck_assert(isfinite(loss));
    test_run_free(s);

    /* Settings that are wrong stay wrong, and say so. */
    qkv_train_config bad[] = {{.iters = -1}, {.batch_size = -2}, {.lr = -1e-3}, {.min_lr = NAN},
                              {.warmup = -5}, {.weight_decay = -0.1}, {.grad_clip = -1},
                              {.eval_iters = -3}, {.lr = INFINITY}};
    const char *says[] = {"iters -1", "batch_size -2", "lr -0.001", "min_lr nan", "warmup -5",
                          "weight_decay -0.1", "grad_clip -1", "eval_iters -3", "lr inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(qkv_train_config_check(&bad[i]), -1);
        ck_assert_error("train config", says[i]);
    }
}
END_TEST

START_TEST(test_threads_setting)
{
    int start = qkv_threads();
    ck_assert_int_ge(start, 1);
    ck_assert_int_eq(qkv_set_threads(1), 0);
    ck_assert_int_eq(qkv_threads(), 1);
    ck_assert_int_eq(omp_get_max_threads(), 1); /* it is OpenMP's setting */
    ck_assert_int_eq(qkv_set_threads(3), 0);
    ck_assert_int_eq(qkv_threads(), 3);
    ck_assert_int_eq(qkv_set_threads(0), 0); /* the default again */
    ck_assert_int_eq(qkv_threads(), start);
    ck_assert_int_eq(qkv_set_threads(-2), -1);
    ck_assert_error("qkv_set_threads", "n -2");
    ck_assert_int_eq(qkv_threads(), start);
}
END_TEST

static Suite *defaults_suite(void)
{
    Suite *s = suite_create("defaults");
    TCase *tc = tcase_create("defaults");
    tcase_set_timeout(tc, 60); /* it trains a little: slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_zero_optim_config_is_adamw_without_decay);
    tcase_add_test(tc, test_zero_lr_schedule_is_constant);
    tcase_add_test(tc, test_block_config_needs_only_its_width_and_heads);
    tcase_add_test(tc, test_model_configs_require_only_their_sizes);
    tcase_add_test(tc, test_zero_train_config_takes_its_defaults);
    tcase_add_test(tc, test_threads_setting);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(defaults_suite)
