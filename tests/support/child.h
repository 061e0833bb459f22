/* Child processes for the tests: the one place a test forks. A child runs a
 * program (the qkv program, through cli_run.h) or a function of the test in
 * a process of its own (a save killed halfway, a second process holding a
 * lock, a loop that keeps a core busy), with its stdin, stdout and stderr
 * where the test says, limits (rlimits, an alarm that ends a hung child, a
 * capability dropped), and how it ended (an exit status, the signal that
 * killed it, or still going at a timeout) told apart.
 *
 *     qkv_child c = qkv_child_exec(bin, args, &(qkv_child_opts){.pipe_out = true});
 *     ck_assert(qkv_child_read_until(&c, "\nstep ", 60));
 *     kill(c.pid, SIGINT);
 *     ck_assert_int_eq(qkv_child_wait(&c, 60), 130);
 *     qkv_child_free(&c);
 */
#ifndef QKV_TEST_CHILD_H
#define QKV_TEST_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/* How a child starts (all zero: stdin /dev/null, stdout and stderr this
 * process's, signals as this process has them, ended by SIGALRM after 120 s). */
typedef struct qkv_child_opts {
    const char *dir;         /* its working directory (NULL: this process's) */
    const char *out_path;    /* its stdout to this file, made or truncated (NULL: inherited) */
    const char *err_path;    /* its stderr to this file, made or truncated (NULL: inherited) */
    bool pipe_out;           /* its stdout into a one-page pipe this process reads
                                (qkv_child_read_until): it blocks when the reader lags */
    bool keep_writer;        /* with pipe_out: keep the pipe's write end too (writer) */
    rlim_t as_limit;         /* RLIMIT_AS, 0 = none */
    rlim_t fsize_limit;      /* RLIMIT_FSIZE, 0 = none; SIGXFSZ is ignored, so a write
                                past it fails with EFBIG ("File too large") */
    unsigned alarm_s;        /* seconds before SIGALRM ends a hung child, 0 = 120 */
    bool default_signals;    /* SIGPIPE, SIGINT, SIGTERM, SIGHUP at their defaults
                                (Check's dispositions must not leak into it: an
                                ignored SIGPIPE is inherited across exec) */
    bool obey_modes;         /* without CAP_DAC_OVERRIDE, so that as root too a folder's
                                mode binds; a child that cannot drop it exits 126 */
    const char *tmpfs;       /* a folder (relative to dir) to mount a tmpfs of tmpfs_size
                                on, in the child's own mount namespace (gone with it); a
                                child that cannot mount it (not root) exits 126 */
    const char *tmpfs_size;  /* e.g. "16k" */
    const char *unset_env;   /* an environment variable the child goes without */
} qkv_child_opts;

/* A started child. */
typedef struct qkv_child {
    pid_t pid;
    int fd;        /* the read end of its stdout pipe, or -1 */
    int writer;    /* the kept write end (keep_writer), or -1 */
    char *out;     /* what was read from the pipe, NUL-terminated (the last
                      MiB of it: an endless run prints more) */
    size_t len, cap;
    int status;    /* how it ended (qkv_child_wait), once it has */
} qkv_child;

/* What qkv_child_wait gives for a child killed by signal sig (never an exit
 * status), and for one still going at the timeout. */
#define QKV_CHILD_KILLED(sig) (1000 + (sig))
#define QKV_CHILD_RUNNING (-1)

/* Start the program at path with args (NULL-terminated, without argv[0]);
 * a child that cannot start exits 127. The test fails when fork does. */
qkv_child qkv_child_exec(const char *path, const char *const *args, const qkv_child_opts *opts);

/* Start a child that runs fn(arg) and exits with what it returns. */
qkv_child qkv_child_call(int (*fn)(void *arg), void *arg, const qkv_child_opts *opts);

/* Read the child's stdout pipe until what it printed holds want, at most
 * timeout_s (< 0: no limit); false when it ended or the time passed first.
 * want NULL reads until then (to keep a child from blocking on its output). */
bool qkv_child_read_until(qkv_child *c, const char *want, double timeout_s);

/* Stop reading the child's stdout: its reader is gone (a closed pipe). */
void qkv_child_close_reader(qkv_child *c);

/* Wait at most timeout_s (< 0: no limit) for the child to end, reading its
 * pipe meanwhile and to its end; kill a child still going then. Its exit
 * status, QKV_CHILD_KILLED(the signal), or QKV_CHILD_RUNNING (also in c->status). */
int qkv_child_wait(qkv_child *c, double timeout_s);

/* A status of qkv_child_wait as a shell gives it: 128 + the signal for a
 * killed child. */
int qkv_child_shell_status(int status);

/* A status of qkv_child_wait in words ("exited with status 3", "was killed
 * by signal 9", "was still going at the timeout"), in a static buffer. */
const char *qkv_child_describe(int status);

/* Free what qkv_child_exec or _call kept (the pipe's ends, the output). */
void qkv_child_free(qkv_child *c);

#endif
