/* Running the qkv program from a test (see cli_run.h). */
#include "cli_run.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testing.h"

void qkv_cli_open(qkv_cli *cli, const char *prefix)
{
    qkv_test_program(cli->bin, sizeof cli->bin);
    qkv_test_make_tmpdir(cli->root, sizeof cli->root, prefix);
    snprintf(cli->work, sizeof cli->work, "%s/work", cli->root);
    ck_assert_int_eq(mkdir(cli->work, 0700), 0);
}

void qkv_cli_close(const qkv_cli *cli)
{
    qkv_test_remove_tmpdir(cli->work);
    qkv_test_remove_tmpdir(cli->root);
}

/* root/name in buf (len bytes). */
static const char *root_file(const qkv_cli *cli, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", cli->root, name);
    return buf;
}

/* The child options of a run: in work, stderr to root/err, no QKV_DATA (the
 * tests give --data or mean its absence), and what opts asks. */
static qkv_child_opts child_opts(const qkv_cli *cli, const qkv_cli_opts *opts, char *out,
                                 char *err, size_t len)
{
    static const qkv_cli_opts none;
    const qkv_cli_opts *o = opts ? opts : &none;
    if (o->stdout_path) /* root/out then stays empty */
        qkv_test_write_file(root_file(cli, "out", out, len), "", 0);
    return (qkv_child_opts){.dir = cli->work,
                            .out_path = o->stdout_path ? o->stdout_path
                                                       : root_file(cli, "out", out, len),
                            .err_path = root_file(cli, "err", err, len),
                            .as_limit = o->as_limit,
                            .fsize_limit = o->fsize_limit,
                            .alarm_s = o->alarm_s,
                            .obey_modes = o->obey_modes,
                            .tmpfs = o->tmpfs,
                            .tmpfs_size = o->tmpfs_size,
                            .keep_writer = o->keep_writer,
                            .unset_env = "QKV_DATA"};
}

pid_t qkv_cli_start(const qkv_cli *cli, const qkv_cli_opts *opts, const char *const *args)
{
    char out[128], err[128];
    qkv_child_opts o = child_opts(cli, opts, out, err, sizeof out);
    return qkv_child_exec(cli->bin, args, &o).pid;
}

qkv_child qkv_cli_start_piped(const qkv_cli *cli, const qkv_cli_opts *opts,
                              const char *const *args)
{
    char out[128], err[128];
    qkv_child_opts o = child_opts(cli, opts, out, err, sizeof out);
    o.out_path = NULL;
    o.pipe_out = true;
    return qkv_child_exec(cli->bin, args, &o);
}

/* What the run that ended with status printed: out (taken) or root/out, and root/err. */
static qkv_cli_result collect(const qkv_cli *cli, int status, char *out)
{
    char path[128];
    qkv_cli_result r = {.status = qkv_child_shell_status(status)};
    r.out = out ? out : qkv_test_read_file(root_file(cli, "out", path, sizeof path), NULL);
    r.err = qkv_test_read_file(root_file(cli, "err", path, sizeof path), NULL);
    return r;
}

qkv_cli_result qkv_cli_wait(const qkv_cli *cli, pid_t pid)
{
    qkv_child run = {.pid = pid, .fd = -1, .writer = -1};
    return collect(cli, qkv_child_wait(&run, -1), NULL);
}

qkv_cli_result qkv_cli_finish(const qkv_cli *cli, qkv_child *run)
{
    int status = qkv_child_wait(run, -1);
    qkv_cli_result r = collect(cli, status, run->out);
    run->out = NULL;
    qkv_child_free(run);
    return r;
}

bool qkv_cli_wait_for(const qkv_cli *cli, const char *text, double seconds)
{
    char path[128];
    root_file(cli, "out", path, sizeof path);
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

void qkv_cli_expect(const qkv_cli_result *r, int status, size_t n, const char *const *parts)
{
    ck_assert_msg(r->status == status, "exit status %d, expected %d; stderr:\n%s", r->status,
                  status, r->err);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(r->err, parts[i]) != NULL, "stderr lacks '%s':\n%s", parts[i], r->err);
}
