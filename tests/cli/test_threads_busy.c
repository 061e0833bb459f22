/* Threads on a busy machine: `--threads auto` (the default) counts the cores
 * other programs leave free, and a run whose threads wait for a core says
 * so once with advice. Every case runs $QKV_TEST_BUILD/qkv. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/threads_busy.h"
#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128]; /* a short English text, repeated: the corpus */

/* A small, fast model. */
#define TINY "--layers", "1", "--heads", "1", "--embd", "16", "--block", "16", "--batch", "4"

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_threads_busy");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* A process that only spins, on the cores this one may use. */
static pid_t busy_loop(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(60); /* whatever happens to the test, it ends */
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* The watch cli_busy_watch_start begins may overlap this process's own work
 * (the loading before a run's first step): that work is not another
 * program's. A core of this process kept busy through the whole watch must
 * still count as free. Skipped when the machine is not quiet; three tries,
 * since other programs may start during one. */
START_TEST(test_own_work_is_not_a_busy_core)
{
    cpu_set_t cores;
    ck_assert_int_eq(sched_getaffinity(0, sizeof cores, &cores), 0);
    int n = CPU_COUNT(&cores), got = 0;
    for (int i = 0; i < 3 && got != n; i++) {
        if (cli_free_cores(n) != n) {
            printf("%s: SKIPPED: the machine is busy already\n", __func__);
            return;
        }
        cli_busy_watch_start();
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do /* 0.3 s of work on this core: longer than the watch */
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < 0.3);
        got = cli_free_cores(n);
    }
    ck_assert_int_eq(got, n);
}
END_TEST

/* Given one core, auto runs one thread, and the plan line says it chose. */
START_TEST(test_auto_on_one_core_is_one_thread)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0); /* the run inherits it */
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--iters", "2",
                                   "--eval-iters", "1", "--out", "a.ckpt");
    ck_assert_msg(r.status == 0, "status %d; stderr:\n%s", r.status, r.err);
    ck_assert_msg(strstr(r.out, ", 1 thread (auto)\n"), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
}
END_TEST

/* With a busy loop on every core, two threads the user asked for wait for a
 * core about half their time: the run says so once, and keeps its count. */
START_TEST(test_starved_threads_are_said_once)
{
    cpu_set_t cores;
    ck_assert_int_eq(sched_getaffinity(0, sizeof cores, &cores), 0);
    int n = CPU_COUNT(&cores);
    if (n < 2) {
        printf("%s: SKIPPED: one core, no two threads to starve\n", __func__);
        return;
    }
    pid_t busy[CPU_SETSIZE];
    for (int i = 0; i < n; i++)
        busy[i] = busy_loop();
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--time", "6",
                                   "--eval-iters", "1", "--threads", "2", "--out", "b.ckpt");
    for (int i = 0; i < n; i++)
        stop(busy[i]);
    ck_assert_msg(r.status == 0, "status %d; stderr:\n%s", r.status, r.err);
    const char *said = strstr(r.err, "qkv: the machine is busy: the 2 threads waited for a core");
    ck_assert_msg(said && strstr(said, "--threads 1 (or auto) may be faster"), "stderr:\n%s",
                  r.err);
    ck_assert_msg(!strstr(strstr(said, "faster"), "the machine is busy"), "said twice:\n%s", r.err);
    qkv_cli_result_free(&r);
}
END_TEST

/* Two threads auto chose on a quiet machine, then a busy loop on every core:
 * the run goes on with 1 thread and says so once. Skipped when the machine
 * is busy already (auto then starts with 1 thread). */
START_TEST(test_auto_drops_to_one_thread_when_starved)
{
    cpu_set_t cores;
    ck_assert_int_eq(sched_getaffinity(0, sizeof cores, &cores), 0);
    int n = CPU_COUNT(&cores);
    if (n != 2) {
        printf("%s: SKIPPED: %d cores, not 2\n", __func__, n);
        return;
    }
    pid_t run = qkv_cli_start(&cli, NULL,
                              (const char *const[]){"train", "--data", text_path, TINY,
                                                    "--time", "8", "--eval-iters", "1", "--out",
                                                    "c.ckpt", NULL});
    bool two = qkv_cli_wait_for(&cli, " (auto)", 30) &&
               qkv_cli_wait_for(&cli, ", 2 threads (auto)", 0.01);
    pid_t busy[2] = {two ? busy_loop() : 0, two ? busy_loop() : 0};
    qkv_cli_result r = qkv_cli_wait(&cli, run);
    for (int i = 0; two && i < 2; i++)
        stop(busy[i]);
    ck_assert_msg(r.status == 0, "status %d; stderr:\n%s", r.status, r.err);
    if (!two) {
        printf("%s: SKIPPED: the machine is busy, auto chose 1 thread\n", __func__);
    } else {
        const char *said = strstr(r.err, "qkv: the machine is busy: the 2 threads waited");
        ck_assert_msg(said && strstr(said, "going on with 1 thread (the results are the same)"),
                      "stderr:\n%s", r.err);
    }
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *threads_busy_suite(void)
{
    Suite *s = suite_create("threads_busy");
    TCase *tc = tcase_create("threads_busy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_own_work_is_not_a_busy_core);
    tcase_add_test(tc, test_auto_on_one_core_is_one_thread);
    tcase_add_test(tc, test_starved_threads_are_said_once);
    tcase_add_test(tc, test_auto_drops_to_one_thread_when_starved);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(threads_busy_suite)
