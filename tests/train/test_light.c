/* The light run (qkv/training.h): by definition the training run of a
 * qkv_training_model whose loss is the light one's, so its steps are
 * compared bit for bit with such a run; its evaluation is the loss with
 * ctx->train false (or its eval), gradients off; it resumes bit-exactly with
 * streams and names that were locals; and a resume against another config
 * names the first byte (or the length) that differs. */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "testing.h"

enum { IN = 3, ROWS = 8, ITERS = 8 };

/* y = x·w to learn w = (1, 2, 3), its rows drawn from its own stream. */
typedef struct line {
    qkv_params *params;
    qkv_tensor *w; /* (IN, 1) */
    qkv_rng data;  /* the training rows */
    qkv_rng held;  /* the held-out rows */
    int train_calls, eval_calls, own_eval_calls, grad_on_in_eval;
} line;

static qkv_tensor *rows(line *m, const qkv_ctx *ctx)
{
    qkv_rng *r = ctx->train ? &m->data : &m->held;
    qkv_real x[ROWS * IN], y[ROWS];
    for (int i = 0; i < ROWS; i++) {
        y[i] = 0;
        for (int j = 0; j < IN; j++) {
            x[i * IN + j] = (qkv_real)qkv_rng_normal(r);
            y[i] += (qkv_real)(j + 1) * x[i * IN + j];
        }
    }
    qkv_arena *a = ctx->arena;
    qkv_tensor *err =
        qkv_sub(a, qkv_matmul(a, qkv_from_array(a, QKV_SHAPE(ROWS, IN), x), m->w, false, false),
                qkv_from_array(a, QKV_SHAPE(ROWS, 1), y));
    return qkv_mean(a, qkv_mul(a, err, err));
}

static qkv_tensor *light_loss(void *ud, const qkv_ctx *ctx)
{
    line *m = ud;
    if (ctx->train) {
        m->train_calls++;
    } else {
        m->eval_calls++;
        m->grad_on_in_eval += qkv_grad_enabled();
    }
    return rows(m, ctx);
}

static qkv_tensor *own_eval(void *ud, const qkv_ctx *ctx)
{
    ((line *)ud)->own_eval_calls++;
    return rows(ud, ctx);
}

/* The same loss as a qkv_training_model's, for the definition. */
static qkv_tensor *plug_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    (void)lo, (void)hi;
    return rows(model, ctx);
}

static line *line_new(void)
{
    line *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    m->params = qkv_params_new();
    m->w = qkv_params_add(m->params, "w", QKV_SHAPE(IN, 1), QKV_INIT_NORMAL, 0.5);
    qkv_rng init;
    qkv_rng_seed(&init, 5);
    ck_assert_int_eq(qkv_params_alloc(m->params, &init), 0);
    return m;
}

static void line_free(line *m)
{
    qkv_params_free(&m->params);
    free(m);
}

static const uint8_t SIZES[3] = {IN, 1, 64};

/* m's light model, its names written into names (a caller's buffer, to
 * show that the run keeps copies). */
static qkv_light_model light_of(line *m, char names[2][8])
{
    strcpy(names[0], "data"), strcpy(names[1], "held");
    return (qkv_light_model){.kind = "line",
                             .params = m->params,
                             .loss = light_loss,
                             .ud = m,
                             .config = SIZES,
                             .config_len = sizeof SIZES,
                             .rngs = {&m->data, &m->held},
                             .rng_names = {names[0], names[1]}};
}

static const qkv_train_config TC = {
    .iters = ITERS, .batch_size = ROWS, .lr = 0.05, .eval_iters = 3, .seed = 11};

/* A new light run of m with TC, its model into *lm. */
static qkv_training *light_new(line *m, char names[2][8], qkv_light_model *lm)
{
    *lm = light_of(m, names);
    qkv_training *t = qkv_light_new(lm, &TC);
    ck_assert_qkv(t);
    return t;
}

START_TEST(test_a_light_run_is_the_training_run)
{
    line *a = line_new(), *b = line_new();
    char names[2][8];
    qkv_light_model lm;
    qkv_training *light = light_new(a, names, &lm);
    qkv_rng *streams[] = {&b->data, &b->held};
    qkv_training_model plug = {.kind = "line",
                               .model = b,
                               .params = b->params,
                               .rngs = streams,
                               .n_rngs = 2,
                               .loss = plug_loss};
    qkv_training *full = qkv_training_new(&plug, &TC);
    ck_assert_qkv(full);
    for (int i = 0; i < ITERS; i++) {
        double la, lb;
        ck_assert_int_eq(qkv_training_step(light, &la, NULL), 0);
        ck_assert_int_eq(qkv_training_step(full, &lb, NULL), 0);
        ck_assert_msg(la == lb, "step %d: %.17g vs %.17g", i, la, lb);
    }
    ck_assert_mem_eq(a->w->data, b->w->data, IN * sizeof(qkv_real));
    ck_assert_int_eq(a->train_calls, ITERS);
    ck_assert_int_eq(a->eval_calls, 0);
    qkv_training_free(light);
    qkv_training_free(full);
    line_free(a);
    line_free(b);
}
END_TEST

START_TEST(test_evaluation_is_the_loss_held_out)
{
    line *m = line_new();
    char names[2][8];
    qkv_light_model lm;
    qkv_training *t = light_new(m, names, &lm);
    /* The mean of eval_iters held-out batches, computed here from a copy of the stream. */
    double want = 0;
    qkv_arena *a = qkv_arena_new(1 << 16);
    line copy = *m;
    bool was = qkv_set_grad_enabled(false);
    for (int i = 0; i < TC.eval_iters; i++) {
        want += rows(&copy, &(qkv_ctx){.arena = a})->data[0];
        qkv_arena_reset(a);
    }
    qkv_set_grad_enabled(was);
    qkv_arena_free(&a);
    double got = qkv_training_eval(t, 0);
    ck_assert_msg(got == want / TC.eval_iters, "%.17g vs %.17g", got, want / TC.eval_iters);
    ck_assert_int_eq(m->eval_calls, TC.eval_iters);
    ck_assert_int_eq(m->grad_on_in_eval, 0);
    ck_assert_int_eq(m->train_calls, 0);

    /* An evaluation of its own replaces the loss's. */
    qkv_training_free(t); /* the run's state, not the model */
    lm.eval = own_eval;
    t = qkv_light_new(&lm, &TC);
    ck_assert_qkv(t);
    ck_assert(isfinite(qkv_training_eval(t, 0)));
    ck_assert_int_eq(m->own_eval_calls, TC.eval_iters);
    ck_assert_int_eq(m->eval_calls, TC.eval_iters); /* as before */

    /* There is one evaluation. */
    ck_assert(isnan(qkv_training_eval(t, 1)));
    ck_assert_error("qkv_training_eval", "one evaluation, 0", "not 1");
    qkv_training_free(t);
    line_free(m);
}
END_TEST

START_TEST(test_a_light_run_computes_whole_batches)
{
    line *m = line_new();
    char names[2][8];
    qkv_light_model lm;
    qkv_training *t = light_new(m, names, &lm);
    t->batch_lo = 2; /* as a data-parallel rank would */
    ck_assert_int_eq(qkv_training_step(t, NULL, NULL), -1);
    ck_assert_error("whole batches", "[2, 8)");
    qkv_training_free(t);
    line_free(m);
}
END_TEST

/* ITERS steps straight, or half, save, resume in a fresh model, the rest:
 * the same weights, losses and streams. The names and the stream list were
 * locals, overwritten before the save. */
START_TEST(test_resume_is_exact)
{
    char path[64];
    snprintf(path, sizeof path, "%s", qkv_test_temp_file("", 0, 1)); /* an empty file */
    line *straight = line_new(), *half = line_new();
    char n1[2][8], n2[2][8];
    qkv_light_model l1, l2;
    qkv_training *t1 = light_new(straight, n1, &l1), *t2 = light_new(half, n2, &l2);
    for (int i = 0; i < ITERS / 2; i++)
        ck_assert_int_eq(qkv_training_step(t2, NULL, NULL), 0);
    strcpy(n2[0], "junk"), strcpy(n2[1], "junk2");
    l2.rngs[0] = l2.rngs[1] = NULL;
    ck_assert_int_eq(qkv_training_save(t2, path), 0);
    qkv_training_free(t2);
    line_free(half);

    line *back = line_new();
    char n3[2][8];
    qkv_light_model l3 = light_of(back, n3);
    qkv_training *t3 = qkv_light_resume(&l3, path);
    ck_assert_qkv(t3);
    ck_assert_int_eq(t3->step, ITERS / 2);
    ck_assert_int_eq(t3->cfg.iters, ITERS);
    double a = 0, b = 0;
    for (int i = 0; i < ITERS; i++)
        ck_assert_int_eq(qkv_training_step(t1, &a, NULL), 0);
    while (t3->step < ITERS)
        ck_assert_int_eq(qkv_training_step(t3, &b, NULL), 0);
    ck_assert_msg(a == b, "%.17g vs %.17g", a, b);
    ck_assert_mem_eq(straight->w->data, back->w->data, IN * sizeof(qkv_real));
    ck_assert_mem_eq(straight->data.s, back->data.s, sizeof back->data.s);
    ck_assert(qkv_training_eval(t1, 0) == qkv_training_eval(t3, 0));
    qkv_training_free(t1);
    qkv_training_free(t3);
    line_free(straight);
    line_free(back);
    unlink(path);
}
END_TEST

START_TEST(test_another_config_is_named)
{
    char path[64];
    snprintf(path, sizeof path, "%s", qkv_test_temp_file("", 0, 1)); /* an empty file */
    line *m = line_new();
    char names[2][8];
    qkv_light_model lm;
    qkv_training *t = light_new(m, names, &lm);
    ck_assert_int_eq(qkv_training_save(t, path), 0);
    qkv_training_free(t);

    uint8_t other[3] = {IN, 1, 32};
    lm.config = other;
    ck_assert_ptr_null(qkv_light_resume(&lm, path));
    ck_assert_error("qkv_light_resume", "config byte 2: 64 in the checkpoint, 32 here");
    lm.config_len = 2;
    ck_assert_ptr_null(qkv_light_resume(&lm, path));
    ck_assert_error("qkv_light_resume", "config is 3 bytes in the checkpoint, 2 here");
    lm.config = SIZES, lm.config_len = sizeof SIZES;
    lm.kind = "circle";
    ck_assert_ptr_null(qkv_light_resume(&lm, path));
    ck_assert_error("qkv_light_resume", "circle");

    /* A run saved by a qkv_training_model is no light run. */
    qkv_rng *streams[] = {&m->data};
    qkv_training_model plug = {.kind = "line",
                               .model = m,
                               .params = m->params,
                               .config = (uint8_t[]){200, 200, 200, 200},
                               .config_len = 4,
                               .rngs = streams,
                               .n_rngs = 1,
                               .loss = plug_loss};
    t = qkv_training_new(&plug, &TC);
    ck_assert_qkv(t);
    ck_assert_int_eq(qkv_training_save(t, path), 0);
    qkv_training_free(t);
    lm.kind = "line";
    ck_assert_ptr_null(qkv_light_resume(&lm, path));
    ck_assert_error("qkv_light_resume", "holds no light run");
    line_free(m);
    unlink(path);
}
END_TEST

static void one_thread(void) { ck_assert_int_eq(qkv_set_threads(1), 0); }

static Suite *light_suite(void)
{
    Suite *s = suite_create("light");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, one_thread, NULL);
    tcase_add_test(tc, test_a_light_run_is_the_training_run);
    tcase_add_test(tc, test_evaluation_is_the_loss_held_out);
    tcase_add_test(tc, test_a_light_run_computes_whole_batches);
    tcase_add_test(tc, test_resume_is_exact);
    tcase_add_test(tc, test_another_config_is_named);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(light_suite)
