/* A training run stopped from outside keeps its work: a closed pipe on its
 * stdout (`| head -3`, a `| tee` gone before Ctrl-C) and a hang-up save like
 * Ctrl-C, with a documented status and no stale lock; a signal ends an
 * evaluation within a batch, however many it was to average; and a --time
 * budget holds when the machine slows down halfway. Every case runs
 * $QKV_TEST_BUILD/qkv in a temporary directory. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* A run of `qkv args...` whose stdout is a one-page pipe this process reads. */
typedef struct run {
    pid_t pid;
    int fd;         /* the read end (-1 once closed) */
    int writer;     /* a copy of the write end, for qkv_test_fill_pipe (-1 when not kept) */
    char out[1 << 16];
    size_t len;     /* what it printed so far */
} run;

/* Start qkv with args (NULL-terminated) in dir: stdin /dev/null, stderr to
 * err_path, signals at their defaults (Check's own dispositions must not
 * leak into it: an ignored SIGPIPE is inherited across exec). With
 * keep_writer the write end of the pipe stays open here too. */
static void start(run *r, const char *const *args, bool keep_writer)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (e < 0 || in < 0 || chdir(dir) != 0 || dup2(fds[1], 1) < 0 || dup2(e, 2) < 0 ||
            dup2(in, 0) < 0)
            _exit(127);
        close(fds[0]);
        int sigs[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP};
        for (int i = 0; i < 4; i++)
            signal(sigs[i], SIG_DFL);
        alarm(120); /* a hung program must not hang the suite */
        char *argv[64] = {qkv_bin};
        for (int n = 1; args[n - 1] && n < 63; n++)
            argv[n] = (char *)args[n - 1];
        execv(qkv_bin, argv);
        _exit(127);
    }
    r->pid = pid;
    r->fd = fds[0];
    r->len = 0;
    r->out[0] = 0;
    r->writer = keep_writer ? fds[1] : -1;
    if (!keep_writer)
        close(fds[1]);
}

/* Read r's stdout until it holds want; false when the run ended first or
 * timeout_s passed. */
static bool read_until(run *r, const char *want, double timeout_s)
{
    double end = now_s() + timeout_s;
    while (!strstr(r->out, want)) {
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        int ms = (int)(1000 * (end - now_s()));
        if (ms <= 0 || poll(&p, 1, ms) <= 0)
            return false;
        if (r->len + 4097 > sizeof r->out) { /* keep the last half: the lines wanted are new */
            memmove(r->out, r->out + r->len / 2, r->len - r->len / 2 + 1);
            r->len -= r->len / 2;
        }
        ssize_t got = read(r->fd, r->out + r->len, 4096);
        if (got <= 0)
            return false;
        r->len += (size_t)got;
        r->out[r->len] = 0;
    }
    return true;
}

/* The number after the last "step " r printed at the start of a line. */
static long last_step(const run *r)
{
    long step = -1;
    for (const char *p = r->out; (p = strstr(p, "\nstep ")); p++)
        sscanf(p, "\nstep %ld", &step);
    return step;
}

/* Stop reading: the run's reader is gone. */
static void close_reader(run *r)
{
    close(r->fd);
    r->fd = -1;
}

/* What finish gives for a run killed by signal sig (never an exit status),
 * and for one still going at the timeout. */
#define KILLED_BY(sig) (1000 + (sig))
#define STILL_GOING (-1)

/* Wait up to timeout_s for r to end (then SIGKILL it): its exit status,
 * KILLED_BY(the signal that ended it), or STILL_GOING. Reads on (to its
 * end) unless the reader was closed. */
static int finish(run *r, double timeout_s)
{
    double end = now_s() + timeout_s;
    int st;
    pid_t got;
    while ((got = waitpid(r->pid, &st, WNOHANG)) == 0 && now_s() < end) {
        if (r->fd >= 0)
            read_until(r, "\x01never printed", 0.05);
        else
            usleep(20000);
    }
    if (got == 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, &st, 0);
    }
    if (r->fd >= 0) { /* what it printed last may still be in the pipe */
        read_until(r, "\x01never printed", 10);
        close_reader(r);
    }
    if (r->writer >= 0)
        close(r->writer);
    return got == 0 ? STILL_GOING : WIFEXITED(st) ? WEXITSTATUS(st) : KILLED_BY(WTERMSIG(st));
}

static const char *run_err(void);

/* The run ended with exit status want. */
static void expect_status(int status, int want)
{
    char how[64];
    if (status == STILL_GOING)
        snprintf(how, sizeof how, "was still going at the timeout");
    else if (status >= KILLED_BY(0))
        snprintf(how, sizeof how, "was killed by signal %d", status - KILLED_BY(0));
    else
        snprintf(how, sizeof how, "exited with status %d", status);
    ck_assert_msg(status == want, "the run %s, not with status %d; stderr:\n%s", how, want,
                  run_err());
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
    run r;
    start(&r, (const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "p.ckpt", NULL}, false);
    ck_assert_msg(read_until(&r, "\ntraining: ", 60), "no plan line:\n%s", r.out);
    close_reader(&r);
    int status = finish(&r, 60);
    expect_status(status, 141);
    ck_assert_ptr_nonnull(strstr(run_err(), "qkv: standard output is gone (Broken pipe)"));
    assert_saved("p.ckpt", 1);
}
END_TEST

/* Ctrl-C in a terminal reaches `qkv train ... | tee log` and tee both: tee
 * goes at once, the run finishes its step and must still save. The test
 * fills the pipe so the run is blocked writing, sends SIGINT, then closes
 * the reader: the run's pending write fails, and it saves the current step
 * and exits 130 (it used to die of SIGPIPE, the checkpoint steps behind). */
START_TEST(test_ctrl_c_with_the_reader_gone_saves_the_current_step)
{
    run r;
    start(&r, (const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "t.ckpt", NULL}, true);
    ck_assert_msg(read_until(&r, "\nstep ", 60), "no step line:\n%s", r.out);
    long seen = last_step(&r);
    qkv_test_fill_pipe(r.writer);
    r.writer = -1;
    ck_assert_int_eq(kill(r.pid, SIGINT), 0);
    await_err("qkv: stopping");
    close_reader(&r);
    int status = finish(&r, 60);
    expect_status(status, 130);
    assert_saved("t.ckpt", seen);
}
END_TEST

/* A closed terminal or ssh session (SIGHUP) stops the run as SIGTERM does:
 * it saves, says where to resume, and exits 129. */
START_TEST(test_a_hang_up_saves_like_sigterm)
{
    run r;
    start(&r, (const char *const[]){"train", ENDLESS, "--eval-every", "1000000", "--out",
                                    "h.ckpt", NULL}, false);
    ck_assert_msg(read_until(&r, "\nstep ", 60), "no step line:\n%s", r.out);
    long seen = last_step(&r);
    ck_assert_int_eq(kill(r.pid, SIGHUP), 0);
    int status = finish(&r, 60);
    expect_status(status, 129);
    ck_assert_ptr_nonnull(strstr(run_err(), "qkv: stopping"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step "));
    char lock[] = "h.ckpt.lock";
    ck_assert(!exists(lock));
    ck_assert_int_ge(saved_step("h.ckpt"), seen);
}
END_TEST

/* A signal ends an evaluation between two batches: --eval-iters 1000000 at
 * step 5 (its progress line is out before the evaluation starts), then
 * SIGINT: the run saves at step 5 and ends within seconds, not hours. */
START_TEST(test_ctrl_c_ends_a_huge_evaluation_within_a_batch)
{
    run r;
    start(&r, (const char *const[]){"train", TINY, "--iters", "1000000", "--eval-every", "5",
                                    "--eval-iters", "1000000", "--out", "e.ckpt", NULL}, false);
    bool seen = read_until(&r, "\nstep      5/", 30); /* the signal goes anyway */
    ck_assert_int_eq(kill(r.pid, SIGINT), 0);
    int status = finish(&r, 30);
    expect_status(status, 130);
    ck_assert_msg(seen, "no line for step 5 before its evaluation:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "eval at step 5: "));
    ck_assert_ptr_nonnull(strstr(r.out, " of 1000000+1000000 batches"));
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step 5: saved e.ckpt\n"));
    ck_assert_int_eq(saved_step("e.ckpt"), 5);
    ck_assert(!exists("e.ckpt.lock"));
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

    run r;
    start(&r, (const char *const[]){"train", "--resume", "big.ckpt", "--data", "text.txt",
                                    "--threads", "1", "--log-every", "1", "--eval-every", "3",
                                    NULL}, false);
    bool seen = read_until(&r, "\nstep      3/", 30); /* the signal goes anyway */
    ck_assert_int_eq(kill(r.pid, SIGTERM), 0);
    int status = finish(&r, 30);
    expect_status(status, 143);
    ck_assert_msg(seen, "no line for step 3 before its evaluation:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\ninterrupted at step 3: saved big.ckpt\n"));
    ck_assert_int_eq(saved_step("big.ckpt"), 3);
    ck_assert(!exists("big.ckpt.lock"));
}
END_TEST

/* --time 20 with every core made busy from 10 s on (the run's threads then
 * share them): the run still ends within max(2%, 3 s) of its budget, its
 * final evaluation sized to what is left (a whole one, 2000+2000 batches,
 * would take longer than the budget). */
START_TEST(test_a_time_budget_holds_when_the_machine_slows_down)
{
    const double budget = 20, half = 10, slack = 3;
    run r;
    double t0 = now_s();
    start(&r, (const char *const[]){"train", "--data", "text.txt", "--layers", "2", "--heads",
                                    "4", "--embd", "64", "--block", "64", "--batch", "8",
                                    "--threads", "2", "--time", "20", "--eval-every", "1000000",
                                    "--eval-iters", "2000", "--log-every", "100", "--out",
                                    "b.ckpt", NULL}, false);
    /* Read (the run must not block on its output) until halfway, then load every core. */
    read_until(&r, "\x01never printed", half - (now_s() - t0));
    long n_busy = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t busy[256];
    n_busy = n_busy < 1 ? 1 : n_busy > 256 ? 256 : n_busy;
    for (long i = 0; i < n_busy; i++) {
        ck_assert_int_ge(busy[i] = fork(), 0);
        if (busy[i] == 0) {
            alarm(60); /* ends it should this test die */
            for (volatile unsigned long x = 0;; x++)
                ;
        }
    }
    int status = finish(&r, 40);
    double took = now_s() - t0;
    for (long i = 0; i < n_busy; i++) {
        kill(busy[i], SIGKILL);
        waitpid(busy[i], NULL, 0);
    }
    expect_status(status, 0);
    double tol = fmax(0.02 * budget, slack);
    printf("time budget: --time %g with %ld busy loops from %g s on took %.1f s\n", budget,
           n_busy, half, took);
    ck_assert_msg(fabs(took - budget) <= tol, "a %g s budget took %.1f s (more than %g s off):\n%s",
                  budget, took, tol, r.out);
    const char *eval = strstr(r.out, "\neval at step ");
    ck_assert_msg(eval && strstr(eval, " of 2000+2000 batches, "), "no sized evaluation:\n%s",
                  r.out);
    ck_assert_ptr_nonnull(strstr(eval, " tokens, "));
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
