/* Running the qkv program from a test: $QKV_TEST_BUILD/qkv (default build/qkv)
 * in a working directory of its own, with stdin closed, and what it printed
 * and how it ended collected afterwards (a child of child.h).
 *
 *     qkv_cli cli;
 *     qkv_cli_open(&cli, "qkv_outputs");
 *     qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "a.ckpt", "--text", "the");
 *     ck_assert_int_eq(r.status, 0);
 *     qkv_cli_result_free(&r);
 *     qkv_cli_close(&cli);
 */
#ifndef QKV_TEST_CLI_RUN_H
#define QKV_TEST_CLI_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "child.h"
#include "files.h"

/* The program and where it runs. */
typedef struct qkv_cli {
    char bin[4096]; /* the program's absolute path */
    char root[64];  /* a fresh temporary directory: the run's stdout and stderr go here */
    char work[128]; /* root/work, the program's working directory */
} qkv_cli;

/* What a run does differently (NULL for nothing). */
typedef struct qkv_cli_opts {
    rlim_t fsize_limit;     /* RLIMIT_FSIZE, 0 = none; SIGXFSZ is ignored, so a write
                               past it fails with EFBIG ("File too large") */
    const char *tmpfs;      /* a folder (relative to work) to mount a tmpfs of tmpfs_size
                               on, in the run's own mount namespace (gone with it); a run
                               that cannot mount it (not root) exits 126 */
    const char *tmpfs_size; /* e.g. "16k" */
    rlim_t as_limit;        /* RLIMIT_AS, 0 = none */
    unsigned alarm_s;       /* seconds before SIGALRM ends a hung run, 0 = 120 */
    const char *stdout_path; /* its stdout to this file (e.g. /dev/full) instead of root/out */
    bool obey_modes;        /* as root too, without CAP_DAC_OVERRIDE, so a folder's mode
                               binds; a run that cannot drop it exits 126 */
    bool keep_writer;       /* qkv_cli_start_piped: keep the pipe's write end (child.writer) */
} qkv_cli_opts;

/* What a run printed and how it ended. */
typedef struct qkv_cli_result {
    int status; /* exit status, or 128 + the signal that ended it */
    char *out;  /* its stdout (malloc'd) */
    char *err;  /* its stderr (malloc'd) */
} qkv_cli_result;

/* Find the program and make cli->root (/tmp/PREFIX_XXXXXX) and cli->work. */
void qkv_cli_open(qkv_cli *cli, const char *prefix);

/* Remove cli->work, cli->root and the files in them. */
void qkv_cli_close(const qkv_cli *cli);

/* Start `qkv args...` (NULL-terminated) in cli->work; its pid. A run is
 * ended by SIGALRM after 120 s, so a hung program cannot hang the suite. */
pid_t qkv_cli_start(const qkv_cli *cli, const qkv_cli_opts *opts, const char *const *args);

/* Wait for the run pid started and collect what it printed. */
qkv_cli_result qkv_cli_wait(const qkv_cli *cli, pid_t pid);

/* Wait (at most seconds) until the running program's stdout holds text; whether it did. */
bool qkv_cli_wait_for(const qkv_cli *cli, const char *text, double seconds);

/* Start `qkv args...` in cli->work with its stdout a one-page pipe this
 * process reads (qkv_child_read_until; the run blocks when the reader lags)
 * and its stderr to root/err. */
qkv_child qkv_cli_start_piped(const qkv_cli *cli, const qkv_cli_opts *opts,
                              const char *const *args);

/* Read the rest of a piped run's stdout, wait for it, and collect its
 * stderr (the child is freed). */
qkv_cli_result qkv_cli_finish(const qkv_cli *cli, qkv_child *run);

/* Run `qkv args...` to its end. */
qkv_cli_result qkv_cli_run(const qkv_cli *cli, const qkv_cli_opts *opts, const char *const *args);

#define QKV_CLI_RUN(cli, opts, ...) \
    qkv_cli_run((cli), (opts), (const char *const[]){__VA_ARGS__, NULL})

void qkv_cli_result_free(qkv_cli_result *r);

/* cli->work/name (qkv_test_path: three slots, so three can be held at once). */
const char *qkv_cli_path(const qkv_cli *cli, const char *name);

/* The run ended with status and its stderr holds each of the n strings. */
void qkv_cli_expect(const qkv_cli_result *r, int status, size_t n, const char *const *parts);

/* QKV_CLI_EXPECT(r, status, "a", "b"): r ended with status and its stderr
 * holds "a" and "b" (give "" for no string). */
#define QKV_CLI_EXPECT(r, status, ...)                                                      \
    qkv_cli_expect(&(r), (status), sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), \
                   (const char *[]){__VA_ARGS__})

#endif
