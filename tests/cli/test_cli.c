/* The qkv program facing bad input and interruptions: usage errors name the
 * flag and exit 2 before any work; bad data files exit 1 with a message;
 * Ctrl-C saves a checkpoint that resumes exactly where the run stopped; a
 * diverging run stops, naming the step, and keeps a loadable checkpoint.
 * Every case runs $QKV_TEST_BUILD/qkv in a temporary directory. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "testing.h"

static char qkv_bin[4096];     /* absolute path of the program */
static char root[64];          /* the suite's temporary directory */
static char work[128];         /* the program's working directory: must stay empty on errors */
static char data[128];         /* where the corpora live */
static char text_path[256];    /* data/text.txt: a short English text, repeated */

/* ---- files ---- */

static void write_file(const char *path, const void *bytes, size_t n, int repeats)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < repeats; i++)
        ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Remove every file in dir (no subdirectories are made in it). */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char path[512];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            ck_assert_int_eq(remove(path), 0);
        }
    closedir(d);
}

/* ---- the suite's directories and corpora (made by the parent process) ---- */

static const char *TEXT =
    "the quick brown fox jumps over the lazy dog; attention is all you need.\n";

static void make_dirs(void)
{
    qkv_test_program(qkv_bin, sizeof qkv_bin);
    snprintf(root, sizeof root, "/tmp/qkv_cli_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(work, sizeof work, "%s/work", root);
    snprintf(data, sizeof data, "%s/data", root);
    ck_assert_int_eq(mkdir(work, 0700), 0);
    ck_assert_int_eq(mkdir(data, 0700), 0);
    snprintf(text_path, sizeof text_path, "%s/text.txt", data);
    write_file(text_path, TEXT, strlen(TEXT), 60);
    write_file(qkv_test_path(data, "empty.txt"), "", 0, 1);
    write_file(qkv_test_path(data, "short.txt"), "0123456789", 10, 1);
}

static void remove_dirs(void)
{
    empty_dir(work);
    empty_dir(data);
    ck_assert_int_eq(rmdir(work), 0);
    ck_assert_int_eq(rmdir(data), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/out", root);
    remove(path);
    snprintf(path, sizeof path, "%s/err", root);
    remove(path);
    ck_assert_int_eq(rmdir(root), 0);
}

/* Each test starts with an empty working directory. */
static void clean_work(void) { empty_dir(work); }

/* ---- running the program ---- */

/* What a run printed and how it ended. */
typedef struct result {
    int status; /* exit status, or 128 + the signal that ended it */
    char *out;  /* its stdout (malloc'd) */
    char *err;  /* its stderr (malloc'd) */
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
}

/* What the next spawn does differently (reset by every spawn). */
static struct {
    const char *stdout_path; /* stdout to this file (e.g. /dev/full) instead of root/out */
    rlim_t as_limit;         /* RLIMIT_AS of the child, 0 = none */
    rlim_t fsize_limit;      /* RLIMIT_FSIZE (SIGXFSZ ignored: writes fail with EFBIG), 0 = none */
    unsigned alarm_s;        /* seconds before SIGALRM ends a hung child, 0 = 120 */
    int *pipe_writer;        /* also keep the pipe's write end here (to fill the pipe) */
    bool obey_modes;         /* as root: without CAP_DAC_OVERRIDE, so a folder's mode binds */
} child;

/* Start `qkv args...` in the working directory with stdin closed and stderr
 * to root/err; stdout goes to root/out, or to a pipe of one page whose read
 * end is put in *pipe_out when pipe_out is not NULL (a program that prints
 * then blocks until the reader catches up). Returns the child's pid. */
static pid_t spawn(const char *const *args, int *pipe_out)
{
    char out[256], err[256];
    snprintf(out, sizeof out, "%s/out", root);
    snprintf(err, sizeof err, "%s/err", root);
    if (child.stdout_path) /* root/out then stays empty */
        close(open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    int fds[2] = {-1, -1};
    if (pipe_out) {
        ck_assert_int_eq(pipe(fds), 0);
        ck_assert_int_eq(fcntl(fds[1], F_SETPIPE_SZ, 4096), 4096);
    }
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int o = pipe_out ? fds[1]
                         : open(child.stdout_path ? child.stdout_path : out,
                                O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0 || chdir(work) != 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            dup2(in, 0) < 0)
            _exit(127);
        if (pipe_out)
            close(fds[0]);
        unsetenv("QKV_DATA"); /* the default for --data: the tests give it or mean its absence */
        if (child.as_limit)
            setrlimit(RLIMIT_AS, &(struct rlimit){child.as_limit, child.as_limit});
        if (child.fsize_limit) {
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &(struct rlimit){child.fsize_limit, child.fsize_limit});
        }
        /* Out of the bounding set, the capability stays gone across execv; a
         * child that cannot drop it exits 126 and the test says SKIPPED. */
        if (child.obey_modes && prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0)
            _exit(126);
        alarm(child.alarm_s ? child.alarm_s : 120); /* a hung program must not hang the suite */
        char *argv[64];
        int n = 0;
        argv[n++] = qkv_bin;
        for (; args[n - 1] && n < 63; n++)
            argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        execv(qkv_bin, argv);
        _exit(127);
    }
    if (pipe_out) {
        if (child.pipe_writer)
            *child.pipe_writer = fds[1];
        else
            close(fds[1]);
        *pipe_out = fds[0];
    }
    memset(&child, 0, sizeof child);
    return pid;
}

/* Wait for pid and collect what it printed to root/out (unless piped) and root/err. */
static result finish(pid_t pid, char *piped_out)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    char path[256];
    result r = {.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st)};
    snprintf(path, sizeof path, "%s/out", root);
    r.out = piped_out ? piped_out : qkv_test_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/err", root);
    r.err = qkv_test_read_file(path, NULL);
    return r;
}

/* Run `qkv args...` (a NULL-terminated list) to the end. */
static result run_args(const char *const *args) { return finish(spawn(args, NULL), NULL); }

#define RUN(...) run_args((const char *const[]){__VA_ARGS__, NULL})

/* The run must have ended with status and its stderr hold each of the n strings. */
static void expect_run(const result *r, int status, size_t n, const char *const *parts)
{
    ck_assert_msg(r->status == status, "exit status %d, expected %d; stderr:\n%s", r->status,
                  status, r->err);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(strstr(r->err, parts[i]) != NULL, "stderr lacks '%s':\n%s", parts[i], r->err);
}

/* EXPECT(r, status, "a", "b"): r ended with status and its stderr holds "a" and "b"
 * (give "" for no string). */
#define EXPECT(r, status, ...)                                                        \
    expect_run(&(r), (status), sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), \
               (const char *[]){__VA_ARGS__})

/* A small, fast model on one thread. */
#define TINY "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", "--batch", "4", \
             "--eval-iters", "2", "--threads", "1"

/* ======================================================== usage errors */

/* Each bad command line: exit 2, a message naming the flag and a pointer to
 * --help, and nothing written (no checkpoint, no CSV). */
START_TEST(test_usage_errors_exit_2_before_any_work)
{
    const char *text = text_path;
    struct {
        const char *args[12];
        const char *want;
    } cases[] = {
        {{"train", "--data", text, "--bogus"}, "qkv train: unknown option '--bogus'"},
        {{"train", "--data", text, "--lr", "abc"}, "--lr: 'abc' is not a number"},
        {{"train", "--data", text, "--lr", "nan"}, "--lr: 'nan' is not a number"},
        {{"train", "--data", text, "--lr", "inf"}, "--lr: 'inf' is not a number"},
        {{"train", "--data", text, "--lr", "0.001x"}, "--lr: '0.001x' is not a number"},
        {{"train", "--data", text, "--iters"}, "--iters needs a value"},
        {{"train", "--data", text, "--iters", "-5"}, "--iters: -5 is out of range [1, 2147483647]"},
        {{"train", "--data", text, "--iters", "2.5"}, "--iters: '2.5' is not a whole number"},
        {{"train", "--data", text, "--iters", "99999999999"},
         "--iters: 99999999999 is out of range"},
        {{"train", "--data", text, "--iters="}, "--iters: '' is not a whole number"},
        {{"train", "--data", text, "--heads", "5", "--embd", "128"},
         "--heads 5 does not divide --embd 128"},
        {{"train", "--data", text, "--heads", "5"}, "--heads 5 does not divide --embd 128"},
        {{"train", "--data", text, "--dropout", "1"}, "--dropout: 1 is out of range"},
        {{"train", "--data", text, "--threads", "0"}, "--threads: 0 is out of range"},
        {{"train", "--data", text, "--lr", "0.01", "--min-lr", "0.1"},
         "--min-lr 0.1 is above --lr 0.01"},
        {{"train", "--data", text, "--config", "huge"}, "--config: unknown preset 'huge'"},
        {{"train", "--data", text, "extra"}, "unexpected argument 'extra'"},
        {{"train"}, "no training text: give --data FILE or set QKV_DATA"},
        {{"train", "--data", text, "--resume", "run.ckpt", "--lr", "0.1"},
         "--lr cannot change a resumed run"},
        {{"train", "--data", text, "--time", "5m", "--iters", "10"},
         "--time and --iters both set the run's length: give one"},
        {{"train", "--data", text, "--time", "soon"}, "--time: 'soon' is not a duration"},
        {{"train", "--data", text, "--time", "-3s"}, "--time: '-3s' is not a duration"},
        {{"s2s", "train", "--time", "1m", "--steps", "10"},
         "--time and --steps both set the run's length: give one"},
        {{"s2s", "train", "--resume", "s2s.ckpt", "--embd", "8"},
         "--embd cannot change a resumed run"},
        {{"sample", "--ckpt", "x.ckpt", "--temperature", "-1"},
         "qkv sample: --temperature: -1 is out of range [0, 100]"},
        {{"sample", "--ckpt", "x.ckpt", "--top-p", "0"}, "--top-p: 0 is out of range"},
        {{"sample", "--ckpt", "x.ckpt", "--top-k", "-1"}, "--top-k: -1 is out of range"},
        {{"sample", "--ckpt", "x.ckpt", "--tokens", "many"},
         "--tokens: 'many' is not a whole number"},
        {{"sample", "--ckpt", "x.ckpt", "--no-cache=yes"}, "--no-cache takes no value"},
        {{"sample", "--ckpt", "x.ckpt", "--prompt", ""}, "--prompt: the prompt is empty"},
        {{"sample"}, "--ckpt is required"},
        {{"eval", "--ckpt", "x.ckpt"}, "qkv eval: no text: give --data FILE or set QKV_DATA"},
        {{"eval", "--ckpt", "x.ckpt", "--data", text, "--batch", "0"},
         "--batch: 0 is out of range"},
        {{"frobnicate"}, "qkv: unknown command 'frobnicate'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = run_args(cases[i].args);
        EXPECT(r, 2, cases[i].want);
        if (strcmp(cases[i].args[0], "frobnicate") != 0)
            ck_assert_msg(strstr(r.err, "--help'."), "case %zu: no pointer to --help:\n%s", i,
                          r.err);
        ck_assert_msg(r.out[0] == 0, "case %zu printed to stdout:\n%s", i, r.out);
        ck_assert_msg(qkv_test_listing(work)[0] == 0, "case %zu wrote files:%s", i,
                      qkv_test_listing(work));
        result_free(&r);
    }
    /* No command at all is a usage error too; --help is not an error. */
    result r = run_args((const char *const[]){NULL});
    EXPECT(r, 2, "usage: qkv COMMAND");
    result_free(&r);
    r = RUN("train", "--help");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "--iters N"));
    result_free(&r);
}
END_TEST

/* ======================================================== bad data */

/* A tiny model trained on text.txt for a few steps, saved as work/name. */
static void train_tiny(const char *name)
{
    result r = RUN("train", "--data", text_path, TINY, "--iters", "4", "--eval-every", "4", "--out",
                   name);
    EXPECT(r, 0, "");
    result_free(&r);
}

START_TEST(test_bad_data_exits_1_with_a_message)
{
    char empty[256], short_text[256];
    snprintf(empty, sizeof empty, "%s/empty.txt", data);
    snprintf(short_text, sizeof short_text, "%s/short.txt", data);
    struct {
        const char *args[8];
        const char *want[2];
    } cases[] = {
        {{"train", "--data", "missing.txt"},
         {"cannot open 'missing.txt': No such file or directory"}},
        {{"train", "--data", empty}, {"corpus '", "empty.txt' is empty"}},
        {{"train", "--data", data}, {"Is a directory"}},
        {{"train", "--data", "/dev/null"}, {"cannot read '/dev/null': not a regular file"}},
        {{"train", "--data", short_text},
         {"the train split has 9 tokens, fewer than block size + 1 = 17", "smaller block size"}},
        {{"sample", "--ckpt", "absent.ckpt"}, {"cannot open 'absent.ckpt'"}},
        {{"sample", "--ckpt", text_path}, {"is not a qkv checkpoint: bad magic"}},
        {{"eval", "--ckpt", "absent.ckpt", "--data", text_path}, {"cannot open 'absent.ckpt'"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[24];
        size_t n = 0;
        for (; cases[i].args[n]; n++)
            args[n] = cases[i].args[n];
        if (strcmp(args[0], "train") == 0) { /* the tiny model, so only the data can be wrong */
            const char *tiny[] = {TINY};
            for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++)
                args[n++] = tiny[k];
        }
        args[n] = NULL;
        result r = run_args(args);
        EXPECT(r, 1, cases[i].want[0], cases[i].want[1] ? cases[i].want[1] : "");
        ck_assert_msg(qkv_test_listing(work)[0] == 0, "case %zu wrote files:%s", i,
                      qkv_test_listing(work));
        result_free(&r);
    }
}
END_TEST

START_TEST(test_text_outside_the_vocabulary)
{
    train_tiny("run.ckpt");
    /* A prompt character the model never saw. */
    result r = RUN("sample", "--ckpt", "run.ckpt", "--prompt", "the Zebra", "--tokens", "5");
    EXPECT(r, 1, "qkv sample: --prompt: qkv_encode: character 'Z' at position 4 is not in the "
                 "vocabulary");
    result_free(&r);
    /* Evaluating or resuming on a text with other characters. */
    const char *other = "THE QUICK BROWN FOX\n";
    char upper[256];
    snprintf(upper, sizeof upper, "%s/upper.txt", data);
    write_file(upper, other, strlen(other), 20);
    r = RUN("eval", "--ckpt", "run.ckpt", "--data", upper, "--threads", "1");
    EXPECT(r, 1, "upper.txt", "encode: character 'T' at position 0 is not in the vocabulary");
    result_free(&r);
    r = RUN("train", "--resume", "run.ckpt", "--data", upper, "--iters", "8");
    EXPECT(r, 1, "character 'T' at position 0");
    result_free(&r);
    /* A truncated checkpoint says so. */
    size_t n;
    char *bytes = qkv_test_read_file(qkv_test_path(work, "run.ckpt"), &n);
    write_file(qkv_test_path(work, "cut.ckpt"), bytes, n / 2, 1);
    free(bytes);
    r = RUN("sample", "--ckpt", "cut.ckpt");
    EXPECT(r, 1, "checkpoint 'cut.ckpt' is truncated");
    result_free(&r);
}
END_TEST

/* The tokenizer is byte-level: text that is not UTF-8 (Latin-1 accents, a
 * stray continuation byte, a NUL) trains and samples like any other, one
 * token per byte, and a prompt may hold such bytes too. */
START_TEST(test_bytes_that_are_not_utf8_are_accepted)
{
    const char latin1[] = "caf\xe9 cr\xe8me br\xfbl\xe9\x80\xff e\0x na\xefve r\xe9sum\xe9.\n";
    char path[256], want[64];
    snprintf(path, sizeof path, "%s/latin1.txt", data);
    write_file(path, latin1, sizeof latin1 - 1, 30);
    bool seen[256] = {false};
    int distinct = 0;
    for (size_t i = 0; i < sizeof latin1 - 1; i++)
        if (!seen[(unsigned char)latin1[i]]) {
            seen[(unsigned char)latin1[i]] = true;
            distinct++;
        }
    result r = RUN("train", "--data", path, TINY, "--iters", "5", "--eval-every", "5", "--out",
                   "l1.ckpt");
    EXPECT(r, 0, "");
    snprintf(want, sizeof want, "vocabulary %d,", distinct);
    ck_assert_msg(strstr(r.out, want), "'%s' not in:\n%s", want, r.out);
    result_free(&r);
    r = RUN("sample", "--ckpt", "l1.ckpt", "--prompt", "caf\xe9", "--tokens", "40", "--threads",
            "1");
    EXPECT(r, 0, "40 tokens");
    ck_assert_msg(strncmp(r.out, "caf\xe9", 4) == 0, "sample output: %s", r.out);
    /* Every byte written is one of the corpus's (the NUL aside, which ends this check). */
    for (const char *c = r.out; *c; c++)
        ck_assert_msg(memchr(latin1, *c, sizeof latin1 - 1) || *c == '\n',
                      "byte 0x%02x is not in the corpus", (unsigned char)*c);
    result_free(&r);
}
END_TEST

/* ======================================================== interrupted and diverging runs */

/* The checkpoints a and b in the working directory hold the same bytes. */
static void assert_same_checkpoint(const char *a, const char *b)
{
    size_t n_a, n_b;
    char *bytes_a = qkv_test_read_file(qkv_test_path(work, a), &n_a);
    char *bytes_b = qkv_test_read_file(qkv_test_path(work, b), &n_b);
    ck_assert_uint_eq(n_a, n_b);
    ck_assert_msg(memcmp(bytes_a, bytes_b, n_a) == 0,
                  "the resumed run's checkpoint %s differs from the uninterrupted run's %s", b, a);
    free(bytes_a);
    free(bytes_b);
}

/* Ctrl-C stops after the current step, saves, says how to resume and exits
 * 130; resuming with the printed command ends in the very same checkpoint,
 * byte for byte, as a run that was never interrupted. */
START_TEST(test_sigint_saves_and_resume_continues_exactly)
{
    const char *text = text_path;
#define RUN_FLAGS "--data", text, TINY, "--iters", "400", "--eval-every", "200", "--log-every", "1"
    result r = RUN("train", RUN_FLAGS, "--out", "full.ckpt");
    EXPECT(r, 0, "");
    result_free(&r);

    int fd;
    pid_t pid = spawn((const char *const[]){"train", RUN_FLAGS, "--out", "run.ckpt", NULL}, &fd);
    /* Read stdout until the first progress line, then interrupt. A progress
     * line every step fills the one-page pipe within some 50 steps, and the
     * program then waits for this reader: it cannot finish the run first. */
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    bool sent = false;
    for (ssize_t got;
         (got = read(fd, out + len, cap - 1 - len)) > 0 || (got < 0 && errno == EINTR);) {
        len += got > 0 ? (size_t)got : 0;
        out[len] = 0;
        if (!sent && strstr(out, "\nstep ")) {
            ck_assert_int_eq(kill(pid, SIGINT), 0);
            sent = true;
        }
        if (len + 1 >= cap)
            ck_assert_ptr_nonnull(out = realloc(out, cap *= 2));
    }
    close(fd);
    r = finish(pid, out);
    ck_assert_msg(sent, "no progress line:\n%s", r.out);
    EXPECT(r, 130, "qkv: stopping: the run saves and ends after this step");
    long step = -1;
    const char *at = strstr(r.out, "interrupted at step ");
    ck_assert_msg(at && sscanf(at, "interrupted at step %ld", &step) == 1, "stdout:\n%s", r.out);
    ck_assert_msg(step >= 1 && step < 400, "interrupted at step %ld", step);
    ck_assert_ptr_nonnull(strstr(at, ": saved run.ckpt\n"));
    char resume_hint[512];
    snprintf(resume_hint, sizeof resume_hint,
             "resume with: qkv train --resume run.ckpt --data %s\n", text);
    ck_assert_msg(strstr(at, resume_hint), "no resume hint in:\n%s", at);
    ck_assert_ptr_null(strstr(r.out, "done:"));
    result_free(&r);

    qkv_tokenizer vocab;
    qkv_checkpoint *ck = qkv_checkpoint_open(qkv_test_path(work, "run.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, step);
    qkv_checkpoint_close(ck);

    /* The printed command, with the settings a run does not save: how often
     * it evaluates (which draws evaluation batches) and logs, and its thread count. */
    r = RUN("train", "--resume", "run.ckpt", "--data", text, "--eval-every", "200", "--log-every",
            "1", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    ck_assert_ptr_nonnull(strstr(r.out, "done: "));
    result_free(&r);
    assert_same_checkpoint("full.ckpt", "run.ckpt");
    size_t n_full, n_run;
    char *full, *run;
    /* The loss log continues the saved run's: the same rows as the uninterrupted run's. */
    full = qkv_test_read_file(qkv_test_path(work, "full.ckpt.csv"), &n_full);
    run = qkv_test_read_file(qkv_test_path(work, "run.ckpt.csv"), &n_run);
    size_t same = 0;
    while (same < n_full && same < n_run && full[same] == run[same])
        same++;
    ck_assert_msg(n_full == n_run && same == n_full,
                  "the resumed run's loss log differs from the uninterrupted run's at byte %zu: "
                  "\"%.60s\" vs \"%.60s\"", same, full + same, run + same);
    free(full);
    free(run);
    qkv_gpt *m = qkv_gpt_load(qkv_test_path(work, "run.ckpt"), &vocab);
    ck_assert_qkv(m);
    qkv_gpt_free(m);
#undef RUN_FLAGS
}
END_TEST

/* The `[ms]s` after "done: N steps in " in a run's output, or -1. */
static double done_seconds(const char *out)
{
    const char *at = strstr(out, "done: ");
    long steps;
    double secs;
    return at && sscanf(at, "done: %ld steps in %lfs", &steps, &secs) == 2 ? secs : -1;
}

/* --time: the run ends on its budget, evaluations and the final save
 * included, with the schedule ended (the last step at min_lr, the saved run
 * as long as the steps it took); resumed with --time it trains that much more. */
START_TEST(test_time_budget_ends_on_time_with_the_schedule_done)
{
    const double budget = 3;
    result r = RUN("train", "--data", text_path, TINY, "--time", "3s", "--eval-every", "300",
                   "--log-every", "1", "--warmup", "5", "--min-lr", "2e-05", "--out", "t.ckpt");
    EXPECT(r, 0, "");
    double secs = done_seconds(r.out);
    ck_assert_msg(secs > budget - 0.5 && secs < budget + 0.5, "a %gs budget took %gs:\n%s",
                  budget, secs, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "elapsed "));
    /* Its last evaluation read the whole validation split, inside the budget. */
    ck_assert_ptr_nonnull(strstr(r.out, "val loss "));
    ck_assert_msg(strstr(r.out, " +- ") && strstr(r.out, "(the whole split)"), "%s", r.out);
    /* The last progress line's lr is the schedule's floor. */
    const char *last = NULL;
    for (const char *p = r.out; (p = strstr(p, "\nstep ")); p++)
        last = p + 1;
    ck_assert_ptr_nonnull(last);
    long step, total;
    double loss, lr;
    ck_assert_int_eq(sscanf(last, "step %ld/%ld loss %lf lr %lf", &step, &total, &loss, &lr), 4);
    ck_assert_int_eq(step, total);
    ck_assert_msg(step > 100, "only %ld steps in %gs", step, budget);
    ck_assert_msg(fabs(lr - 2e-05) < 1e-07, "the lr ended at %g, not at --min-lr 2e-05", lr);
    result_free(&r);
    qkv_checkpoint *ck = qkv_checkpoint_open(qkv_test_path(work, "t.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, step);
    qkv_train_config tc;
    ck_assert_qkv(qkv_training_config_load(&tc, ck, QKV_GPT_CONFIG_BYTES) == 0 ? ck : NULL);
    ck_assert_int_eq(tc.iters, step); /* the saved schedule ends where the run did */
    qkv_checkpoint_close(ck);

    r = RUN("train", "--resume", "t.ckpt", "--data", text_path, "--time", "1", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    secs = done_seconds(r.out);
    ck_assert_msg(secs > 0.5 && secs < 1.5, "a 1s resumed budget took %gs:\n%s", secs, r.out);
    result_free(&r);
    ck_assert_qkv(ck = qkv_checkpoint_open(qkv_test_path(work, "t.ckpt"), "gpt"));
    ck_assert_int_gt(ck->step, step);
    qkv_checkpoint_close(ck);
}
END_TEST

/* qkv s2s train --resume: 8 steps straight, or 4, stop, resume, 4 more: the
 * same checkpoint, byte for byte. */
START_TEST(test_s2s_resume_continues_exactly)
{
#define S2S_FLAGS "--layers", "1", "--heads", "2", "--embd", "16", "--batch", "4", \
                  "--eval-iters", "1", "--eval-every", "4", "--dropout", "0.1", "--threads", "1"
    result r = RUN("s2s", "train", S2S_FLAGS, "--steps", "8", "--out", "full.ckpt");
    EXPECT(r, 0, "");
    result_free(&r);
    r = RUN("s2s", "train", S2S_FLAGS, "--steps", "4", "--out", "run.ckpt");
    EXPECT(r, 0, "");
    result_free(&r);
    r = RUN("s2s", "train", "--resume", "run.ckpt", "--steps", "8", "--eval-every", "4",
            "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "(resumed)"));
    ck_assert_ptr_nonnull(strstr(r.out, "done: 4 steps"));
    result_free(&r);
    assert_same_checkpoint("full.ckpt", "run.ckpt");
    r = RUN("s2s", "eval", "--ckpt", "run.ckpt", "--n", "4", "--threads", "1");
    EXPECT(r, 0, "");
    result_free(&r);
#undef S2S_FLAGS
}
END_TEST

/* A learning rate that blows the weights up: the run stops with a message
 * naming the step, exits 1, and the checkpoint left behind loads and holds
 * only finite weights. */
/* The losses on the progress lines of r's stdout, n of them, into loss. */
static void step_losses(const result *r, double *loss, int n)
{
    const char *at = r->out;
    for (int i = 0; i < n; i++) {
        ck_assert_msg((at = strstr(at, "  loss ")) && sscanf(at, "  loss %lf", &loss[i]) == 1,
                      "progress line %d missing in:\n%s", i + 1, r->out);
        at++;
    }
}

/* --grad-accum K with --batch B is a step of K·B sequences: the same
 * batches, the same losses (to the 4 digits printed), and the plan says
 * so; a resumed run keeps it and cannot change it. */
START_TEST(test_grad_accum_is_a_larger_batch_in_the_memory_of_one)
{
#define SMALL "--data", text_path, "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", \
              "--eval-iters", "1", "--threads", "1", "--log-every", "1", "--eval-every", "3"
    result whole = RUN("train", SMALL, "--batch", "8", "--iters", "3", "--out", "whole.ckpt");
    EXPECT(whole, 0, "");
    result micro = RUN("train", SMALL, "--batch", "4", "--grad-accum", "2", "--iters", "3",
                       "--out", "micro.ckpt");
    EXPECT(micro, 0, "");
    ck_assert_msg(strstr(micro.out, "3 steps of 2 micro-batches of 4 x 16 tokens"), "plan:\n%s",
                  micro.out);
    double a[3], b[3];
    step_losses(&whole, a, 3);
    step_losses(&micro, b, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(a[i] - b[i]) < 2e-4, "step %d: loss %.4f with --batch 8, %.4f with "
                      "--batch 4 --grad-accum 2", i + 1, a[i], b[i]);
    result_free(&whole);
    result_free(&micro);
    result resumed = RUN("train", "--resume", "micro.ckpt", "--data", text_path, "--iters", "4");
    EXPECT(resumed, 0, "");
    ck_assert_msg(strstr(resumed.out, "2 micro-batches of 4 x 16 tokens"), "plan:\n%s",
                  resumed.out);
    result_free(&resumed);
    result changed = RUN("train", "--resume", "micro.ckpt", "--data", text_path, "--grad-accum",
                         "3");
    EXPECT(changed, 2, "--grad-accum cannot change a resumed run");
    result_free(&changed);
#undef SMALL
}
END_TEST

START_TEST(test_diverging_run_stops_and_keeps_a_good_checkpoint)
{
    result r = RUN("train", "--data", text_path, TINY, "--iters", "200",
                   "--eval-every", "2", "--lr", "10", "--min-lr", "1", "--warmup", "0",
                   "--weight-decay", "10", "--out", "div.ckpt");
    EXPECT(r, 1, "qkv train: step ", "stopping before it reaches the weights");
    ck_assert_ptr_null(strstr(r.out, "done:"));
    ck_assert_msg(!strstr(r.err, "nan"), "printf's nan in: %s", r.err); /* "NaN (not a number)" */
    result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(qkv_test_path(work, "div.ckpt"), &vocab);
    ck_assert_qkv(m);
    for (size_t i = 0; i < m->params->total; i++)
        ck_assert_msg(isfinite(m->params->data[i]), "value %zu is %g", i,
                      (double)m->params->data[i]);
    qkv_gpt_free(m);
}
END_TEST

/* ======================================================== files: nothing the program does destroys one */

/* The bytes of work/name (malloc'd) and their number. */
static char *work_bytes(const char *name, size_t *n) { return qkv_test_read_file(qkv_test_path(work, name), n); }

/* work/name must hold exactly the n bytes of want. */
static void expect_unchanged(const char *name, const char *want, size_t n)
{
    size_t m;
    char *now = work_bytes(name, &m);
    ck_assert_msg(m == n && memcmp(now, want, n) == 0, "%s was changed", name);
    free(now);
}

/* Write work/to: the file work/from with n bytes at `at` set to x
 * (little-endian) and a fresh checksum, so the loader's later checks run. */
static void patch_checkpoint(const char *from, const char *to, size_t at, uint64_t x, int n)
{
    size_t len;
    char *b = work_bytes(from, &len);
    ck_assert_uint_ge(len, at + (size_t)n + 4);
    for (int i = 0; i < n; i++)
        b[at + (size_t)i] = (char)(x >> (8 * i));
    uint32_t crc = qkv_crc32(0, b, len - 4);
    for (int i = 0; i < 4; i++)
        b[len - 4 + (size_t)i] = (char)(crc >> (8 * i));
    write_file(qkv_test_path(work, to), b, len, 1);
    free(b);
}

/* A run whose stdout is a one-page pipe that this process reads. */
typedef struct piped {
    pid_t pid;
    int fd;
    char *out;      /* what it printed so far (NUL-terminated) */
    size_t len, cap;
} piped;

/* Read more of p's stdout; false at its end. */
static bool read_more(piped *p)
{
    if (p->len + 4097 > p->cap)
        ck_assert_ptr_nonnull(p->out = realloc(p->out, p->cap = 2 * p->cap + 4097));
    ssize_t got;
    while ((got = read(p->fd, p->out + p->len, 4096)) < 0 && errno == EINTR)
        ;
    if (got <= 0)
        return false;
    p->len += (size_t)got;
    p->out[p->len] = 0;
    return true;
}

/* Start `qkv args...` with its stdout piped, and read it until it holds want. */
static piped start_until(const char *const *args, const char *want)
{
    piped p = {.cap = 4097};
    p.pid = spawn(args, &p.fd);
    ck_assert_ptr_nonnull(p.out = calloc(p.cap, 1));
    while (!strstr(p.out, want))
        ck_assert_msg(read_more(&p), "the run ended before printing '%s':\n%s", want, p.out);
    return p;
}

/* Read the rest of p's stdout and wait for it. */
static result drain(piped *p)
{
    while (read_more(p))
        ;
    close(p->fd);
    return finish(p->pid, p->out);
}

/* The number of lines of work/name (0 if it does not exist); each must be whole. */
static int csv_rows(const char *name)
{
    if (access(qkv_test_path(work, name), F_OK) != 0)
        return 0;
    size_t n;
    char *b = work_bytes(name, &n);
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += b[i] == '\n';
    free(b);
    return lines;
}

/* A long run of the tiny model, one progress line per step, saving to out. */
#define LONG_RUN(out) "train", "--data", text_path, TINY, "--iters", "400", "--eval-every", "1000", \
                      "--log-every", "1", "--out", out, NULL

/* Item 1: an --out that exists but is not a regular file (a FIFO, a directory,
 * as root a device node) is refused before any work and left as it is, by
 * qkv train and qkv s2s train. */
START_TEST(test_out_that_is_not_a_regular_file_is_refused)
{
    char fifo[256], dir[256], node[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", work);
    snprintf(dir, sizeof dir, "%s/adir", work);
    snprintf(node, sizeof node, "%s/node", work);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    bool root_user = geteuid() == 0;
    if (root_user) /* the numbers of /dev/null: harmless even if written */
        ck_assert_int_eq(mknod(node, S_IFCHR | 0600, makedev(1, 3)), 0);
    else
        printf("SKIPPED: the device-node case of --out needs root (mknod)\n");
    const char *names[] = {"fifo", "adir", "node"};
    const mode_t kinds[] = {S_IFIFO, S_IFDIR, S_IFCHR};
    for (int i = 0; i < (root_user ? 3 : 2); i++) {
        result r = RUN("train", "--data", text_path, TINY, "--iters", "2", "--out", names[i]);
        EXPECT(r, 1, "only ever replaces regular files", names[i]);
        ck_assert_msg(r.out[0] == 0, "it trained:\n%s", r.out);
        result_free(&r);
        r = RUN("s2s", "train", "--steps", "2", "--out", names[i]);
        EXPECT(r, 1, "only ever replaces regular files");
        result_free(&r);
        struct stat st;
        ck_assert_int_eq(lstat(qkv_test_path(work, names[i]), &st), 0);
        ck_assert_msg((st.st_mode & S_IFMT) == kinds[i], "%s was replaced", names[i]);
    }
    ck_assert_str_eq(qkv_test_listing(work), root_user ? " adir fifo node" : " adir fifo");
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Item 2: an --out (or its CKPT.csv) that is the same file as --data, under
 * any name, is refused and the corpus is left as it was. */
START_TEST(test_out_that_is_an_input_is_refused)
{
    size_t n;
    char *text = qkv_test_read_file(text_path, &n);
    write_file(qkv_test_path(work, "c.txt"), text, n, 1);
    ck_assert_int_eq(link(qkv_test_path(work, "c.txt"), qkv_test_path(work, "link.txt")), 0);
    write_file(qkv_test_path(work, "run.csv"), text, n, 1);
    const char *cases[][3] = {{"c.txt", "c.txt", "'c.txt': it is the same file as the input"},
                              {"c.txt", "link.txt", "'link.txt': it is the same file as the input"},
                              {"run.csv", "run", "'run.csv': it is the same file as the input"}};
    for (int i = 0; i < 3; i++) {
        result r = RUN("train", "--data", cases[i][0], TINY, "--iters", "2", "--out", cases[i][1]);
        EXPECT(r, 1, cases[i][2]);
        result_free(&r);
        expect_unchanged(cases[i][0], text, n);
    }
    ck_assert_str_eq(qkv_test_listing(work), " c.txt link.txt run.csv");
    free(text);
    /* qkv attn's picture must not replace the checkpoint it reads. */
    train_tiny("a.ckpt");
    char *ckpt = work_bytes("a.ckpt", &n);
    result r = RUN("attn", "--ckpt", "a.ckpt", "--text", "the", "--out", "a.ckpt");
    EXPECT(r, 1, "'a.ckpt': it is the same file as the input");
    result_free(&r);
    expect_unchanged("a.ckpt", ckpt, n);
    free(ckpt);
}
END_TEST

/* Item 3: a new run refuses an existing --out without --force; with --force,
 * a run that fails at its first step (out of memory here) saves nothing. */
START_TEST(test_a_new_run_never_replaces_a_trained_checkpoint)
{
    train_tiny("good.ckpt");
    size_t n;
    char *good = work_bytes("good.ckpt", &n);
    result r = RUN("train", "--data", text_path, TINY, "--iters", "2", "--out", "good.ckpt");
    EXPECT(r, 1, "'good.ckpt' exists already", "--resume good.ckpt", "--force");
    ck_assert_msg(r.out[0] == 0, "it trained:\n%s", r.out);
    result_free(&r);
    r = RUN("s2s", "train", "--steps", "2", "--out", "good.ckpt");
    EXPECT(r, 1, "'good.ckpt' exists already", "--force");
    result_free(&r);
    expect_unchanged("good.ckpt", good, n);

    child.as_limit = (rlim_t)1 << 30; /* the first step's activations do not fit */
    r = RUN("train", "--data", text_path, TINY, "--batch", "100000", "--iters", "1", "--out",
            "good.ckpt", "--force");
    if (strstr(r.err, "Sanitizer")) {
        printf("SKIPPED: a failed first step under a memory limit (the sanitizers need more "
               "address space)\n");
    } else {
        EXPECT(r, 1, "out of memory");
        ck_assert_ptr_null(strstr(r.err, "saved"));
    }
    result_free(&r);
    expect_unchanged("good.ckpt", good, n);
    free(good);
}
END_TEST

/* Item 4: while one run writes a checkpoint, a second run (train or s2s
 * train) writing the same path fails at once, and the first ends well. */
START_TEST(test_a_second_run_writing_the_same_checkpoint_fails_at_once)
{
    /* Once it trains, it holds the lock. */
    piped first = start_until((const char *const[]){LONG_RUN("same.ckpt")}, "\nstep ");
    /* (It saves only at its end, so same.ckpt does not exist yet: no --force needed.) */
    result r = RUN("train", "--data", text_path, TINY, "--iters", "2", "--out", "same.ckpt");
    EXPECT(r, 1, "'same.ckpt' is being written by another process");
    result_free(&r);
    r = RUN("s2s", "train", "--steps", "2", "--out", "same.ckpt");
    EXPECT(r, 1, "'same.ckpt' is being written by another process");
    result_free(&r);
    r = drain(&first);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "done: "));
    result_free(&r);
    qkv_checkpoint *ck = qkv_checkpoint_open(qkv_test_path(work, "same.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 400);
    qkv_checkpoint_close(ck);
    ck_assert_str_eq(qkv_test_listing(work), " same.ckpt same.ckpt.csv same.ckpt.svg");
}
END_TEST

/* Item 5: an --out that cannot be written is found before any training. */
START_TEST(test_an_unusable_out_is_found_before_any_work)
{
    char in_file[300];
    snprintf(in_file, sizeof in_file, "%s/x.ckpt", text_path);
    const char *cases[][2] = {{"missing-dir/x.ckpt", "No such file or directory"},
                              {"", "the file name is empty"},
                              {"/proc/qkv-test.ckpt", "cannot create a file beside it"},
                              {in_file, "Not a directory"},
                              {".", "it is a directory"}};
    for (int i = 0; i < 5; i++) {
        result r = RUN("train", "--data", text_path, TINY, "--iters", "2", "--out", cases[i][0]);
        EXPECT(r, 1, "qkv train: --out: ", cases[i][1]);
        ck_assert_msg(r.out[0] == 0, "case %d trained first:\n%s", i, r.out);
        result_free(&r);
        r = RUN("s2s", "train", "--steps", "2", "--out", cases[i][0]);
        EXPECT(r, 1, "qkv s2s train: --out: ", cases[i][1]);
        ck_assert_msg(r.out[0] == 0, "case %d trained first:\n%s", i, r.out);
        result_free(&r);
    }
    /* A folder without write permission: root writes anyway, so as root the
     * run goes without CAP_DAC_OVERRIDE, as an ordinary user would. */
    char locked[256];
    snprintf(locked, sizeof locked, "%s/locked", work);
    ck_assert_int_eq(mkdir(locked, 0500), 0);
    child.obey_modes = geteuid() == 0;
    result r = RUN("train", "--data", text_path, TINY, "--iters", "2", "--out", "locked/x");
    if (r.status == 126) {
        printf("SKIPPED: --out in a read-only folder (root cannot drop CAP_DAC_OVERRIDE here)\n");
    } else {
        EXPECT(r, 1, "qkv train: --out: ", "Permission denied");
        ck_assert_msg(r.out[0] == 0, "it trained first:\n%s", r.out);
    }
    result_free(&r);
    ck_assert_int_eq(rmdir(locked), 0);
    ck_assert_str_eq(qkv_test_listing(work), "");
}
END_TEST

/* Item 6: SIGTERM stops like Ctrl-C (save, exit 143); the loss log is
 * written as the run goes, so SIGKILL loses at most a line, and a resumed
 * run continues it. */
START_TEST(test_sigterm_saves_and_the_log_is_written_as_it_goes)
{
    piped p = start_until((const char *const[]){LONG_RUN("kill.ckpt")}, "step     20/");
    int rows = csv_rows("kill.ckpt.csv"); /* the header and steps 1..19 at least */
    ck_assert_msg(rows >= 20, "kill.ckpt.csv has %d lines at step 20", rows);
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    result r = drain(&p);
    ck_assert_int_eq(r.status, 128 + SIGKILL);
    ck_assert_int_ge(csv_rows("kill.ckpt.csv"), rows);
    result_free(&r);

    p = start_until((const char *const[]){LONG_RUN("term.ckpt")}, "\nstep ");
    ck_assert_int_eq(kill(p.pid, SIGTERM), 0);
    r = drain(&p);
    EXPECT(r, 143, "qkv: stopping");
    long step = -1;
    const char *at = strstr(r.out, "interrupted at step ");
    ck_assert_msg(at && sscanf(at, "interrupted at step %ld", &step) == 1, "stdout:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(at, ": saved term.ckpt\n"));
    result_free(&r);
    ck_assert_int_eq(csv_rows("term.ckpt.csv"), 1 + step);
    r = RUN("train", "--resume", "term.ckpt", "--data", text_path, "--eval-every", "1000",
            "--log-every", "1", "--threads", "1");
    EXPECT(r, 0, "");
    result_free(&r);
    ck_assert_int_eq(csv_rows("term.ckpt.csv"), 1 + 400);
    size_t n;
    char *csv = work_bytes("term.ckpt.csv", &n);
    const char *line = strchr(csv, '\n') + 1; /* the steps run 1..400, each once */
    for (long s = 1; s <= 400; s++, line = strchr(line, '\n') + 1)
        ck_assert_msg(strtol(line, NULL, 10) == s, "row %ld of the log is step %ld", s,
                      strtol(line, NULL, 10));
    free(csv);
}
END_TEST

/* Item 7: the first Ctrl-C says at once that the run is stopping (here while
 * it waits on a full stdout); more signals only say so again and never cut
 * the save short; the run saves and exits 130. */
START_TEST(test_ctrl_c_says_so_at_once_and_more_signals_keep_the_save)
{
    /* The test fills the run's stdout and stops reading, so the run cannot
     * end (it must still print where it stopped) until drain() reads: the
     * later signals are certain to reach it before it exits. */
    int writer = -1;
    child.pipe_writer = &writer;
    piped p = start_until((const char *const[]){LONG_RUN("int.ckpt")}, "\nstep ");
    qkv_test_fill_pipe(writer);
    char err_path[256];
    snprintf(err_path, sizeof err_path, "%s/err", root);
    ck_assert_int_eq(kill(p.pid, SIGINT), 0);
    char *err = NULL;
    for (int i = 0; i < 2000 && !(err && strstr(err, "qkv: stopping")); i++) {
        free(err);
        usleep(10000);
        err = qkv_test_read_file(err_path, NULL);
    }
    ck_assert_msg(strstr(err, "qkv: stopping"), "nothing said within 20 s: '%s'", err);
    free(err);
    ck_assert_int_eq(kill(p.pid, SIGINT), 0);
    ck_assert_int_eq(kill(p.pid, SIGTERM), 0);
    ck_assert_int_eq(kill(p.pid, SIGINT), 0);
    result r = drain(&p);
    EXPECT(r, 130, "qkv: stopping");
    ck_assert_msg(strstr(r.err, "qkv: already stopping") || strstr(r.err, "qkv: saving"),
                  "stderr:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, ": saved int.ckpt\n"));
    result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(qkv_test_path(work, "int.ckpt"), &vocab);
    ck_assert_qkv(m);
    qkv_gpt_free(m);
}
END_TEST

/* A tiny encoder-decoder trained for two steps, saved as work/name. */
static void train_tiny_s2s(const char *name)
{
    result r = RUN("s2s", "train", "--steps", "2", "--layers", "1", "--heads", "2", "--embd", "16",
                   "--batch", "4", "--eval-iters", "1", "--threads", "1", "--out", name);
    EXPECT(r, 0, "");
    result_free(&r);
}

/* Item 8: output that cannot be written is an error naming it: stdout on a
 * full device for every command, a checkpoint on a full disk. */
START_TEST(test_write_errors_are_errors_naming_the_file)
{
    train_tiny("w.ckpt");
    train_tiny_s2s("s.ckpt");
    const char *cases[][24] = {
        {"sample", "--ckpt", "w.ckpt", "--tokens", "2000", "--threads", "1"},
        {"eval", "--ckpt", "w.ckpt", "--data", text_path, "--eval-iters", "2", "--threads", "1"},
        {"s2s", "run", "--ckpt", "s.ckpt", "March 3rd, 1998"},
        {"lab", "example"},
        {"train", "--data", text_path, TINY, "--iters", "2", "--out", "w2.ckpt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        child.stdout_path = "/dev/full";
        result r = run_args(cases[i]);
        EXPECT(r, 1, "cannot write to standard output: No space left on device");
        ck_assert_ptr_null(strstr(r.err, "tokens/s")); /* no success reported */
        result_free(&r);
    }
    child.fsize_limit = 16384; /* the checkpoint does not fit */
    result r = RUN("train", "--data", text_path, TINY, "--iters", "4", "--eval-every", "2",
                   "--out", "full.ckpt");
    EXPECT(r, 1, "cannot write 'full.ckpt': File too large");
    result_free(&r);
    ck_assert_int_eq(access(qkv_test_path(work, "full.ckpt"), F_OK), -1);
    ck_assert_ptr_null(strstr(qkv_test_listing(work), ".tmp"));
}
END_TEST

/* Item 9: a FIFO where a file is read is refused at once, never waited on. */
START_TEST(test_a_fifo_is_refused_without_blocking)
{
    train_tiny("r.ckpt");
    ck_assert_int_eq(mkfifo(qkv_test_path(work, "f"), 0600), 0);
    ck_assert_int_eq(unlink(qkv_test_path(work, "r.ckpt.csv")), 0);
    ck_assert_int_eq(mkfifo(qkv_test_path(work, "r.ckpt.csv"), 0600), 0);
    const char *cases[][24] = {
        {"train", "--data", "f", TINY},
        {"sample", "--ckpt", "f"},
        {"eval", "--ckpt", "r.ckpt", "--data", "f"},
        {"train", "--resume", "f", "--data", text_path, "--out", "other.ckpt"},
        {"train", "--resume", "r.ckpt", "--data", text_path, "--iters", "8"},
        {"s2s", "run", "--ckpt", "f", "x"},
        {"attn", "--ckpt", "f", "--text", "the"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        child.alarm_s = 10;
        result r = run_args(cases[i]);
        EXPECT(r, 1, "FIFO");
        result_free(&r);
    }
}
END_TEST

/* Items 10 and 14: a checkpoint that passes its checksum but lies (a
 * negative step, a NaN weight, a control byte in its kind) is refused by
 * every command, with a message that prints no raw control byte. */
START_TEST(test_a_checkpoint_that_lies_is_refused)
{
    train_tiny("lie.ckpt");
    size_t n;
    char *b = work_bytes("lie.ckpt", &n);
    const char *wte = memmem(b, n, "\x0a\0\0\0wte.weight", 14);
    ck_assert_ptr_nonnull(wte);
    size_t first_value = (size_t)(wte - b) + 4 + 10 + 4 + 2 * 4;
    free(b);
    patch_checkpoint("lie.ckpt", "neg.ckpt", n - 4 - (4 + 4 * 32) - 8, (uint64_t)-1000, 8);
    patch_checkpoint("lie.ckpt", "nan.ckpt", first_value, 0x7fc00000u, 4);
    patch_checkpoint("lie.ckpt", "kind.ckpt", 8 + 4 + 8 + 4 + 1, 0x07, 1);
    const char *cases[][24] = {
        {"train", "--resume", "neg.ckpt", "--data", text_path, "--iters", "8"},
        {"sample", "--ckpt", "neg.ckpt"},
        {"sample", "--ckpt", "nan.ckpt", "--tokens", "5"},
        {"eval", "--ckpt", "nan.ckpt", "--data", text_path, "--eval-iters", "1"},
        {"attn", "--ckpt", "nan.ckpt", "--text", "the"},
        {"sample", "--ckpt", "kind.ckpt"},
    };
    const char *want[] = {"the training step -1000 is negative",
                          "the training step -1000 is negative",
                          "the value 0 of parameter 'wte.weight' is nan",
                          "the value 0 of parameter 'wte.weight' is nan",
                          "the value 0 of parameter 'wte.weight' is nan",
                          "the model kind holds byte 0x07 at 1"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = run_args(cases[i]);
        EXPECT(r, 1, want[i]);
        ck_assert_ptr_null(strchr(r.err, '\x07'));
        result_free(&r);
    }
}
END_TEST

/* Item 11: a seq2seq checkpoint whose config claims a model far larger than
 * the values it holds is refused before that model is built. */
START_TEST(test_a_seq2seq_checkpoint_claiming_a_huge_model_is_refused_first)
{
    train_tiny_s2s("s.ckpt");
    /* The config blob starts after magic, version, size, "seq2seq" and its
     * length; n_embd is its fifth u32. */
    patch_checkpoint("s.ckpt", "wide.ckpt", 8 + 4 + 8 + 4 + 7 + 8 + 16, 2048, 4);
    result r = RUN("s2s", "run", "--ckpt", "wide.ckpt", "March 3rd, 1998");
    EXPECT(r, 1, "its config describes a model of", "parameter values but it holds");
    result_free(&r);
    r = RUN("s2s", "train", "--resume", "wide.ckpt", "--steps", "4");
    EXPECT(r, 1, "its config describes a model of", "parameter values but it holds");
    result_free(&r);
}
END_TEST

/* Item 14: messages that say what is meant. */
START_TEST(test_messages_say_what_is_meant)
{
    result r = RUN("sample", "--ckpt", "x.ckpt", "--seed", "-1");
    EXPECT(r, 2, "--seed: -1 is out of range [0, 2147483647]");
    result_free(&r);
    r = RUN("train", "--data", "/proc/self/status", TINY);
    EXPECT(r, 1, "reports a size of 0 but has content");
    result_free(&r);
    /* A text without a newline: the default prompt is not in its vocabulary. */
    write_file(qkv_test_path(data, "line.txt"), "abcdefgh ijklmnop ", 18, 40);
    r = RUN("train", "--data", qkv_test_path(data, "line.txt"), TINY, "--iters", "2", "--out", "l.ckpt");
    EXPECT(r, 0, "");
    result_free(&r);
    r = RUN("sample", "--ckpt", "l.ckpt", "--tokens", "5");
    EXPECT(r, 1, "the default prompt (a newline; no --prompt was given)");
    ck_assert_ptr_null(strstr(r.err, "--prompt:"));
    result_free(&r);
    r = RUN("sample", "--ckpt", "l.ckpt", "--prompt", "abc", "--temperature", "1e-320",
            "--tokens", "5", "--threads", "1");
    EXPECT(r, 0, "");
    result_free(&r);
    ck_assert_int_eq(remove(qkv_test_path(data, "line.txt")), 0);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("program");
    tcase_add_unchecked_fixture(tc, make_dirs, remove_dirs);
    tcase_add_checked_fixture(tc, clean_work, NULL);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_usage_errors_exit_2_before_any_work);
    tcase_add_test(tc, test_bad_data_exits_1_with_a_message);
    tcase_add_test(tc, test_text_outside_the_vocabulary);
    tcase_add_test(tc, test_bytes_that_are_not_utf8_are_accepted);
    tcase_add_test(tc, test_sigint_saves_and_resume_continues_exactly);
    tcase_add_test(tc, test_grad_accum_is_a_larger_batch_in_the_memory_of_one);
    tcase_add_test(tc, test_diverging_run_stops_and_keeps_a_good_checkpoint);
    tcase_add_test(tc, test_time_budget_ends_on_time_with_the_schedule_done);
    tcase_add_test(tc, test_s2s_resume_continues_exactly);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_unchecked_fixture(tc, make_dirs, remove_dirs);
    tcase_add_checked_fixture(tc, clean_work, NULL);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_out_that_is_not_a_regular_file_is_refused);
    tcase_add_test(tc, test_out_that_is_an_input_is_refused);
    tcase_add_test(tc, test_a_new_run_never_replaces_a_trained_checkpoint);
    tcase_add_test(tc, test_a_second_run_writing_the_same_checkpoint_fails_at_once);
    tcase_add_test(tc, test_an_unusable_out_is_found_before_any_work);
    tcase_add_test(tc, test_sigterm_saves_and_the_log_is_written_as_it_goes);
    tcase_add_test(tc, test_ctrl_c_says_so_at_once_and_more_signals_keep_the_save);
    tcase_add_test(tc, test_write_errors_are_errors_naming_the_file);
    tcase_add_test(tc, test_a_fifo_is_refused_without_blocking);
    tcase_add_test(tc, test_a_checkpoint_that_lies_is_refused);
    tcase_add_test(tc, test_a_seq2seq_checkpoint_claiming_a_huge_model_is_refused_first);
    tcase_add_test(tc, test_messages_say_what_is_meant);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_suite)
