/* Bad input never takes the caller's process down, part 2: the GPT,
 * sampling, training runs, checkpoints, dates and pictures given bad
 * arguments return NULL (or -1, or NAN) with a message that says what is
 * wrong; and the library does not even reference exit(), abort() or the
 * assert machinery (test_errors_ops.c: tensors, ops, modules, optimizers). */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "errors_suite.h"
#include "cli/viz/viz.h"
#include "testing.h"
/* Under AddressSanitizer a huge malloc must return NULL like the real one
 * (qkv reports it), not stop the test. Unused without ASan; visible, since
 * the build hides symbols by default and ASan looks this one up. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* The test's arena (errors_suite.h). */
#define A errors_arena

/* ======================================================== the GPT, sampling */

static qkv_gpt_config tiny_gpt(int vocab)
{
    return (qkv_gpt_config){.vocab_size = vocab, .block_size = 8, .n_layer = 1, .n_head = 2,
                            .n_embd = 8, .dropout = 0};
}

START_TEST(test_gpt_config_errors_name_the_field)
{
    /* V, T, n_layer, n_head, n_embd, dropout */
#define GPT(V, T, L, H, C, P)                                                                      \
    {.vocab_size = V, .block_size = T, .n_layer = L, .n_head = H, .n_embd = C, .dropout = P}
    struct {
        qkv_gpt_config cfg;
        const char *want;
    } cases[] = {
        {GPT(0, 8, 1, 2, 8, 0), "vocab_size 0"},
        {GPT(5, 70000, 1, 2, 8, 0), "block_size 70000"},
        {GPT(5, 8, 0, 2, 8, 0), "n_layer 0"},
        {GPT(5, 8, 1, 2, -8, 0), "n_embd -8"},
        {GPT(5, 8, 1, 3, 8, 0), "n_embd 8 is not a multiple of n_head 3"},
        {GPT(5, 8, 1, 0, 8, 0), "n_head 0"},
        {GPT(5, 8, 1, 2, 8, 1.0), "dropout 1"},
        {GPT(5, 8, 1, 2, 8, NAN), "dropout nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FAILS_INT(qkv_gpt_config_check(&cases[i].cfg), "gpt config", cases[i].want);
        FAILS_NULL(qkv_gpt_new(&cases[i].cfg, 1), "gpt config", cases[i].want);
    }
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config cfg = tiny_gpt(5), back;
    qkv_gpt_config_pack(&cfg, blob);
    FAILS_INT(qkv_gpt_config_unpack(&back, blob, 31), "31 bytes, expected at least 32");
    blob[0] = 0xff, blob[3] = 0xff; /* vocab_size beyond 2^30 */
    FAILS_INT(qkv_gpt_config_unpack(&back, blob, sizeof blob), "vocab_size -1");
}
END_TEST

START_TEST(test_gpt_rejects_bad_ids_and_lengths)
{
    qkv_gpt_config mc = tiny_gpt(5);
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_ctx ctx = {.arena = A};
    int32_t idx[9] = {0, 1, 2, 3, 4, 0, 1, 2, 3}, bad[2] = {1, 5};
    FAILS_NULL(qkv_gpt_logits(m, &ctx, bad, 1, 2, NULL), "id 5", "[0, 5)");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, (int32_t[]){-3}, 1, 1, NULL), "id -3", "[0, 5)");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, idx, 1, 9, NULL), "9 positions", "block size 8");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, idx, 0, 2, NULL), "batch 0");
    FAILS_NULL(qkv_gpt_loss(m, &ctx, idx, bad, 1, 2), "target 5", "[0, 5)");
    FAILS_NULL(qkv_gpt_loss(m, &ctx, bad, idx, 1, 2), "id 5", "[0, 5)");
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_sampling_and_generation_errors)
{
    struct {
        qkv_sample_opts o;
        const char *want;
    } cases[] = {
        {{-1, 0, 1}, "temperature -1"},     {{NAN, 0, 1}, "temperature nan"},
        {{INFINITY, 0, 1}, "temperature inf"}, {{1, -2, 1}, "top_k -2"},
        {{1, 0, -0.5}, "top_p -0.5 must be in [0, 1]"}, {{1, 0, 1.5}, "top_p 1.5"},
    };
    qkv_gpt_config mc = tiny_gpt(5);
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    int32_t prompt[2] = {1, 2};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FAILS_INT(qkv_sample_opts_check(&cases[i].o), "sample", cases[i].want);
        FAILS_INT(qkv_gpt_generate(m, prompt, 2, 4, &cases[i].o, &rng, true, NULL, NULL),
                  cases[i].want);
    }
    qkv_sample_opts ok = {.temperature = 1, .top_p = 1};
    FAILS_INT(qkv_gpt_generate(m, prompt, 0, 4, &ok, &rng, true, NULL, NULL),
              "at least one token (got 0)");
    FAILS_INT(qkv_gpt_generate(m, (int32_t[]){1, 9}, 2, 4, &ok, &rng, false, NULL, NULL),
              "prompt token 9 at position 1", "vocabulary of 5");
    FAILS_INT(qkv_gpt_generate(m, prompt, 2, -1, &ok, &rng, true, NULL, NULL), "-1 new tokens");
    ck_assert_int_eq(qkv_gpt_generate(m, prompt, 2, 0, &ok, &rng, true, NULL, NULL), 0);
    qkv_gpt_free(m);
}
END_TEST

/* ======================================================== training */

static qkv_train_config tiny_train(void)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 20;
    tc.batch_size = 2;
    tc.warmup = 2;
    tc.eval_iters = 2;
    return tc;
}

START_TEST(test_training_bad_arguments)
{
    const char *path = qkv_test_temp_file(ERRORS_TEXT, strlen(ERRORS_TEXT), 4);
    char corpus_path[64];
    snprintf(corpus_path, sizeof corpus_path, "%s", path);
    qkv_corpus *c = qkv_corpus_load(corpus_path, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = tiny_gpt(c->tok.size);
    qkv_train_config tc = tiny_train();
    qkv_gpt_config wrong = tiny_gpt(c->tok.size + 1);
    char want[128];
    snprintf(want, sizeof want,
             "corpus has %d distinct characters but the model's vocabulary is %d", c->tok.size,
             c->tok.size + 1);
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), want);
    wrong = mc;
    wrong.n_head = 3;
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), "n_embd 8 is not a multiple of n_head 3");
    wrong = mc;
    wrong.block_size = 1024;
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), "fewer than block size + 1 = 1025");
    qkv_train_config bad = tc;
    bad.iters = -3;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "train config", "iters -3");
    bad = tc;
    bad.batch_size = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "batch_size -1");
    bad = tc;
    bad.lr = NAN;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "lr nan");
    bad = tc;
    bad.warmup = -5;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "warmup -5");
    bad = tc;
    bad.grad_clip = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "grad_clip -1");
    bad = tc;
    bad.eval_iters = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "eval_iters -1");
    bad = tc;
    bad.wsd_decay = 1.5;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "wsd_decay 1.5 is not in [0, 1]");
    bad.wsd_decay = NAN;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "wsd_decay nan");

    /* Evaluating over no batches is an error, not a silent NaN. */
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, 2, mc.block_size, 1), 0);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    int32_t x[2 * 8], y[2 * 8]; /* 2 windows of tiny_gpt's block of 8 */
    qkv_clear_error();
    ck_assert(isnan(qkv_gpt_mean_loss(m, &s, 0, arena, x, y)));
    ck_assert_error("iters 0");
    qkv_arena_free(&arena);
    qkv_gpt_free(m);

    qkv_corpus_free(c);
    unlink(corpus_path);
}
END_TEST

/* A run on a temporary copy of ERRORS_TEXT, its corpus path in path (unlink it). */
static test_run *tiny_run(char path[64])
{
    snprintf(path, 64, "%s", qkv_test_temp_file(ERRORS_TEXT, strlen(ERRORS_TEXT), 4));
    qkv_corpus *c = qkv_corpus_load(path, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = tiny_gpt(c->tok.size);
    qkv_train_config tc = tiny_train();
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    t->text = c; /* freed with the run */
    return t;
}

/* Every byte of the run's state that a step changes. */
typedef struct snapshot {
    unsigned char *data, *m, *v;
    int64_t step, opt_step;
} snapshot;

static snapshot take_snapshot(const test_run *t)
{
    size_t n = t->model->params->total * sizeof(qkv_real);
    snapshot s = {malloc(n), malloc(n), malloc(n), t->run->step, t->run->opt->step};
    memcpy(s.data, t->model->params->data, n);
    memcpy(s.m, t->run->opt->m, n);
    memcpy(s.v, t->run->opt->v, n);
    return s;
}

static void assert_unchanged(const test_run *t, snapshot *s)
{
    size_t n = t->model->params->total * sizeof(qkv_real);
    ck_assert_msg(memcmp(s->data, t->model->params->data, n) == 0, "the parameters changed");
    ck_assert_msg(memcmp(s->m, t->run->opt->m, n) == 0, "AdamW's first moments changed");
    ck_assert_msg(memcmp(s->v, t->run->opt->v, n) == 0, "AdamW's second moments changed");
    ck_assert_int_eq(t->run->step, s->step);
    ck_assert_int_eq(t->run->opt->step, s->opt_step);
    free(s->data);
    free(s->m);
    free(s->v);
}

/* A NaN (or infinite) loss stops the step before the optimizer: the error
 * names the step, and the parameters and moments are exactly as before. */
START_TEST(test_nonfinite_loss_stops_the_step_and_keeps_the_parameters)
{
    char corpus[64];
    test_run *t = tiny_run(corpus);
    double loss = 0;
    ck_assert_int_eq(qkv_training_step(t->run, &loss, NULL), 0);
    ck_assert_int_eq(qkv_training_step(t->run, &loss, NULL), 0);
    qkv_param *ln = qkv_params_find(t->model->params, "ln_f.weight");
    ck_assert_ptr_nonnull(ln);
    const qkv_real poison[2] = {(qkv_real)NAN, (qkv_real)INFINITY};
    for (int k = 0; k < 2; k++) {
        ln->t->data[0] = poison[k]; /* every position's logits go through it */
        snapshot s = take_snapshot(t);
        double before = loss;
        FAILS_INT(qkv_training_step(t->run, &loss, NULL), "step 2: the loss is ",
                  "stopping before it reaches the weights");
        ck_assert(loss == before); /* not written on failure */
        assert_unchanged(t, &s);
    }
    /* Evaluating such a model says why its loss is NaN. */
    ln->t->data[0] = (qkv_real)NAN;
    qkv_clear_error();
    ck_assert(isnan(qkv_training_eval(t->run, QKV_SPLIT_VAL)));
    ck_assert_error("qkv_gpt_mean_loss: batch 0 has a NaN loss");
    test_run_free(t);
    unlink(corpus);
}
END_TEST

/* A diverged run is never saved over the last good checkpoint. */
START_TEST(test_nonfinite_parameters_are_not_saved)
{
    char corpus[64], ckpt[80];
    test_run *t = tiny_run(corpus);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", corpus);
    ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    ck_assert_msg(qkv_training_save(t->run, ckpt) == 0, "%s", qkv_last_error());
    ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    qkv_param *w = qkv_params_find(t->model->params, "h.0.mlp.c_fc.weight");
    w->t->data[5] = (qkv_real)-INFINITY;
    FAILS_INT(qkv_training_save(t->run, ckpt), "parameter 'h.0.mlp.c_fc.weight' holds -inf", ckpt,
              "left as it was");
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt, "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 1); /* still the first save */
    qkv_checkpoint_close(ck);
    test_run_free(t);
    unlink(ckpt);
    unlink(corpus);
}
END_TEST

/* Save the weights of a new model of config real under a model kind, a
 * claimed config and a vocabulary of the caller's choice. */
static void save_model(const char *path, const char *kind, const qkv_gpt_config *real,
                       const qkv_gpt_config *claimed, const char *vocab_text)
{
    qkv_gpt *m = qkv_gpt_new(real, 2);
    ck_assert_qkv(m);
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(claimed, blob);
    qkv_tokenizer vocab;
    qkv_tokenizer_build(&vocab, vocab_text, strlen(vocab_text));
    qkv_ckpt_model model = {.kind = kind, .config = blob, .config_len = sizeof blob,
                            .vocab = &vocab};
    ck_assert_msg(qkv_checkpoint_save(path, &model, m->params, NULL, NULL) == 0, "%s",
                  qkv_last_error());
    qkv_gpt_free(m);
}

START_TEST(test_loading_a_checkpoint_of_another_model)
{
    char corpus[64], path[80];
    snprintf(corpus, sizeof corpus, "%s", qkv_test_temp_file("abcde", 5, 20));
    snprintf(path, sizeof path, "%s.ckpt", corpus);
    qkv_tokenizer vocab;
    qkv_gpt_config mc = tiny_gpt(5);

    save_model(path, "seq2seq", &mc, &mc, "abcde");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "holds a 'seq2seq' model, not the expected 'gpt'");
    FAILS_NULL(gpt_run_resume(path, corpus, 0), "holds a 'seq2seq' model");

    /* A GPT saved without its run loads for sampling, but cannot resume training. */
    save_model(path, "gpt", &mc, &mc, "abcde");
    qkv_gpt *m = qkv_gpt_load(path, &vocab);
    ck_assert_qkv(m);
    ck_assert_int_eq(vocab.size, 5);
    qkv_gpt_free(m);
    FAILS_NULL(gpt_run_resume(path, corpus, 0), "config of 32 bytes, expected 96");
    /* The whole message: the resume names itself, then where it failed. */
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: qkv_training_config_load: gpt "
                     "checkpoint: config of 32 bytes, expected 96 (a model saved without its run "
                     "cannot resume)");
    FAILS_NULL(gpt_run_resume(path, corpus, -5), "iters -5");
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: iters -5 is negative (0 keeps the "
                     "saved run length)");

    save_model(path, "gpt", &mc, &mc, "abcdef");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "vocabulary holds 6 characters but the model expects 5");

    /* Its config says two layers, its weights are for one. */
    qkv_gpt_config two = mc;
    two.n_layer = 2;
    save_model(path, "gpt", &mc, &two, "abcde");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "config describes a model of 1864 parameter values but "
               "it holds 992");
    unlink(path);
    unlink(corpus);
}
END_TEST

/* The largest block asked of the allocation hook; blocks over 64 MB are refused. */
static size_t biggest_alloc;
static void *capped_malloc(size_t size)
{
    if (size > biggest_alloc)
        biggest_alloc = size;
    return size > ((size_t)64 << 20) ? NULL : malloc(size);
}

/* A file (with a valid checksum) whose config describes a 16 GB model but
 * which holds a tiny one is rejected before anything big is allocated. */
START_TEST(test_config_of_a_huge_model_is_rejected_before_allocating)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qkv_err_huge_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    qkv_gpt_config small = tiny_gpt(5), huge = small;
    huge.n_embd = 4096;
    huge.n_head = 1;
    huge.n_layer = 20;
    save_model(path, "gpt", &small, &huge, "abcde");
    qkv_tokenizer vocab;
    qkv_set_allocator(capped_malloc, free);
    FAILS_NULL(qkv_gpt_load(path, &vocab), "describes a model of 4027658240 parameter values but "
               "it holds 992");
    qkv_set_allocator(NULL, NULL);
    ck_assert_msg(biggest_alloc < ((size_t)1 << 20), "asked for %zu bytes", biggest_alloc);
    unlink(path);
}
END_TEST

START_TEST(test_resume_errors)
{
    char corpus[64], ckpt[80], other[64];
    test_run *t = tiny_run(corpus);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", corpus);
    ck_assert_int_eq(qkv_training_save(t->run, ckpt), 0);
    test_run_free(t);
    FAILS_NULL(gpt_run_resume("/nonexistent/run.ckpt", corpus, 0), "cannot open",
               "'/nonexistent/run.ckpt'");
    FAILS_NULL(gpt_run_resume(ckpt, "/nonexistent/text.txt", 0),
               "cannot open '/nonexistent/text.txt'");
    const char *zz = "the quick brown fox: ZZZ\n";
    snprintf(other, sizeof other, "%s", qkv_test_temp_file(zz, strlen(zz), 10));
    FAILS_NULL(gpt_run_resume(ckpt, other, 0), "encode: character ':' at position 19",
               "not in the vocabulary");
    unlink(other);
    /* A text with the same characters resumes. */
    t = gpt_run_resume(ckpt, corpus, 0);
    ck_assert_qkv(t);
    test_run_free(t);
    unlink(ckpt);
    unlink(corpus);
}
END_TEST

/* ======================================================== dates, pictures */

START_TEST(test_dates_errors)
{
    char in[QKV_DATES_INPUT_MAX + 1], out[QKV_DATES_OUTPUT_LEN + 1];
    FAILS_INT(qkv_dates_format(in, sizeof in, QKV_DATES_N_FORMATS, QKV_DATES_LOWER, 1998, 3, 3),
              "format 13 is not in 0..12");
    FAILS_INT(qkv_dates_format(in, sizeof in, -1, QKV_DATES_LOWER, 1998, 3, 3), "format -1");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, (qkv_dates_case)7, 1998, 3, 3), "unknown case 7");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 1949, 12, 31),
              "1949-12-31 is not a date between");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 2001, 2, 29), "2001-2-29");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 2001, 13, 1), "2001-13-1");
    FAILS_INT(qkv_dates_format(in, 4, 0, QKV_DATES_UPPER, 2001, 1, 1), "4-byte buffer");
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    FAILS_INT(qkv_dates_sample(&rng, in, 5, out, sizeof out), "buffers of 5 and 11 bytes");
    FAILS_INT(qkv_dates_sample_split(&rng, true, in, sizeof in, out, 10), "10 bytes");
    ck_assert_ptr_null(qkv_dates_format_name(QKV_DATES_N_FORMATS));
    ck_assert_ptr_null(qkv_dates_format_name(-1));
}
END_TEST

START_TEST(test_svg_errors)
{
    qkv_real w[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    svg_heatmap_spec spec = {.panels = 1, .rows = 2, .cols = 3, .values = w};
    const char *path = "/tmp/qkv_err_never_written.svg";
    FAILS_INT(svg_heatmap("/nonexistent/dir/a.svg", &spec), "cannot write",
              "/nonexistent/dir/a.svg", "No such file or directory");
    FAILS_INT(svg_heatmap(path, NULL), "svg_heatmap", "spec is NULL");
    FAILS_INT(svg_heatmap(NULL, &spec), "svg_heatmap", "path is NULL");
    spec.rows = 0;
    FAILS_INT(svg_heatmap(path, &spec), "1 panels of 0x3");
    spec.rows = 2;
    spec.row_labels = "abc";
    FAILS_INT(svg_heatmap(path, &spec), "3 characters for 2");
    spec.row_labels = NULL;
    spec.values = NULL;
    FAILS_INT(svg_heatmap(path, &spec), path);
    double xs[2] = {0, 1}, ys[2] = {1, 2};
    svg_series s = {"train", 2, xs, ys};
    FAILS_INT(svg_lines(NULL, "t", "x", "y", 1, &s), "svg_lines", "path is NULL");
    FAILS_INT(svg_lines(path, "t", "x", "y", -1, &s), "-1 series");
    s.n = -3;
    FAILS_INT(svg_lines(path, "t", "x", "y", 1, &s), "series 0 has -3 points");
    s = (svg_series){"train", 2, NULL, ys};
    FAILS_INT(svg_lines(path, "t", "x", "y", 1, &s), "series 0");
    FAILS_INT(
        svg_lines("/nonexistent/dir/l.svg", "t", "x", "y", 1, &(svg_series){"train", 2, xs, ys}),
        "cannot write", "/nonexistent/dir/l.svg");
    ck_assert_int_eq(access(path, F_OK), -1); /* nothing was written for bad arguments */
}
END_TEST

/* ======================================================== the build */

/* The library must not be able to end its host process: it references none
 * of the functions that would (nor assert(), whose failure calls abort()),
 * and does not print to the terminal. `nm -u` lists what libqkv.a needs. */
START_TEST(test_library_references_no_exit_or_abort)
{
    static const char *forbidden[] = {
        "exit",   "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__assert_perror_fail",
        "__assert", "err", "errx", "verr", "verrx", "error", "error_at_line", "perror",
        "printf", "vprintf", "puts", "putchar", "stdout", "stderr",
    };
    const char *build = getenv("QKV_TEST_BUILD");
    char lib[512], cmd[600];
    snprintf(lib, sizeof lib, "%s/libqkv.a", build ? build : "build");
    ck_assert_msg(access(lib, R_OK) == 0, "%s not found (set QKV_TEST_BUILD)", lib);
    snprintf(cmd, sizeof cmd, "nm -u '%s'", lib);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char line[512], bad[2048] = "";
    int symbols = 0;
    while (fgets(line, sizeof line, f)) {
        char type[8], name[256];
        if (sscanf(line, " %7s %255s", type, name) != 2 || strcmp(type, "U") != 0)
            continue;
        symbols++;
        for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
            if (strcmp(name, forbidden[i]) == 0 && !strstr(bad, name)) {
                strncat(bad, " ", sizeof bad - strlen(bad) - 1);
                strncat(bad, name, sizeof bad - strlen(bad) - 1);
            }
    }
    ck_assert_int_eq(pclose(f), 0);
    ck_assert_msg(symbols > 20, "nm listed only %d undefined symbols: did it run?", symbols);
    ck_assert_msg(bad[0] == 0, "libqkv.a references:%s", bad);
}
END_TEST

static Suite *errors_runs_suite(void)
{
    Suite *s = suite_create("errors_runs");
    TCase *tc = errors_tcase("library");
    tcase_add_test(tc, test_gpt_config_errors_name_the_field);
    tcase_add_test(tc, test_gpt_rejects_bad_ids_and_lengths);
    tcase_add_test(tc, test_sampling_and_generation_errors);
    tcase_add_test(tc, test_training_bad_arguments);
    tcase_add_test(tc, test_nonfinite_loss_stops_the_step_and_keeps_the_parameters);
    tcase_add_test(tc, test_nonfinite_parameters_are_not_saved);
    tcase_add_test(tc, test_loading_a_checkpoint_of_another_model);
    tcase_add_test(tc, test_config_of_a_huge_model_is_rejected_before_allocating);
    tcase_add_test(tc, test_resume_errors);
    tcase_add_test(tc, test_dates_errors);
    tcase_add_test(tc, test_svg_errors);
    tcase_add_test(tc, test_library_references_no_exit_or_abort);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(errors_runs_suite)
