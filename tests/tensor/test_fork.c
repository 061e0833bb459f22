/* A host program that forks (qkv/base.h, qkv_set_threads): libgomp is not
 * fork-safe, so a child forked after qkv's threads ran does qkv's work on one
 * thread, with the same result, and says so when asked for more; it never
 * hangs waiting for threads it does not have. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"

/* The threads of this process (/proc/self/task). */
static int process_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* x @ w for 256x256 matrices of fixed values, its sum: work that qkv shares
 * out among its threads. */
static double product_sum(void)
{
    qkv_arena *a = qkv_arena_new(4 << 20);
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(256, 256), 1, &rng);
    qkv_tensor *w = qkv_randn(a, QKV_SHAPE(256, 256), 1, &rng);
    qkv_tensor *y = qkv_matmul(a, x, w, false, false);
    ck_assert_ptr_nonnull(y);
    double s = 0;
    for (size_t i = 0; i < y->size; i++)
        s += (double)y->data[i];
    qkv_arena_free(&a);
    return s;
}

START_TEST(test_a_forked_child_runs_on_one_thread)
{
    ck_assert_int_eq(qkv_set_threads(2), 0);
    double parent = product_sum();
    ck_assert_msg(process_threads() > 1, "the work ran on one thread: the case tests nothing");
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGALRM, SIG_DFL); /* a child that hangs, as it did, is ended and fails the case */
        alarm(20);
        int code = product_sum() == parent ? 0 : 2;
        if (code == 0 && qkv_threads() != 1)
            code = 3;
        if (code == 0 && (qkv_set_threads(2) != -1 ||
                          !strstr(qkv_last_error(), "qkv_set_threads: n 2: this process was "
                                                    "forked from one whose threads were running")))
            code = 4;
        if (code == 0 && qkv_set_threads(1) != 0)
            code = 5;
        _exit(code);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "the child was ended by signal %d (%s)",
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                  WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "it hung" : "a crash");
    ck_assert_msg(WEXITSTATUS(status) == 0, "the child failed check %d", WEXITSTATUS(status));
    /* The parent keeps its threads. */
    ck_assert_int_eq(qkv_threads(), 2);
    ck_assert(product_sum() == parent);
}
END_TEST

static Suite *fork_suite(void)
{
    Suite *s = suite_create("fork");
    TCase *tc = tcase_create("fork");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_a_forked_child_runs_on_one_thread);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(fork_suite)
