/* A training run stopped from outside keeps its work: a closed pipe on its
 * stdout (`| head -3`, a `| tee` gone before Ctrl-C) and a hang-up save like
 * Ctrl-C, with a documented status and no stale lock; a signal ends an
 * evaluation within a batch, however many it was to average; and a --time
 * budget holds when the machine slows down halfway. Every case runs
 * $QKV_TEST_BUILD/qkv in a temporary directory (a child of child.h). */
#define _GNU_SOURCE /* usleep */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "testing.h"

static char qkv_bin[4096]; /* absolute path of the program */
static char dir[128];      /* the runs' working directory, with the corpus */
static char err_path[256]; /* the last run's stderr */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void setup(void)
{
    qkv_test_program(qkv_bin, sizeof qkv_bin);
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_signals");
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    char path[256];
    snprintf(path, sizeof path, "%s/text.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 400; i++)
        fprintf(f, "line %d: the quick brown fox jumps over the lazy dog; attention is all you "
                   "need.\n", i % 37);
    ck_assert_int_eq(fclose(f), 0);
}

static void teardown(void) { qkv_test_remove_tmpdir(dir); }

/* Start qkv with args (NULL-terminated) in dir, its stdout a one-page pipe
 * this process reads, stderr to err_path, signals at their defaults. With
 * keep_writer the write end of the pipe stays open here too (r.writer). */
static qkv_child start(const char *const *args, bool keep_writer)
{
    return qkv_child_exec(qkv_bin, args,
                          &(qkv_child_opts){.dir = dir, .err_path = err_path, .pipe_out = true,
                                            .keep_writer = keep_writer, .default_signals = true});
}

/* The number after the last "step " r printed at the start of a line. */
static long last_step(const qkv_child *r)
{
    long step = -1;
    for (const char *p = r->out; (p = strstr(p, "\nstep ")); p++)
        sscanf(p, "\nstep %ld", &step);
    return step;
}

static const char *run_err(void);

/* The run ended with exit status want. */
static void expect_status(int status, int want)
{
    ck_assert_msg(status == want, "the run %s, not with status %d; stderr:\n%s",
                  qkv_child_describe(status), want, run_err());
}

/* The last run's stderr (static buffer). */
static const char *run_err(void)
{
    static char buf[1 << 16];
    FILE *f = fopen(err_path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* The file dir/name exists. */
static bool exists(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The step saved in the GPT checkpoint dir/name (which must load). */
static long saved_step(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    long step = (long)ck->step;
    qkv_checkpoint_close(ck);
    return step;
}

/* Wait until the last run's stderr holds want (up to 20 s). */
static void await_err(const char *want)
{
    for (int i = 0; i < 2000 && !strstr(run_err(), want); i++)
        usleep(10000);
    ck_assert_msg(strstr(run_err(), want), "stderr lacks '%s' after 20 s:\n%s", want, run_err());
}

/* The run stopped by a signal or a lost output saved out at its last step,
 * said so, and left no lock. */
static void assert_saved(const char *out, long at_least)
{
    char lock[128], said[160];
    snprintf(lock, sizeof lock, "%s.lock", out);
    ck_assert_msg(!exists(lock), "%s is left behind", lock);
    long step = saved_step(out);
    ck_assert_int_ge(step, at_least);
    snprintf(said, sizeof said, "interrupted at step %ld: saved %s\n", step, out);
    ck_assert_msg(strstr(run_err(), said), "stderr lacks '%s':\n%s", said, run_err());
}

/* A small model on one thread, one progress line per step, a run that only a
 * signal ends, and no periodic evaluation unless a test asks. */
#define TINY "--data", "text.txt", "--layers", "1", "--heads", "2", "--embd", "16", "--block", \
             "16", "--batch", "4", "--threads", "1", "--log-every", "1"
#define ENDLESS TINY, "--iters", "1000000", "--eval-iters", "2"

/* `qkv train ... | head -3`: head reads three lines and goes. The run sees
 * its next write fail, saves, says so on stderr and exits 141 (not killed by
 * SIGPIPE with no checkpoint and a stale lock). */
START_TEST(test_a_closed_pipe_saves_and_exits_141)
{
    qkv_child r = start((const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "p.ckpt", NULL}, false);
    ck_assert_msg(qkv_child_read_until(&r, "\ntraining: ", 60), "no plan line:\n%s", r.out);
    qkv_child_close_reader(&r);
    int status = qkv_child_wait(&r, 60);
    expect_status(status, 141);
    ck_assert_ptr_nonnull(strstr(run_err(), "qkv: standard output is gone (Broken pipe)"));
    assert_saved("p.ckpt", 1);
    qkv_child_free(&r);
}
END_TEST

/* Ctrl-C in a terminal reaches `qkv train ... | tee log` and tee both: tee
 * goes at once, the run finishes its step and must still save. The test
 * fills the pipe so the run is blocked writing, sends SIGINT, then closes
 * the reader: the run's pending write fails, and it saves the current step
 * and exits 130 (it used to die of SIGPIPE, the checkpoint steps behind). */
START_TEST(test_ctrl_c_with_the_reader_gone_saves_the_current_step)
{
    qkv_child r = start((const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "t.ckpt", NULL}, true);
    ck_assert_msg(qkv_child_read_until(&r, "\nstep ", 60), "no step line:\n%s", r.out);
    long seen = last_step(&r);
    qkv_test_fill_pipe(r.writer);
    r.writer = -1;
    ck_assert_int_eq(kill(r.pid, SIGINT), 0);
    await_err("qkv: stopping");
    qkv_child_close_reader(&r);
    int status = qkv_child_wait(&r, 60);
    expect_status(status, 130);
    assert_saved("t.ckpt", seen);
    qkv_child_free(&r);
}
END_TEST

/* A closed terminal or ssh session (SIGHUP) stops the run as SIGTERM does:
 * it saves, says where to resume, and exits 129. */
START_TEST(test_a_hang_up_saves_like_sigterm)
{
    qkv_child r = start((const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "h.ckpt", NULL}, false);
    ck_assert_msg(qkv_child_read_until(&r, "\nstep ", 60), "no step line:\n%s", r.out);
    long seen = last_step(&r);
    ck_assert_int_eq(kill(r.pid, SIGHUP), 0);
    int status = qkv_child_wait(&r, 60);
    expect_status(status, 129);
    ck_assert_ptr_nonnull(strstr(run_err(), "qkv: stopping"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step "));
    char lock[] = "h.ckpt.lock";
    ck_assert(!exists(lock));
    ck_assert_int_ge(saved_step("h.ckpt"), seen);
    qkv_child_free(&r);
}
END_TEST

/* A signal ends an evaluation between two batches: --eval-iters 1000000 at
 * step 5 (its progress line is out before the evaluation starts), then
 * SIGINT: the run saves at step 5 and ends within seconds, not hours. */
START_TEST(test_ctrl_c_ends_a_huge_evaluation_within_a_batch)
{
    qkv_child r = start((const char *const[]){"train", TINY, "--iters", "1000000", "--eval-every", "5",
                                    "--eval-iters", "1000000", "--out", "e.ckpt", NULL}, false);
    bool seen = qkv_child_read_until(&r, "\nstep      5/", 30); /* the signal goes anyway */
    ck_assert_int_eq(kill(r.pid, SIGINT), 0);
    int status = qkv_child_wait(&r, 30);
    expect_status(status, 130);
    ck_assert_msg(seen, "no line for step 5 before its evaluation:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "eval at step 5: "));
    ck_assert_ptr_nonnull(strstr(r.out, " of 1000000+1000000 batches"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step 5: saved e.ckpt\n"));
    ck_assert_int_eq(saved_step("e.ckpt"), 5);
    ck_assert(!exists("e.ckpt.lock"));
    qkv_child_free(&r);
}
END_TEST

/* A GPT run of block T on dir's text, with the test's settings (its corpus is *corpus). */
static test_run *tiny_run(int T, int batch, int iters, int eval_iters, qkv_corpus **corpus)
{
    char path[256];
    snprintf(path, sizeof path, "%s/text.txt", dir);
    ck_assert_qkv(*corpus = qkv_corpus_load(path, NULL));
    qkv_gpt_config mc = {.vocab_size = (*corpus)->tok.size, .block_size = T, .n_layer = 1,
                         .n_head = 2, .n_embd = 16};
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = iters;
    tc.batch_size = batch;
    tc.eval_iters = eval_iters;
    test_run *t = gpt_run_new(&mc, &tc, *corpus);
    ck_assert_qkv(t);
    return t;
}

/* A checkpoint whose run averages 1000000 batches per evaluation, resumed:
 * SIGTERM during its first evaluation ends it within a batch too. */
START_TEST(test_sigterm_ends_a_resumed_runs_huge_evaluation)
{
    qkv_corpus *corpus;
    test_run *t = tiny_run(16, 4, 1000000, 1000000, &corpus);
    ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/big.ckpt", dir);
    ck_assert_int_eq(qkv_training_save(t->run, path), 0);
    test_run_free(t);
    qkv_corpus_free(corpus);

    qkv_child r = start((const char *const[]){"train", "--resume", "big.ckpt", "--data", "text.txt",
                                    "--threads", "1", "--log-every", "1", "--eval-every", "3",
                                    NULL}, false);
    bool seen = qkv_child_read_until(&r, "\nstep      3/", 30); /* the signal goes anyway */
    ck_assert_int_eq(kill(r.pid, SIGTERM), 0);
    int status = qkv_child_wait(&r, 30);
    expect_status(status, 143);
    ck_assert_msg(seen, "no line for step 3 before its evaluation:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step 3: saved big.ckpt\n"));
    ck_assert_int_eq(saved_step("big.ckpt"), 3);
    ck_assert(!exists("big.ckpt.lock"));
    qkv_child_free(&r);
}
END_TEST

/* A child that keeps a core busy until it is killed. */
static int spin(void *unused)
{
    (void)unused;
    for (volatile unsigned long x = 1; x; x++) /* 2^64 turns: until the kill */
        ;
    return 0;
}

/* --time 20 with every core made busy from 10 s on (the run's threads then
 * share them): the run still ends within max(2%, 3 s) of its budget, its
 * final evaluation the exact one over the whole validation split (its cost
 * set aside before the first step), the training loss's share sized to what
 * is left (2000 batches would take longer than the budget). */
START_TEST(test_a_time_budget_holds_when_the_machine_slows_down)
{
    const double budget = 20, half = 10, slack = 3;
    double t0 = now_s();
    qkv_child r = start((const char *const[]){"train", "--data", "text.txt", "--layers", "2", "--heads",
                                    "4", "--embd", "64", "--block", "64", "--batch", "8",
                                    "--threads", "2", "--time", "20", "--eval-every", "1000000",
                                    "--eval-iters", "2000", "--log-every", "100", "--out",
                                    "b.ckpt", NULL}, false);
    /* Read (the run must not block on its output) until halfway, then load every core. */
    qkv_child_read_until(&r, "\x01never printed", half - (now_s() - t0));
    long n_busy = sysconf(_SC_NPROCESSORS_ONLN);
    qkv_child busy[256];
    n_busy = n_busy < 1 ? 1 : n_busy > 256 ? 256 : n_busy;
    for (long i = 0; i < n_busy; i++) /* the alarm ends them should this test die */
        busy[i] = qkv_child_call(spin, NULL, &(qkv_child_opts){.alarm_s = 60});
    int status = qkv_child_wait(&r, 40);
    double took = now_s() - t0;
    for (long i = 0; i < n_busy; i++) {
        kill(busy[i].pid, SIGKILL);
        qkv_child_wait(&busy[i], -1);
    }
    expect_status(status, 0);
    double tol = fmax(0.02 * budget, slack);
    printf("time budget: --time %g with %ld busy loops from %g s on took %.1f s\n", budget,
           n_busy, half, took);
    ck_assert_msg(fabs(took - budget) <= tol, "a %g s budget took %.1f s (more than %g s off):\n%s",
                  budget, took, tol, r.out);
    const char *eval = strstr(r.out, "\neval at step ");
    ck_assert_msg(eval && strstr(eval, "(the whole split)") && strstr(eval, " batches + ") &&
                      !strstr(eval, "2000 batches"),
                  "no exact, sized evaluation:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(eval, " tokens, "));
    qkv_child_free(&r);
}
END_TEST

/* The eval_stop of the library test: true from the third time on. */
static bool stop_at_third(void *calls)
{
    return ++*(int *)calls >= 3;
}

/* The library's side: the GPT's and the encoder-decoder's evaluations ask
 * the run's eval_stop before each batch after the first, end where it says,
 * and say in eval_done how many batches they averaged. */
START_TEST(test_an_evaluation_ends_where_eval_stop_says)
{
    qkv_corpus *corpus;
    test_run *t = tiny_run(8, 2, 2000, 50, &corpus);
    ck_assert(!isnan(qkv_training_eval(t->run, QKV_SPLIT_VAL)));
    ck_assert_int_eq(t->run->eval_done, 50);
    int calls = 0;
    t->run->eval_stop = stop_at_third;
    t->run->eval_stop_ud = &calls;
    ck_assert(!isnan(qkv_training_eval(t->run, QKV_SPLIT_VAL)));
    ck_assert_int_eq(t->run->eval_done, 3); /* asked after batches 1, 2 and 3 */
    ck_assert_int_eq(calls, 3);
    calls = 100; /* says stop at once: the first batch is still done */
    ck_assert(!isnan(qkv_training_eval(t->run, QKV_SPLIT_TRAIN)));
    ck_assert_int_eq(t->run->eval_done, 1);
    test_run_free(t);
    qkv_corpus_free(corpus);

    const qkv_seq2seq_task *task = qkv_seq2seq_task_find("dates");
    qkv_seq2seq_config sc = qkv_seq2seq_config_for(task, 1, 2, 16, 0);
    qkv_train_config tc = qkv_train_defaults();
    tc.batch_size = 2;
    tc.eval_iters = 40;
    test_run *s2s = s2s_run_new(&sc, &tc, task);
    ck_assert_qkv(s2s);
    calls = 0;
    s2s->run->eval_stop = stop_at_third;
    s2s->run->eval_stop_ud = &calls;
    double acc = qkv_training_eval(s2s->run, 0);
    ck_assert(acc >= 0 && acc <= 1);
    ck_assert_int_eq(s2s->run->eval_done, 3);
    test_run_free(s2s);
}
END_TEST

static Suite *signals_suite(void)
{
    Suite *s = suite_create("cli_signals");
    TCase *tc = tcase_create("stops");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_a_closed_pipe_saves_and_exits_141);
    tcase_add_test(tc, test_ctrl_c_with_the_reader_gone_saves_the_current_step);
    tcase_add_test(tc, test_a_hang_up_saves_like_sigterm);
    tcase_add_test(tc, test_ctrl_c_ends_a_huge_evaluation_within_a_batch);
    tcase_add_test(tc, test_sigterm_ends_a_resumed_runs_huge_evaluation);
    tcase_add_test(tc, test_a_time_budget_holds_when_the_machine_slows_down);
    tcase_add_test(tc, test_an_evaluation_ends_where_eval_stop_says);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(signals_suite)
