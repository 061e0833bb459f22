/* The model-agnostic training run (qkv/training.h) with a model of the
 * test's own: a linear classifier of random points. It learns; the gradient
 * hook sits between backward and the update and can change the gradient and
 * the loss; the batch slice reaches the loss; the schedule's length moves
 * and is saved; save and resume are bit-exact; misuse is an error. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "testing.h"

enum { B = 8, IN = 4, OUT = 3 };

/* The model: logits = x · w over points whose class is the largest of their first OUT coordinates. */
typedef struct classifier {
    qkv_params *params;
    qkv_tensor *w;     /* (IN, OUT) */
    qkv_rng data_rng;  /* draws the points */
    qkv_rng *streams[1]; /* &data_rng, for the run */
    int lo, hi;        /* the slice the last loss was asked for */
} classifier;

static qkv_tensor *classifier_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    classifier *m = model;
    m->lo = lo;
    m->hi = hi;
    qkv_real x[B * IN];
    int32_t y[B];
    for (int i = 0; i < B; i++) {
        y[i] = 0;
        for (int j = 0; j < IN; j++) {
            x[i * IN + j] = (qkv_real)(2 * qkv_rng_uniform(&m->data_rng) - 1);
            if (j < OUT && x[i * IN + j] > x[i * IN + y[i]])
                y[i] = j;
        }
    }
    qkv_tensor *xs = qkv_from_array(ctx->arena, QKV_SHAPE(hi - lo, IN), x + lo * IN);
    return qkv_cross_entropy(ctx->arena, qkv_matmul(ctx->arena, xs, m->w, false, false), y + lo, -1);
}

/* Its one evaluation: the first weight, to tell that `which`, the model
 * and the run arrive. */
static double classifier_eval(void *model, qkv_training *run, int which)
{
    classifier *m = model;
    return which == 7 && run->model.model == m ? (double)m->w->data[0] : NAN;
}

static classifier *classifier_new(uint64_t seed)
{
    classifier *m = calloc(1, sizeof *m);
    m->params = qkv_params_new();
    m->w = qkv_params_add(m->params, "w", QKV_SHAPE(IN, OUT), QKV_INIT_NORMAL, 0.1);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    ck_assert_int_eq(qkv_params_alloc(m->params, &rng), 0);
    qkv_rng_seed(&m->data_rng, seed + 1);
    m->streams[0] = &m->data_rng;
    return m;
}

static void classifier_free(classifier *m)
{
    qkv_params_free(&m->params);
    free(m);
}

static const uint8_t BLOB[3] = {1, 2, 3}; /* the model's config, as far as the run knows */

/* What m gives a run. */
static qkv_training_model plug_of(classifier *m)
{
    return (qkv_training_model){.kind = "classifier", .model = m, .params = m->params,
                                .config = BLOB, .config_len = sizeof BLOB, .rngs = m->streams,
                                .n_rngs = 1, .loss = classifier_loss, .eval = classifier_eval};
}

/* A run of m with the test's settings. */
static qkv_training *run_of(classifier *m, int iters)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = iters;
    tc.batch_size = B;
    tc.lr = 0.05;
    tc.min_lr = 0.005;
    tc.warmup = 2;
    tc.weight_decay = 0;
    qkv_training_model plug = plug_of(m);
    qkv_training *t = qkv_training_new(&plug, &tc);
    ck_assert_qkv(t);
    return t;
}

START_TEST(test_a_model_of_ones_own_learns)
{
    classifier *m = classifier_new(3);
    qkv_training *t = run_of(m, 300);
    double first = 0, last = 0, loss;
    for (int i = 0; i < 300; i++) {
        ck_assert_msg(qkv_training_step(t, &loss, NULL) == 0, "%s", qkv_last_error());
        first += i < 20 ? loss / 20 : 0;
        last += i >= 280 ? loss / 20 : 0;
    }
    ck_assert_int_eq(t->step, 300);
    ck_assert_msg(last < 0.6 * first, "the loss went from %g to %g only", first, last);
    ck_assert_int_eq(m->lo, 0);
    ck_assert_int_eq(m->hi, B);
    ck_assert(qkv_training_eval(t, 7) == (double)m->w->data[0]);
    qkv_training_free(t);
    classifier_free(m);
}
END_TEST

/* The hook of this test: zero the gradient (an all-reduce would average it)
 * and replace the loss, or fail. */
static int hook(void *ud, qkv_params *p, double *loss)
{
    int *calls = ud;
    ++*calls;
    double sq = 0;
    for (size_t i = 0; i < p->total; i++) {
        sq += (double)p->grad[i] * p->grad[i];
        p->grad[i] = 0;
    }
    ck_assert_msg(sq > 0, "the hook ran before backward");
    *loss = 42;
    return *calls > 1 ? qkv_set_error("hook: no peer answered") : 0;
}

START_TEST(test_the_grad_hook_runs_between_backward_and_the_update)
{
    classifier *m = classifier_new(4);
    qkv_training *t = run_of(m, 10);
    int calls = 0;
    t->grad_hook = hook;
    t->grad_hook_ud = &calls;
    t->batch_lo = 2;
    t->batch_hi = 5;
    qkv_real before[IN * OUT];
    memcpy(before, m->params->data, sizeof before);
    double loss, norm;
    ck_assert_msg(qkv_training_step(t, &loss, &norm) == 0, "%s", qkv_last_error());
    ck_assert_int_eq(m->lo, 2);
    ck_assert_int_eq(m->hi, 5);
    ck_assert(loss == 42);      /* the hook's loss is the step's */
    ck_assert(norm == 0);       /* the norm is of the gradient the hook left */
    ck_assert_msg(memcmp(before, m->params->data, sizeof before) == 0,
                  "a zero gradient moved the weights (no weight decay here)");
    ck_assert_int_eq(t->step, 1);
    /* A failing hook fails the step before the update. */
    FAILS_INT(qkv_training_step(t, &loss, NULL), "hook: no peer answered");
    ck_assert_int_eq(t->step, 1);
    ck_assert_int_eq(calls, 2);
    qkv_training_free(t);
    classifier_free(m);
}
END_TEST

START_TEST(test_the_schedule_length_moves_and_is_saved)
{
    classifier *m = classifier_new(5);
    qkv_training *t = run_of(m, 100);
    double lr_long = qkv_training_lr(t, 50);
    ck_assert_int_eq(qkv_training_set_iters(t, 50), 0);
    ck_assert(qkv_training_lr(t, 50) == 0.005); /* the cosine now ends there */
    ck_assert(qkv_training_lr(t, 50) < lr_long);
    FAILS_INT(qkv_training_set_iters(t, 0), "iters 0 must be in [1, ");
    char path[] = "/tmp/qkv_training_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(qkv_training_save(t, path) == 0, "%s", qkv_last_error());
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "classifier");
    ck_assert_qkv(ck);
    ck_assert_uint_eq(ck->config_len, sizeof BLOB + QKV_TRAIN_CONFIG_BYTES);
    ck_assert_int_eq(memcmp(ck->config, BLOB, sizeof BLOB), 0);
    qkv_train_config tc;
    ck_assert_msg(qkv_training_config_load(&tc, ck, sizeof BLOB) == 0, "%s", qkv_last_error());
    ck_assert_int_eq(tc.iters, 50);
    ck_assert(tc.lr == 0.05 && tc.batch_size == B && tc.seed == 1337);
    FAILS_INT(qkv_training_config_load(&tc, ck, 2), "config of 67 bytes, expected 66");
    qkv_checkpoint_close(ck);
    qkv_training_free(t);
    classifier_free(m);
    unlink(path);
}
END_TEST

/* Train n steps, recording each loss. */
static void run_steps(qkv_training *t, int n, double *losses)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(qkv_training_step(t, &losses[i], NULL) == 0, "%s", qkv_last_error());
}

START_TEST(test_resume_is_bit_exact)
{
    char path[] = "/tmp/qkv_training_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    double straight[12], split[12];
    classifier *a = classifier_new(6), *b = classifier_new(6);
    qkv_training *ta = run_of(a, 12), *tb = run_of(b, 12);
    run_steps(ta, 12, straight);
    run_steps(tb, 6, split);
    ck_assert_msg(qkv_training_save(tb, path) == 0, "%s", qkv_last_error());
    qkv_training_free(tb);
    classifier_free(b);

    b = classifier_new(99); /* other weights and stream: the checkpoint must set both */
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "classifier");
    ck_assert_qkv(ck);
    tb = run_of(b, 1);
    ck_assert_msg(qkv_training_load(tb, ck) == 0, "%s", qkv_last_error());
    qkv_checkpoint_close(ck);
    ck_assert_int_eq(tb->step, 6);
    ck_assert_int_eq(qkv_training_set_iters(tb, 12), 0);
    run_steps(tb, 6, split + 6);
    ck_assert_int_eq(memcmp(straight, split, sizeof straight), 0);
    ck_assert_int_eq(memcmp(a->params->data, b->params->data, a->params->total * sizeof(qkv_real)),
                     0);

    /* The same in one call: qkv_training_resume reads the settings (12 steps) too. */
    classifier *c = classifier_new(98);
    qkv_training_model plug = plug_of(c);
    qkv_training *tr = qkv_training_resume(&plug, path, 0);
    ck_assert_qkv(tr);
    ck_assert_int_eq(tr->step, 6);
    ck_assert_int_eq(tr->cfg.iters, 12);
    run_steps(tr, 6, split + 6);
    ck_assert_int_eq(memcmp(straight, split, sizeof straight), 0);
    ck_assert_int_eq(memcmp(a->params->data, c->params->data, a->params->total * sizeof(qkv_real)),
                     0);
    qkv_training_free(tr);
    classifier_free(c);
    qkv_training_free(ta);
    qkv_training_free(tb);
    classifier_free(a);
    classifier_free(b);
    unlink(path);
}
END_TEST

/* qkv_training_resume continues only the model the checkpoint holds. */
START_TEST(test_resume_refuses_another_model)
{
    char path[] = "/tmp/qkv_training_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    classifier *m = classifier_new(8);
    qkv_training *t = run_of(m, 4);
    run_steps(t, 2, (double[2]){0});
    ck_assert_msg(qkv_training_save(t, path) == 0, "%s", qkv_last_error());
    qkv_training_free(t);
    qkv_training_model plug = plug_of(m);
    const uint8_t other[3] = {1, 2, 4};
    plug.config = other;
    FAILS_NULL(qkv_training_resume(&plug, path, 0), "qkv_training_resume", path,
               "holds another classifier model than this one (its config differs at byte 2: 3 in "
               "the checkpoint, 4 here)");
    plug = plug_of(m);
    qkv_tokenizer abc;
    qkv_tokenizer_build(&abc, "abc", 3);
    plug.vocab = &abc;
    FAILS_NULL(qkv_training_resume(&plug, path, 0), "qkv_training_resume",
               "holds a vocabulary of 0 symbols but the model's has 3");
    plug = plug_of(m);
    plug.kind = "regressor";
    FAILS_NULL(qkv_training_resume(&plug, path, 0), "qkv_training_resume", "'classifier'",
               "'regressor'");
    plug = plug_of(m);
    FAILS_NULL(qkv_training_resume(&plug, path, 1), "qkv_training_resume", "is at step 2 (of 4)",
               "iters 1");
    FAILS_NULL(qkv_training_resume(&plug, path, -1), "qkv_training_resume", "iters -1");
    FAILS_NULL(qkv_training_resume(&plug, NULL, 0), "qkv_training_resume", "path is NULL");
    FAILS_NULL(qkv_training_resume(NULL, path, 0), "qkv_training_resume", "model is NULL");
    t = qkv_training_resume(&plug, path, 6); /* the model it holds, made longer */
    ck_assert_qkv(t);
    ck_assert(t->step == 2 && t->cfg.iters == 6);
    qkv_training_free(t);
    classifier_free(m);
    unlink(path);
}
END_TEST

/* What the start and release callbacks of the test saw. */
static int starts, releases, start_batch;
static bool start_fails;

static int counted_start(void *model, const qkv_training *run)
{
    ck_assert_ptr_eq(model, run->model.model);
    starts++;
    start_batch = run->cfg.batch_size;
    return start_fails ? qkv_set_error("start: no room for the batches") : 0;
}

static void counted_release(void *model)
{
    ck_assert_ptr_nonnull(model);
    releases++;
}

/* start sees the settings filled in; a run given a model that it is to
 * release releases it once: when it is freed, or at once when it cannot be
 * made (whatever the reason) or resumed. */
START_TEST(test_start_and_release)
{
    classifier *m = classifier_new(9);
    qkv_training_model plug = plug_of(m);
    plug.start = counted_start;
    plug.release = counted_release;
    qkv_train_config tc = {.iters = 3}; /* batch_size 0: the default */
    qkv_training *t = qkv_training_new(&plug, &tc);
    ck_assert_qkv(t);
    ck_assert(starts == 1 && start_batch == 12 && releases == 0);
    qkv_training_free(t);
    ck_assert_int_eq(releases, 1);
    FAILS_NULL(qkv_training_new(&plug, NULL), "tc is NULL");
    ck_assert_int_eq(releases, 2);
    FAILS_NULL(qkv_training_new(&plug, &(qkv_train_config){.lr = -1}), "lr -1");
    ck_assert_int_eq(releases, 3);
    qkv_training_model no_loss = plug;
    no_loss.loss = NULL;
    FAILS_NULL(qkv_training_new(&no_loss, &tc), "model->loss is NULL");
    ck_assert_int_eq(releases, 4);
    start_fails = true;
    FAILS_NULL(qkv_training_new(&plug, &tc), "qkv_training_new: start: no room for the batches");
    ck_assert(starts == 2 && releases == 5);
    start_fails = false;
    FAILS_NULL(qkv_training_resume(&plug, "/nonexistent/run.ckpt", 0), "cannot open");
    ck_assert_int_eq(releases, 6);
    FAILS_NULL(qkv_training_resume(&plug, NULL, 0), "path is NULL");
    ck_assert_int_eq(releases, 7);
    classifier_free(m);
}
END_TEST

START_TEST(test_misuse_is_an_error)
{
    classifier *m = classifier_new(7);
    qkv_train_config tc = qkv_train_defaults();
    qkv_training_model plug = {.kind = "classifier", .model = m, .params = m->params};
    FAILS_NULL(qkv_training_new(&plug, &tc), "training: model->loss is NULL");
    plug.loss = classifier_loss;
    plug.n_rngs = 9;
    FAILS_NULL(qkv_training_new(&plug, &tc), "9 model streams");
    plug.n_rngs = 0;
    FAILS_NULL(qkv_training_new(NULL, &tc), "qkv_training_new", "model is NULL");
    FAILS_NULL(qkv_training_new(&plug, NULL), "qkv_training_new", "tc is NULL");
    tc.iters = -1;
    FAILS_NULL(qkv_training_new(&plug, &tc), "train config: iters -1 is not in [1, 2147483647]");
    tc = qkv_train_defaults();
    qkv_training *t = qkv_training_new(&plug, &tc);
    ck_assert_qkv(t);
    qkv_clear_error();
    ck_assert(isnan(qkv_training_eval(t, 0)));
    ck_assert_error("the 'classifier' model has no evaluation");
    FAILS_INT(qkv_training_step(NULL, NULL, NULL), "qkv_training_step", "t is NULL");
    FAILS_INT(qkv_training_save(t, NULL), "qkv_training_save", "path is NULL");
    FAILS_INT(qkv_training_load(t, NULL), "qkv_training_load", "ck is NULL");
    FAILS_INT(qkv_training_set_iters(NULL, 5), "qkv_training_set_iters", "t is NULL");
    qkv_training_free(t);
    qkv_training_free(NULL);
    classifier_free(m);
}
END_TEST

/* One thread: the model is tiny, and idle OpenMP threads on a busy machine
 * make its 300 steps take seconds instead of milliseconds. */
static void one_thread(void) { ck_assert_int_eq(qkv_set_threads(1), 0); }

static Suite *training_suite(void)
{
    Suite *s = suite_create("training");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* slow under the sanitizers on a busy machine */
    tcase_add_checked_fixture(tc, one_thread, NULL);
    tcase_add_test(tc, test_a_model_of_ones_own_learns);
    tcase_add_test(tc, test_the_grad_hook_runs_between_backward_and_the_update);
    tcase_add_test(tc, test_the_schedule_length_moves_and_is_saved);
    tcase_add_test(tc, test_resume_is_bit_exact);
    tcase_add_test(tc, test_resume_refuses_another_model);
    tcase_add_test(tc, test_start_and_release);
    tcase_add_test(tc, test_misuse_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(training_suite)
