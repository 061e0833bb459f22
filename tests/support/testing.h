/* Shared by every test program: Check, a main per suite, small helpers. */
#ifndef QKV_TESTING_H
#define QKV_TESTING_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qkv/dates.h"
#include "qkv/qkv.h"
#include "qkv/seq2seq.h"
#include "files.h"
#include "runs.h"

/* main() that runs one suite and exits non-zero when any test failed. */
#define QKV_TEST_MAIN(suite_fn)                                          \
    int main(void)                                                       \
    {                                                                    \
        SRunner *runner = srunner_create(suite_fn());                    \
        srunner_run_all(runner, CK_NORMAL);                              \
        int failed = srunner_ntests_failed(runner);                      \
        srunner_free(runner);                                            \
        return failed ? 1 : 0;                                           \
    }

/* What most forward tests need: an arena (4 MiB to start; it grows) and an rng. */
typedef struct qkv_test_env {
    qkv_arena *a;
    qkv_rng rng;
} qkv_test_env;

/* A fresh env with its rng seeded with seed (the test fails when the arena cannot be made). */
qkv_test_env qkv_test_env_new(uint64_t seed);

/* Fail the test, printing qkv's last error, when ptr is NULL. */
#define ck_assert_qkv(ptr) ck_assert_msg((ptr) != NULL, "qkv: %s", qkv_last_error())

/* Assert every value of t is within tol of expected[]. */
void qkv_test_assert_close(const qkv_tensor *t, const qkv_real *expected, double tol);

/* A random shape: ndim dims, each extent in [1, max_extent]. */
void qkv_test_random_shape(qkv_rng *rng, int ndim, int max_extent, int *shape);

/* A random permutation of {0..n-1} into perm (Fisher-Yates). */
void qkv_test_random_perm(qkv_rng *rng, int n, int *perm);

/* The absolute path of the qkv program, $QKV_TEST_BUILD/qkv (build/qkv
 * when unset), into path (len bytes); the test fails when it is not there. */
void qkv_test_program(char *path, size_t len);

/* Fill the pipe whose write end is fd until it holds no more, then close fd:
 * a program writing to it blocks at its next line until the reader drains
 * it. The filling writes through a fresh open of the pipe, since O_NONBLOCK
 * on fd itself would make the program's own writes fail. */
void qkv_test_fill_pipe(int fd);

/* Every model option of qkv/options.h turned on: each flag on, each choice
 * its first value past GPT-2's (rope, rmsnorm, relu2). */
qkv_model_options qkv_test_every_option(void);

/* fn(arg) with every qkv_alloc refused (qkv_set_allocator), then the usual
 * allocator again; the test fails if fn asked for none. For code that keeps
 * what it allocated once (a thread's buffer): in Check's fork mode each test
 * is a fresh process, so fn meets the refusal; with CK_FORK=no it may not. */
void qkv_test_without_memory(void (*fn)(void *arg), void *arg);

#endif
