/* A host program that forks (qkv/base.h, qkv_set_threads): libgomp is not
 * fork-safe, so a child forked after qkv's threads ran does qkv's work on one
 * thread, with the same result, and says so when asked for more; it never
 * hangs waiting for threads it does not have. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "child.h"
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

/* The child's checks: the product's sum as its parent's (parent points at
 * it), one thread, more refused saying why, one allowed. 0, or the check
 * that failed. */
static int child_checks(void *parent)
{
    if (product_sum() != *(const double *)parent)
        return 2;
    if (qkv_threads() != 1)
        return 3;
    if (qkv_set_threads(2) != -1 ||
        !strstr(qkv_last_error(), "qkv_set_threads: n 2: this process was forked from one whose "
                                  "threads were running"))
        return 4;
    return qkv_set_threads(1) != 0 ? 5 : 0;
}

START_TEST(test_a_forked_child_runs_on_one_thread)
{
    ck_assert_int_eq(qkv_set_threads(2), 0);
    double parent = product_sum();
    ck_assert_msg(process_threads() > 1, "the work ran on one thread: the case tests nothing");
    /* A child that hangs, as it did, is ended by its alarm and fails the case. */
    qkv_child c = qkv_child_call(child_checks, &parent, &(qkv_child_opts){.alarm_s = 20});
    int status = qkv_child_wait(&c, 60);
    qkv_child_free(&c);
    ck_assert_msg(status != QKV_CHILD_KILLED(SIGALRM), "the child hung");
    ck_assert_msg(status == 0, "the child ended with %d (a check's number, or 1000 + a signal)",
                  status);
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
