/* An evaluation's memory and its marks: `qkv eval` evaluates any --batch in
 * chunks of bounded memory (the same windows, the same loss), and a training
 * run's evaluation cut short by a signal is marked as partial in CKPT.csv
 * (its val_share below 1). Every case runs $QKV_TEST_BUILD/qkv. */
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128]; /* a short English text, repeated: the corpus */

/* A small, fast model on one thread. */
#define TINY "--layers", "1", "--heads", "1", "--embd", "16", "--block", "16", "--batch", "4", \
             "--threads", "1"

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_eval_bounded");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* The run ended with status 0; else fail showing its stderr. */
static void expect_ok(const qkv_cli_result *r)
{
    ck_assert_msg(r->status == 0, "exit status %d; stderr:\n%s", r->status, r->err);
}

/* The losses `qkv eval` printed, into train and val. */
static void eval_losses(const qkv_cli_result *r, double *train, double *val)
{
    const char *at = strstr(r->out, "train loss ");
    ck_assert_msg(at && sscanf(at, "train loss %lf, val loss %lf", train, val) == 2, "stdout:\n%s",
                  r->out);
}

/* A --batch whose activations alone would take gigabytes is evaluated in a
 * few hundred megabytes: under a 700 MB address-space limit it ends with the
 * loss, where one forward of the whole batch ran out of memory. */
START_TEST(test_eval_memory_is_bounded_whatever_the_batch)
{
#if defined(__SANITIZE_ADDRESS__)
    printf("%s: SKIPPED: AddressSanitizer reserves more address space than the limit\n", __func__);
#else
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--iters", "3",
                                   "--eval-iters", "1", "--out", "m.ckpt");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    struct rlimit was;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &was), 0);
    struct rlimit cap = {700u << 20, was.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &cap), 0); /* the child inherits it */
    r = QKV_CLI_RUN(&cli, NULL, "eval", "--ckpt", "m.ckpt", "--data", text_path, "--batch",
                    "100000", "--eval-iters", "1", "--threads", "1");
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &was), 0);
    expect_ok(&r);
    double train, val;
    eval_losses(&r, &train, &val);
    ck_assert(isfinite(train) && isfinite(val));
    qkv_cli_result_free(&r);
#endif
}
END_TEST

/* Chunks change nothing: at block 256 the batch of 500 is evaluated as
 * chunks of fewer rows, and the loss is the one the library's
 * qkv_gpt_mean_loss gives on the whole batch at once (the windows are drawn
 * in order, whatever the chunk; each chunk's mean weighs by its rows). */
START_TEST(test_eval_in_chunks_is_the_whole_batch_loss)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--layers", "1",
                                   "--heads", "1", "--embd", "16", "--block", "256", "--batch",
                                   "2", "--threads", "1", "--iters", "3", "--eval-iters", "1",
                                   "--out", "long.ckpt");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "eval", "--ckpt", "long.ckpt", "--data", text_path, "--batch",
                    "500", "--eval-iters", "1", "--threads", "1");
    expect_ok(&r);
    double got[2];
    eval_losses(&r, &got[0], &got[1]);
    qkv_cli_result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(qkv_cli_path(&cli, "long.ckpt"), &vocab);
    qkv_corpus *c = m ? qkv_corpus_load(text_path, &vocab) : NULL;
    ck_assert_msg(c, "%s", qkv_last_error());
    size_t n = (size_t)500 * 256;
    int32_t *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    qkv_arena *a = qkv_arena_new(1 << 20);
    for (int split = 0; split < 2; split++) {
        qkv_batcher s;
        ck_assert_int_eq(qkv_batcher_init(&s, c, (qkv_split)split, 500, 256, 1337 + split), 0);
        double want = qkv_gpt_mean_loss(m, &s, 1, a, x, y);
        ck_assert_msg(fabs(got[split] - want) <= 6e-5, "split %d: qkv eval says %.4f, the "
                      "whole batch's loss is %.6f", split, got[split], want);
    }
    qkv_arena_free(&a);
    free(x);
    free(y);
    qkv_corpus_free(c);
    qkv_gpt_free(m);
}
END_TEST

/* The CSV row of step `step` in work/name: its val_loss and val_share
 * fields (NAN when empty); whether the row has four fields. */
static bool csv_row(const char *name, long step, double *val, double *share)
{
    char *csv = qkv_test_read_file(qkv_cli_path(&cli, name), NULL);
    char head[32];
    snprintf(head, sizeof head, "\n%ld,", step);
    const char *row = strstr(csv, head);
    ck_assert_msg(row, "no row for step %ld in %s:\n%s", step, name, csv);
    row += strlen(head);
    const char *v = strchr(row, ','), *s = v ? strchr(v + 1, ',') : NULL;
    const char *eol = strchr(row, '\n');
    bool four = v && s && (!eol || s < eol);
    *val = v && v[1] != ',' && v[1] != '\n' ? strtod(v + 1, NULL) : NAN;
    *share = four && s[1] != '\n' ? strtod(s + 1, NULL) : NAN;
    free(csv);
    return four;
}

/* An evaluation of 100000 batches is cut short by Ctrl-C: the run saves, and
 * its row in the log says which share of a whole evaluation its val loss is. */
START_TEST(test_a_cut_short_evaluation_is_marked_in_the_log)
{
    pid_t pid = qkv_cli_start(&cli, NULL,
                              (const char *const[]){"train", "--data", text_path, TINY, "--iters",
                                                    "100", "--eval-every", "3", "--log-every", "1",
                                                    "--eval-iters", "100000", "--out", "cut.ckpt",
                                                    NULL});
    /* The progress line of step 3 is out before its evaluation starts. */
    ck_assert(qkv_cli_wait_for(&cli, "step      3/", 60));
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    qkv_cli_result r = qkv_cli_wait(&cli, pid);
    ck_assert_msg(r.status == 130, "status %d; stderr:\n%s", r.status, r.err);
    qkv_cli_result_free(&r);
    double val, share;
    ck_assert_msg(csv_row("cut.ckpt.csv", 3, &val, &share), "no val_share field at step 3");
    ck_assert_msg(isfinite(val) && share > 0 && share < 1, "step 3: val %g, share %g", val, share);
    /* Steps without an evaluation leave both empty. */
    ck_assert(csv_row("cut.ckpt.csv", 2, &val, &share) && isnan(val) && isnan(share));
}
END_TEST

static Suite *eval_bounded_suite(void)
{
    Suite *s = suite_create("eval_bounded");
    TCase *tc = tcase_create("eval_bounded");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_eval_memory_is_bounded_whatever_the_batch);
    tcase_add_test(tc, test_eval_in_chunks_is_the_whole_batch_loss);
    tcase_add_test(tc, test_a_cut_short_evaluation_is_marked_in_the_log);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(eval_bounded_suite)
