/* Running the qkv program from a test (see cli_run.h). */
#define _GNU_SOURCE /* unshare */
#include "cli_run.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"

void qkv_cli_open(qkv_cli *cli, const char *prefix)
{
    const char *build = getenv("QKV_TEST_BUILD");
    char cwd[2048] = "";
    if (!build || build[0] != '/')
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(cli->bin, sizeof cli->bin, "%s%s%s/qkv", cwd, cwd[0] ? "/" : "",
             build ? build : "build");
    ck_assert_msg(access(cli->bin, X_OK) == 0, "no program at %s (set QKV_TEST_BUILD)", cli->bin);
    qkv_test_make_tmpdir(cli->root, sizeof cli->root, prefix);
    snprintf(cli->work, sizeof cli->work, "%s/work", cli->root);
    ck_assert_int_eq(mkdir(cli->work, 0700), 0);
}

void qkv_cli_close(const qkv_cli *cli)
{
    qkv_test_remove_tmpdir(cli->work);
    qkv_test_remove_tmpdir(cli->root);
}

/* In the child: mount a tmpfs of size on dir, in a mount namespace of its own. */
static int mount_tmpfs(const char *dir, const char *size)
{
    char data[64];
    snprintf(data, sizeof data, "size=%s", size);
    return unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
                   mount("tmpfs", dir, "tmpfs", 0, data) != 0
               ? -1
               : 0;
}

pid_t qkv_cli_start(const qkv_cli *cli, const qkv_cli_opts *opts, const char *const *args)
{
    char out[128], err[128];
    snprintf(out, sizeof out, "%s/out", cli->root);
    snprintf(err, sizeof err, "%s/err", cli->root);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid > 0)
        return pid;
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0 || chdir(cli->work) != 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
        dup2(in, 0) < 0)
        _exit(127);
    unsetenv("QKV_DATA"); /* the tests give --data or mean its absence */
    if (opts && opts->fsize_limit) {
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &(struct rlimit){opts->fsize_limit, opts->fsize_limit});
    }
    if (opts && opts->tmpfs && mount_tmpfs(opts->tmpfs, opts->tmpfs_size) != 0)
        _exit(126);
    alarm(120);
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)cli->bin;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    execv(cli->bin, argv);
    _exit(127);
}

qkv_cli_result qkv_cli_wait(const qkv_cli *cli, pid_t pid)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    char path[128];
    qkv_cli_result r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)};
    snprintf(path, sizeof path, "%s/out", cli->root);
    r.out = qkv_test_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/err", cli->root);
    r.err = qkv_test_read_file(path, NULL);
    return r;
}

bool qkv_cli_wait_for(const qkv_cli *cli, const char *text, double seconds)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out", cli->root);
    for (double waited = 0; waited < seconds; waited += 0.01) {
        char *out = access(path, F_OK) == 0 ? qkv_test_read_file(path, NULL) : NULL;
        bool there = out && strstr(out, text);
        free(out);
        if (there)
            return true;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return false;
}

qkv_cli_result qkv_cli_run(const qkv_cli *cli, const qkv_cli_opts *opts, const char *const *args)
{
    return qkv_cli_wait(cli, qkv_cli_start(cli, opts, args));
}

void qkv_cli_result_free(qkv_cli_result *r)
{
    free(r->out);
    free(r->err);
}

const char *qkv_cli_path(const qkv_cli *cli, const char *name)
{
    return qkv_test_path(cli->work, name);
}

/* qsort's order for names. */
static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *qkv_test_listing(const char *dir)
{
    static char names[2048];
    char *sorted[64];
    int n = 0;
    names[0] = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) && n < 64;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            ck_assert_ptr_nonnull(sorted[n++] = strdup(e->d_name));
    closedir(d);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_name);
    for (int i = 0; i < n; i++) {
        strncat(names, " ", sizeof names - strlen(names) - 1);
        strncat(names, sorted[i], sizeof names - strlen(names) - 1);
        free(sorted[i]);
    }
    return names;
}

void qkv_test_write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}
