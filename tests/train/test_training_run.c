/* The training run's side of a model of one's own (qkv/training.h): its
 * evaluation (gradients off, dropout off, a fresh arena per batch,
 * eval_iters batches averaged), cfg.seed reaching the model's streams,
 * gradient accumulation equal to one big batch, and resuming in one call
 * with the streams matched by name. */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "testing.h"

enum { IN = 4, ROWS = 16 };

/* y = x·w + noise-free targets 1..IN, the rows drawn from the model's stream. */
typedef struct line {
    qkv_params *params;
    qkv_tensor *w;                 /* (IN, 1) */
    qkv_rng data, other;           /* its streams: the batches, and one it never draws from */
    int eval_calls, grad_on, train_on, arena_dirty; /* what eval_loss saw */
    double grads[IN];              /* the gradient the grad hook saw */
} line;

static qkv_tensor *line_rows(line *m, const qkv_ctx *ctx, int rows)
{
    qkv_real x[ROWS * IN], y[ROWS];
    for (int i = 0; i < rows; i++) {
        y[i] = 0;
        for (int j = 0; j < IN; j++) {
            x[i * IN + j] = (qkv_real)qkv_rng_normal(&m->data);
            y[i] += (qkv_real)(j + 1) * x[i * IN + j];
        }
    }
    qkv_arena *a = ctx->arena;
    qkv_tensor *xs = qkv_from_array(a, QKV_SHAPE(rows, IN), x);
    qkv_tensor *err = qkv_sub(a, qkv_matmul(a, xs, m->w, false, false),
                              qkv_from_array(a, QKV_SHAPE(rows, 1), y));
    return qkv_mean(a, qkv_mul(a, err, err));
}

static qkv_tensor *line_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    return line_rows(model, ctx, hi - lo);
}

static qkv_tensor *line_eval_loss(void *model, const qkv_ctx *ctx, int which, int lo, int hi)
{
    line *m = model;
    (void)which;
    m->eval_calls++;
    m->grad_on += qkv_grad_enabled();
    m->train_on += ctx->train;
    m->arena_dirty += qkv_arena_used(ctx->arena) != 0;
    return line_rows(m, ctx, hi - lo);
}

/* The other kind of evaluation: it gets the run and evaluates itself. */
static double line_eval(void *model, qkv_training *run, int which)
{
    line *m = model;
    qkv_arena *arena = run->arena;
    (void)which;
    m->eval_calls++;
    m->grad_on += qkv_grad_enabled();
    m->arena_dirty += qkv_arena_used(arena) != 0;
    qkv_ctx ctx = {.arena = arena};
    qkv_tensor *loss = line_rows(m, &ctx, 4); /* leaves its graph in the arena */
    return loss ? loss->data[0] : NAN;
}

static int keep_grads(void *ud, qkv_params *p, double *loss)
{
    line *m = ud;
    (void)loss;
    for (int j = 0; j < IN; j++)
        m->grads[j] = p->grad[j];
    return 0;
}

static const char *const NAMES[] = {"data", "other"};

static line *line_new(void)
{
    line *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    m->params = qkv_params_new();
    m->w = qkv_params_add(m->params, "w", QKV_SHAPE(IN, 1), QKV_INIT_ZEROS, 0);
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

static const uint8_t BLOB[2] = {IN, 1};

static qkv_training_model line_plug(line *m, bool named)
{
    static qkv_rng *streams[2];
    streams[0] = &m->data, streams[1] = &m->other;
    return (qkv_training_model){.kind = "line", .model = m, .params = m->params,
                                .config = BLOB, .config_len = sizeof BLOB, .rngs = streams,
                                .n_rngs = 2, .loss = line_loss, .eval_loss = line_eval_loss,
                                .rng_names = named ? NAMES : NULL};
}

START_TEST(test_evaluation_is_the_runs)
{
    line *m = line_new();
    qkv_training_model plug = line_plug(m, false);
    qkv_train_config tc = {.iters = 5, .batch_size = 4, .eval_iters = 7};
    qkv_training *t = qkv_training_new(&plug, &tc);
    ck_assert_qkv(t);
    ck_assert_int_eq(qkv_training_step(t, NULL, NULL), 0);
    qkv_from_array(t->arena, QKV_SHAPE(1), (qkv_real[]){1}); /* something left in the arena */
    double loss = qkv_training_eval(t, 1);
    ck_assert(isfinite(loss) && loss > 0);
    ck_assert_int_eq(m->eval_calls, 7);   /* eval_iters batches */
    ck_assert_int_eq(t->eval_done, 7);
    ck_assert_int_eq(m->grad_on, 0);      /* gradients off */
    ck_assert_int_eq(m->train_on, 0);     /* dropout off */
    ck_assert_int_eq(m->arena_dirty, 0);  /* a fresh arena for every batch */
    ck_assert(qkv_grad_enabled());        /* and gradients back on after */
    ck_assert_uint_eq(qkv_arena_used(t->arena), 0);

    /* The model's own evaluation gets the arena empty and gradients off too. */
    t->model.eval_loss = NULL;
    t->model.eval = line_eval;
    m->eval_calls = m->grad_on = m->arena_dirty = 0;
    for (int i = 0; i < 2; i++)
        ck_assert(isfinite(qkv_training_eval(t, 0)));
    ck_assert_int_eq(m->eval_calls, 2);
    ck_assert_int_eq(m->grad_on, 0);
    ck_assert_int_eq(m->arena_dirty, 0);
    qkv_training_free(t);
    line_free(m);
}
END_TEST

/* A mean of the batches done: a stop after 3 gives their mean, 3 batches. */
static bool stop_after_three(void *ud) { return ++*(int *)ud >= 3; }

START_TEST(test_eval_stop_ends_the_evaluation)
{
    line *m = line_new();
    qkv_training_model plug = line_plug(m, false);
    qkv_training *t = qkv_training_new(&plug, &(qkv_train_config){.batch_size = 4});
    ck_assert_qkv(t);
    int asked = 0;
    t->eval_stop = stop_after_three, t->eval_stop_ud = &asked;
    ck_assert(isfinite(qkv_training_eval(t, 0)));
    ck_assert_int_eq(m->eval_calls, 3);
    ck_assert_int_eq(t->eval_done, 3);
    qkv_training_free(t);
    line_free(m);
}
END_TEST

START_TEST(test_the_seed_reaches_the_models_streams)
{
    uint64_t first[3];
    for (int i = 0; i < 3; i++) {
        line *m = line_new();
        qkv_rng_seed(&m->data, 100 + (uint64_t)i); /* the model's own seeding is replaced */
        qkv_training_model plug = line_plug(m, false);
        qkv_training *t = qkv_training_new(&plug, &(qkv_train_config){.seed = i < 2 ? 7 : 8});
        ck_assert_qkv(t);
        first[i] = qkv_rng_u64(&m->data);
        qkv_rng expect;
        qkv_rng_seed(&expect, (i < 2 ? 7 : 8) + 1);
        ck_assert_uint_eq(first[i], qkv_rng_u64(&expect)); /* stream 0 gets seed + 1 */
        qkv_rng_seed(&expect, (i < 2 ? 7 : 8) + 2);
        ck_assert_uint_eq(qkv_rng_u64(&m->other), qkv_rng_u64(&expect));
        qkv_training_free(t);
        line_free(m);
    }
    ck_assert_uint_eq(first[0], first[1]);
    ck_assert_uint_ne(first[0], first[2]);
}
END_TEST

/* One step of a run of k micro-batches of ROWS / k rows: its gradient
 * (into grads), its loss, and w after the step (into w). */
static double one_step(int k, double *grads, qkv_real *w)
{
    line *m = line_new();
    qkv_training_model plug = line_plug(m, false);
    qkv_train_config tc = {.iters = 1, .batch_size = ROWS / k, .grad_accum = k, .lr = 0.1};
    qkv_training *t = qkv_training_new(&plug, &tc);
    ck_assert_qkv(t);
    t->grad_hook = keep_grads, t->grad_hook_ud = m;
    double loss;
    ck_assert_msg(qkv_training_step(t, &loss, NULL) == 0, "%s", qkv_last_error());
    memcpy(grads, m->grads, sizeof m->grads);
    memcpy(w, m->w->data, IN * sizeof *w);
    qkv_training_free(t);
    line_free(m);
    return loss;
}

START_TEST(test_accumulation_is_one_big_batch)
{
#ifdef QKV_DOUBLE
    const double tol = 1e-12;
#else
    const double tol = 1e-5;
#endif
    double g1[IN], g4[IN];
    qkv_real w1[IN], w4[IN];
    double l1 = one_step(1, g1, w1), l4 = one_step(4, g4, w4);
    ck_assert_double_eq_tol(l1, l4, tol * l1);
    for (int j = 0; j < IN; j++) {
        ck_assert_msg(fabs(g1[j] - g4[j]) <= tol * fabs(g1[j]), "grad %d: %.17g vs %.17g", j,
                      g1[j], g4[j]);
        ck_assert_double_eq_tol(w1[j], w4[j], tol);
    }
}
END_TEST

/* A temporary file name (the file made, empty). */
static void temp_path(char *path)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

START_TEST(test_grad_accum_is_saved_and_old_checkpoints_read_1)
{
    char path[] = "/tmp/qkv_training_run_XXXXXX";
    temp_path(path);
    for (int k = 1; k <= 3; k += 2) {
        line *m = line_new();
        qkv_training_model plug = line_plug(m, false);
        qkv_training *t = qkv_training_new(&plug, &(qkv_train_config){.grad_accum = k});
        ck_assert_qkv(t);
        ck_assert_int_eq(qkv_training_save(t, path), 0);
        qkv_checkpoint *ck = qkv_checkpoint_open(path, "line");
        ck_assert_qkv(ck);
        /* Without accumulation the settings are the 64 bytes earlier versions wrote. */
        ck_assert_uint_eq(ck->config_len, sizeof BLOB + QKV_TRAIN_CONFIG_BYTES + (k > 1 ? 5 : 0));
        qkv_train_config back;
        ck_assert_int_eq(qkv_training_config_load(&back, ck, sizeof BLOB), 0);
        ck_assert_int_eq(back.grad_accum, k);
        qkv_checkpoint_close(ck);
        qkv_training_free(t);
        line_free(m);
    }
    unlink(path);
}
END_TEST

/* The rebuild for qkv_training_resume: a fresh model (into *ud), its
 * streams listed in the order and names the test sets. */
typedef struct rebuild_ctx {
    line *m;
    qkv_rng *streams[2];
    const char *names[2];
    bool swap;
} rebuild_ctx;

static int rebuild(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    rebuild_ctx *r = ud;
    if (ck->config_len < sizeof BLOB || memcmp(ck->config, BLOB, sizeof BLOB))
        return qkv_set_error("not a line checkpoint");
    r->m = line_new();
    *plug = line_plug(r->m, true);
    r->streams[r->swap] = &r->m->data, r->streams[!r->swap] = &r->m->other;
    plug->rngs = r->streams;
    plug->rng_names = r->names;
    return 0;
}

START_TEST(test_resume_in_one_call_matches_streams_by_name)
{
    char path[] = "/tmp/qkv_training_run_XXXXXX";
    temp_path(path);
    line *m = line_new();
    qkv_training_model plug = line_plug(m, true);
    qkv_training *t = qkv_training_new(&plug, &(qkv_train_config){.iters = 6, .batch_size = 4});
    ck_assert_qkv(t);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(qkv_training_step(t, NULL, NULL), 0);
    qkv_rng_u64(&m->other); /* the two streams now differ in their state */
    ck_assert_int_eq(qkv_training_save(t, path), 0);

    /* Listed the other way round, the streams still land by name. */
    rebuild_ctx r = {.names = {"other", "data"}, .swap = true};
    qkv_training *back = qkv_training_resume_rebuild(path, "line", rebuild, &r);
    ck_assert_qkv(back);
    ck_assert_int_eq(back->step, 3);
    ck_assert_int_eq(back->cfg.iters, 6);
    ck_assert_mem_eq(r.m->data.s, m->data.s, sizeof m->data.s);
    ck_assert_mem_eq(r.m->other.s, m->other.s, sizeof m->other.s);
    ck_assert_mem_eq(r.m->w->data, m->w->data, IN * sizeof(qkv_real));
    double a, b;
    ck_assert_int_eq(qkv_training_step(t, &a, NULL), 0);
    ck_assert_int_eq(qkv_training_step(back, &b, NULL), 0);
    ck_assert(a == b);
    qkv_training_free(back);
    line_free(r.m);

    /* A name the model does not have is refused, naming it. */
    r = (rebuild_ctx){.names = {"data", "evals"}};
    qkv_clear_error();
    ck_assert_ptr_null(qkv_training_resume_rebuild(path, "line", rebuild, &r));
    ck_assert_error("qkv_training_resume", "stream 'other' is not one of the 'line' model's");
    line_free(r.m);

    /* Named streams are not loaded by position into unnamed ones. */
    line *u = line_new();
    qkv_training_model unnamed = line_plug(u, false);
    qkv_training *ut = qkv_training_new(&unnamed, &(qkv_train_config){.iters = 6});
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "line");
    ck_assert_qkv(ck);
    FAILS_INT(qkv_training_load(ut, ck), "names its 2 streams");
    qkv_checkpoint_close(ck);
    qkv_training_free(ut);
    line_free(u);

    qkv_training_free(t);
    line_free(m);
    unlink(path);
}
END_TEST

static void one_thread(void) { ck_assert_int_eq(qkv_set_threads(1), 0); }

static Suite *training_run_suite(void)
{
    Suite *s = suite_create("training_run");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, one_thread, NULL);
    tcase_add_test(tc, test_evaluation_is_the_runs);
    tcase_add_test(tc, test_eval_stop_ends_the_evaluation);
    tcase_add_test(tc, test_the_seed_reaches_the_models_streams);
    tcase_add_test(tc, test_accumulation_is_one_big_batch);
    tcase_add_test(tc, test_grad_accum_is_saved_and_old_checkpoints_read_1);
    tcase_add_test(tc, test_resume_in_one_call_matches_streams_by_name);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(training_run_suite)
