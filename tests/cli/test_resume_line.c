/* The `resume with:` line a stopped run prints is the run: pasted as it is,
 * it ends in the very checkpoint, byte for byte, of the run that never
 * stopped, whatever --eval-every and --log-every that run was given (its
 * checkpoint holds them, and --resume takes them back); a flag given again
 * with another value wins, and the resume says so. Every case runs
 * $QKV_TEST_BUILD/qkv. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128]; /* a short English text, repeated: the corpus */

/* A small, fast run on one thread, with an evaluation and a logging
 * interval of its own (neither the default). */
#define RUN "train", "--data", text_path, "--layers", "1", "--heads", "1", "--embd", "16", \
            "--block", "16", "--batch", "4", "--threads", "1", "--eval-iters", "1",         \
            "--iters", "1500", "--eval-every", "7", "--log-every", "3"

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_resume_line");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* The arguments of the `resume with: qkv ...` line in out, after "qkv",
 * split at spaces into args (NULL-terminated; words point into line). */
static void resume_args(const char *out, char *line, size_t cap, const char **args, int max)
{
    const char *at = strstr(out, "resume with: qkv ");
    ck_assert_msg(at, "no resume line at the end of:\n%s",
                  out + (strlen(out) > 1000 ? strlen(out) - 1000 : 0));
    at += strlen("resume with: qkv ");
    size_t n = strcspn(at, "\n");
    ck_assert_uint_lt(n, cap);
    memcpy(line, at, n);
    line[n] = 0;
    int k = 0;
    for (char *w = strtok(line, " "); w && k < max - 1; w = strtok(NULL, " "))
        args[k++] = w;
    args[k] = NULL;
}

/* work/a and work/b hold the same bytes. */
static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = qkv_test_read_file(qkv_cli_path(&cli, a), &na);
    char *y = qkv_test_read_file(qkv_cli_path(&cli, b), &nb);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* Stop `RUN --out name` with Ctrl-C after step 30; what it printed. */
static qkv_cli_result interrupted(const char *name)
{
    /* The last run's stdout must not be read as this one's (it may be there still). */
    char out[160];
    snprintf(out, sizeof out, "%s/out", cli.root);
    unlink(out);
    pid_t pid = qkv_cli_start(&cli, NULL, (const char *const[]){RUN, "--out", name, NULL});
    ck_assert(qkv_cli_wait_for(&cli, "step     30/", 60));
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    qkv_cli_result r = qkv_cli_wait(&cli, pid);
    ck_assert_msg(r.status == 130, "status %d (did it finish first?); stderr:\n%s", r.status,
                  r.err);
    return r;
}

START_TEST(test_the_pasted_resume_line_is_the_run)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, RUN, "--out", "full.ckpt");
    ck_assert_msg(r.status == 0, "stderr:\n%s", r.err);
    qkv_cli_result_free(&r);
    r = interrupted("run.ckpt");
    char line[1024];
    const char *args[32];
    resume_args(r.out, line, sizeof line, args, 32);
    qkv_cli_result_free(&r);
    r = qkv_cli_run(&cli, NULL, args);
    ck_assert_msg(r.status == 0, "stderr:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    qkv_cli_result_free(&r);
    assert_same_file("full.ckpt", "run.ckpt");
}
END_TEST

/* A flag given again with another value is the user's choice: it holds,
 * and the resume says which saved value it replaces. */
START_TEST(test_a_flag_given_on_resume_overrides_and_says_so)
{
    qkv_cli_result r = interrupted("other.ckpt");
    long step = -1;
    const char *at = strstr(r.out, "interrupted at step ");
    ck_assert(at && sscanf(at, "interrupted at step %ld", &step) == 1);
    qkv_cli_result_free(&r);
    char iters[32];
    snprintf(iters, sizeof iters, "%ld", step + 120);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--resume", "other.ckpt", "--data", text_path,
                    "--eval-every", "50", "--iters", iters);
    ck_assert_msg(r.status == 0, "stderr:\n%s", r.err);
    ck_assert_msg(strstr(r.out, "--eval-every 50 replaces the 7 that other.ckpt was saved with"),
                  "stdout:\n%s", r.out);
    /* It evaluates at the next multiple of 50, not at the next of 7. */
    long fifty = (step / 50 + 1) * 50, seven = (step / 7 + 1) * 7;
    if (seven % 50 == 0)
        seven += 7;
    char want[64], unwanted[64];
    snprintf(want, sizeof want, "eval at step %ld:", fifty);
    snprintf(unwanted, sizeof unwanted, "eval at step %ld:", seven);
    ck_assert_msg(strstr(r.out, want) && !strstr(r.out, unwanted), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *resume_line_suite(void)
{
    Suite *s = suite_create("resume_line");
    TCase *tc = tcase_create("resume_line");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_the_pasted_resume_line_is_the_run);
    tcase_add_test(tc, test_a_flag_given_on_resume_overrides_and_says_so);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(resume_line_suite)
