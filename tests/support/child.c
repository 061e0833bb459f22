/* Child processes for the tests (see child.h). */
#define _GNU_SOURCE /* F_SETPIPE_SZ, unshare */
#include "child.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The most of a child's stdout kept: past it the older half goes. */
#define KEEP_OUT ((size_t)1 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Point fd at path opened with flags (made or truncated); false if it cannot. */
static bool redirect(int fd, const char *path, int flags)
{
    int f = open(path, flags, 0600);
    return f >= 0 && (f == fd || (dup2(f, fd) >= 0 && close(f) == 0));
}

/* In the child: mount a tmpfs of size on dir, in a mount namespace of its own. */
static bool mount_tmpfs(const char *dir, const char *size)
{
    char data[64];
    snprintf(data, sizeof data, "size=%s", size);
    return unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
           mount("tmpfs", dir, "tmpfs", 0, data) == 0;
}

/* In the child: everything opts asks before it runs; exits 127 (126 for a
 * capability or a mount it cannot have) when something cannot be done. */
static void set_up(const qkv_child_opts *o, const int *pipe_fds)
{
    const int out_flags = O_WRONLY | O_CREAT | O_TRUNC;
    if (!redirect(0, "/dev/null", O_RDONLY) || (o->dir && chdir(o->dir) != 0) ||
        (o->out_path && !redirect(1, o->out_path, out_flags)) ||
        (o->err_path && !redirect(2, o->err_path, out_flags)))
        _exit(127);
    if (o->pipe_out) {
        if (dup2(pipe_fds[1], 1) < 0)
            _exit(127);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
    }
    if (o->unset_env)
        unsetenv(o->unset_env);
    if (o->default_signals) {
        const int sigs[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP};
        for (int i = 0; i < 4; i++)
            signal(sigs[i], SIG_DFL);
    }
    if (o->as_limit)
        setrlimit(RLIMIT_AS, &(struct rlimit){o->as_limit, o->as_limit});
    if (o->fsize_limit) {
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &(struct rlimit){o->fsize_limit, o->fsize_limit});
    }
    /* Out of the bounding set, the capability stays gone across execv. */
    if (o->obey_modes && prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0)
        _exit(126);
    if (o->tmpfs && !mount_tmpfs(o->tmpfs, o->tmpfs_size))
        _exit(126);
    alarm(o->alarm_s ? o->alarm_s : 120); /* a hung child must not hang the suite */
}

/* Fork; in the child, set it up and return 0; in the test, return the child
 * with its pipe's ends. */
static qkv_child start(const qkv_child_opts *opts)
{
    static const qkv_child_opts none;
    const qkv_child_opts *o = opts ? opts : &none;
    int fds[2] = {-1, -1};
    if (o->pipe_out) {
        ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0); /* other children do not hold it */
        ck_assert_int_eq(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
    }
    fflush(NULL);
    qkv_child c = {.pid = fork(), .fd = -1, .writer = -1, .status = QKV_CHILD_RUNNING};
    ck_assert_int_ge(c.pid, 0);
    if (c.pid == 0) {
        set_up(o, fds);
        return c;
    }
    if (o->pipe_out) {
        c.fd = fds[0];
        if (o->keep_writer)
            c.writer = fds[1];
        else
            close(fds[1]);
        ck_assert_ptr_nonnull(c.out = calloc(c.cap = 4097, 1));
    }
    return c;
}

qkv_child qkv_child_exec(const char *path, const char *const *args, const qkv_child_opts *opts)
{
    qkv_child c = start(opts);
    if (c.pid == 0) {
        char *argv[64] = {(char *)path};
        for (int n = 1; args[n - 1] && n < 63; n++)
            argv[n] = (char *)args[n - 1];
        execv(path, argv);
        _exit(127);
    }
    return c;
}

qkv_child qkv_child_call(int (*fn)(void *arg), void *arg, const qkv_child_opts *opts)
{
    qkv_child c = start(opts);
    if (c.pid == 0)
        _exit(fn(arg));
    return c;
}

/* Read once from c's pipe (waiting at most ms, < 0: as long as it takes);
 * false at its end or when nothing came in time. */
static bool read_some(qkv_child *c, int ms)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    int ready;
    while ((ready = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    if (ready <= 0)
        return false;
    if (c->len + 4097 > c->cap) {
        if (c->cap >= KEEP_OUT) { /* keep the later half: the lines wanted are new */
            memmove(c->out, c->out + c->len / 2, c->len - c->len / 2 + 1);
            c->len -= c->len / 2;
        } else {
            ck_assert_ptr_nonnull(c->out = realloc(c->out, c->cap *= 2));
        }
    }
    ssize_t got;
    while ((got = read(c->fd, c->out + c->len, 4096)) < 0 && errno == EINTR)
        ;
    if (got <= 0)
        return false;
    c->len += (size_t)got;
    c->out[c->len] = 0;
    return true;
}

bool qkv_child_read_until(qkv_child *c, const char *want, double timeout_s)
{
    ck_assert_int_ge(c->fd, 0);
    double end = now_s() + timeout_s;
    while (!want || !strstr(c->out, want)) {
        int ms = timeout_s < 0 ? -1 : (int)(1000 * (end - now_s()));
        if ((timeout_s >= 0 && ms <= 0) || !read_some(c, ms))
            return false;
    }
    return true;
}

void qkv_child_close_reader(qkv_child *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int qkv_child_wait(qkv_child *c, double timeout_s)
{
    if (c->writer >= 0) /* else the pipe never ends */
        close(c->writer);
    c->writer = -1;
    if (timeout_s < 0) /* a child blocked on a full pipe ends only once it is read */
        while (c->fd >= 0 && read_some(c, -1))
            ;
    double end = now_s() + timeout_s;
    int st = 0;
    pid_t got;
    while ((got = waitpid(c->pid, &st, timeout_s < 0 ? 0 : WNOHANG)) == 0 && now_s() < end) {
        if (c->fd >= 0)
            read_some(c, 50);
        else
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (got == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &st, 0);
    } else {
        ck_assert_int_eq(got, c->pid);
    }
    while (c->fd >= 0 && read_some(c, 10000)) /* what it printed last may still be in the pipe */
        ;
    qkv_child_close_reader(c);
    return c->status = got == 0         ? QKV_CHILD_RUNNING
                       : WIFEXITED(st) ? WEXITSTATUS(st)
                                       : QKV_CHILD_KILLED(WTERMSIG(st));
}

int qkv_child_shell_status(int status)
{
    return status >= QKV_CHILD_KILLED(0) ? 128 + status - QKV_CHILD_KILLED(0) : status;
}

const char *qkv_child_describe(int status)
{
    static char how[64];
    if (status == QKV_CHILD_RUNNING)
        snprintf(how, sizeof how, "was still going at the timeout");
    else if (status >= QKV_CHILD_KILLED(0))
        snprintf(how, sizeof how, "was killed by signal %d", status - QKV_CHILD_KILLED(0));
    else
        snprintf(how, sizeof how, "exited with status %d", status);
    return how;
}

void qkv_child_free(qkv_child *c)
{
    qkv_child_close_reader(c);
    if (c->writer >= 0)
        close(c->writer);
    c->writer = -1;
    free(c->out);
    c->out = NULL;
}
