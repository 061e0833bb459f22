/* Nothing the qkv program does destroys a file: an --out that is not a
 * regular file, that is an input, that holds a trained checkpoint, that
 * another run is writing, or that cannot be written is refused before any
 * work; SIGTERM and Ctrl-C save, and the loss log is written as the run goes;
 * write errors name the file; a FIFO is refused without blocking; a
 * checkpoint that lies is refused. Every case runs $QKV_TEST_BUILD/qkv in a
 * temporary directory (cli_suite.h). */
#define _GNU_SOURCE /* mknod, makedev, memmem, usleep */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli_suite.h"
#include "testing.h"

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
    qkv_test_write_file(work_file(to), b, len);
    free(b);
}

/* Start `qkv args...` with its stdout a one-page pipe this process reads
 * (opts may be NULL), and read it until it holds want. */
static qkv_child start_until(const qkv_cli_opts *opts, const char *const *args, const char *want)
{
    qkv_child c = qkv_cli_start_piped(&suite_cli, opts, args);
    ck_assert_msg(qkv_child_read_until(&c, want, -1), "the run ended before printing '%s':\n%s",
                  want, c.out);
    return c;
}

/* The number of lines of work/name (0 if it does not exist); each must be whole. */
static int csv_rows(const char *name)
{
    if (access(work_file(name), F_OK) != 0)
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
#define LONG_RUN(out) "train", "--data", suite_text, TINY, "--iters", "400", "--eval-every", "1000", \
                      "--log-every", "1", "--out", out, NULL

/* Item 1: an --out that exists but is not a regular file (a FIFO, a directory,
 * as root a device node) is refused before any work and left as it is, by
 * qkv train and qkv s2s train. */
START_TEST(test_out_that_is_not_a_regular_file_is_refused)
{
    char fifo[256], dir[256], node[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", suite_cli.work);
    snprintf(dir, sizeof dir, "%s/adir", suite_cli.work);
    snprintf(node, sizeof node, "%s/node", suite_cli.work);
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
        qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--out", names[i]);
        EXPECT(r, 1, "only ever replaces regular files", names[i]);
        ck_assert_msg(r.out[0] == 0, "it trained:\n%s", r.out);
        qkv_cli_result_free(&r);
        r = RUN("s2s", "train", "--steps", "2", "--out", names[i]);
        EXPECT(r, 1, "only ever replaces regular files");
        qkv_cli_result_free(&r);
        struct stat st;
        ck_assert_int_eq(lstat(work_file(names[i]), &st), 0);
        ck_assert_msg((st.st_mode & S_IFMT) == kinds[i], "%s was replaced", names[i]);
    }
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), root_user ? " adir fifo node" : " adir fifo");
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Item 2: an --out (or its CKPT.csv) that is the same file as --suite_data, under
 * any name, is refused and the corpus is left as it was. */
START_TEST(test_out_that_is_an_input_is_refused)
{
    size_t n;
    char *text = qkv_test_read_file(suite_text, &n);
    qkv_test_write_file(work_file("c.txt"), text, n);
    ck_assert_int_eq(link(work_file("c.txt"), work_file("link.txt")), 0);
    qkv_test_write_file(work_file("run.csv"), text, n);
    const char *cases[][3] = {{"c.txt", "c.txt", "'c.txt': it is the same file as the input"},
                              {"c.txt", "link.txt", "'link.txt': it is the same file as the input"},
                              {"run.csv", "run", "'run.csv': it is the same file as the input"}};
    for (int i = 0; i < 3; i++) {
        qkv_cli_result r = RUN("train", "--data", cases[i][0], TINY, "--iters", "2", "--out", cases[i][1]);
        EXPECT(r, 1, cases[i][2]);
        qkv_cli_result_free(&r);
        qkv_test_assert_file_holds(work_file(cases[i][0]), text, n);
    }
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " c.txt link.txt run.csv");
    free(text);
    /* qkv attn's picture must not replace the checkpoint it reads. */
    train_tiny("a.ckpt");
    char *ckpt = work_bytes("a.ckpt", &n);
    qkv_cli_result r = RUN("attn", "--ckpt", "a.ckpt", "--text", "the", "--out", "a.ckpt");
    EXPECT(r, 1, "'a.ckpt': it is the same file as the input");
    qkv_cli_result_free(&r);
    qkv_test_assert_file_holds(work_file("a.ckpt"), ckpt, n);
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
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--out", "good.ckpt");
    EXPECT(r, 1, "'good.ckpt' exists already", "--resume good.ckpt", "--force");
    ck_assert_msg(r.out[0] == 0, "it trained:\n%s", r.out);
    qkv_cli_result_free(&r);
    r = RUN("s2s", "train", "--steps", "2", "--out", "good.ckpt");
    EXPECT(r, 1, "'good.ckpt' exists already", "--force");
    qkv_cli_result_free(&r);
    qkv_test_assert_file_holds(work_file("good.ckpt"), good, n);

    qkv_cli_opts small = {.as_limit = (rlim_t)1 << 30}; /* the first step's activations do not fit */
    r = QKV_CLI_RUN(&suite_cli, &small, "train", "--data", suite_text, TINY, "--batch", "100000", "--iters", "1", "--out",
            "good.ckpt", "--force");
    if (strstr(r.err, "Sanitizer")) {
        printf("SKIPPED: a failed first step under a memory limit (the sanitizers need more "
               "address space)\n");
    } else {
        EXPECT(r, 1, "out of memory");
        ck_assert_ptr_null(strstr(r.err, "saved"));
    }
    qkv_cli_result_free(&r);
    qkv_test_assert_file_holds(work_file("good.ckpt"), good, n);
    free(good);
}
END_TEST

/* Item 4: while one run writes a checkpoint, a second run (train or s2s
 * train) writing the same path fails at once, and the first ends well. */
START_TEST(test_a_second_run_writing_the_same_checkpoint_fails_at_once)
{
    /* Once it trains, it holds the lock. */
    qkv_child first = start_until(NULL, (const char *const[]){LONG_RUN("same.ckpt")}, "\nstep ");
    /* (It saves only at its end, so same.ckpt does not exist yet: no --force needed.) */
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--out", "same.ckpt");
    EXPECT(r, 1, "'same.ckpt' is being written by another process");
    qkv_cli_result_free(&r);
    r = RUN("s2s", "train", "--steps", "2", "--out", "same.ckpt");
    EXPECT(r, 1, "'same.ckpt' is being written by another process");
    qkv_cli_result_free(&r);
    r = qkv_cli_finish(&suite_cli, &first);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "done: "));
    qkv_cli_result_free(&r);
    qkv_checkpoint *ck = qkv_checkpoint_open(work_file("same.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 400);
    qkv_checkpoint_close(ck);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " same.ckpt same.ckpt.csv same.ckpt.svg");
}
END_TEST

/* Item 5: an --out that cannot be written is found before any training. */
START_TEST(test_an_unusable_out_is_found_before_any_work)
{
    char in_file[300];
    snprintf(in_file, sizeof in_file, "%s/x.ckpt", suite_text);
    const char *cases[][2] = {{"missing-dir/x.ckpt", "No such file or directory"},
                              {"", "the file name is empty"},
                              {"/proc/qkv-test.ckpt", "cannot create a file beside it"},
                              {in_file, "Not a directory"},
                              {".", "it is a directory"}};
    for (int i = 0; i < 5; i++) {
        qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--out", cases[i][0]);
        EXPECT(r, 1, "qkv train: --out: ", cases[i][1]);
        ck_assert_msg(r.out[0] == 0, "case %d trained first:\n%s", i, r.out);
        qkv_cli_result_free(&r);
        r = RUN("s2s", "train", "--steps", "2", "--out", cases[i][0]);
        EXPECT(r, 1, "qkv s2s train: --out: ", cases[i][1]);
        ck_assert_msg(r.out[0] == 0, "case %d trained first:\n%s", i, r.out);
        qkv_cli_result_free(&r);
    }
    /* A folder without write permission: root writes anyway, so as root the
     * run goes without CAP_DAC_OVERRIDE, as an ordinary user would. */
    char locked[256];
    snprintf(locked, sizeof locked, "%s/locked", suite_cli.work);
    ck_assert_int_eq(mkdir(locked, 0500), 0);
    qkv_cli_opts as_user = {.obey_modes = geteuid() == 0};
    qkv_cli_result r = QKV_CLI_RUN(&suite_cli, &as_user, "train", "--data", suite_text, TINY, "--iters", "2", "--out", "locked/x");
    if (r.status == 126) {
        printf("SKIPPED: --out in a read-only folder (root cannot drop CAP_DAC_OVERRIDE here)\n");
    } else {
        EXPECT(r, 1, "qkv train: --out: ", "Permission denied");
        ck_assert_msg(r.out[0] == 0, "it trained first:\n%s", r.out);
    }
    qkv_cli_result_free(&r);
    ck_assert_int_eq(rmdir(locked), 0);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), "");
}
END_TEST

/* Item 6: SIGTERM stops like Ctrl-C (save, exit 143); the loss log is
 * written as the run goes, so SIGKILL loses at most a line, and a resumed
 * run continues it. */
START_TEST(test_sigterm_saves_and_the_log_is_written_as_it_goes)
{
    qkv_child p = start_until(NULL, (const char *const[]){LONG_RUN("kill.ckpt")}, "step     20/");
    int rows = csv_rows("kill.ckpt.csv"); /* the header and steps 1..19 at least */
    ck_assert_msg(rows >= 20, "kill.ckpt.csv has %d lines at step 20", rows);
    ck_assert_int_eq(kill(p.pid, SIGKILL), 0);
    qkv_cli_result r = qkv_cli_finish(&suite_cli, &p);
    ck_assert_int_eq(r.status, 128 + SIGKILL);
    ck_assert_int_ge(csv_rows("kill.ckpt.csv"), rows);
    qkv_cli_result_free(&r);

    p = start_until(NULL, (const char *const[]){LONG_RUN("term.ckpt")}, "\nstep ");
    ck_assert_int_eq(kill(p.pid, SIGTERM), 0);
    r = qkv_cli_finish(&suite_cli, &p);
    EXPECT(r, 143, "qkv: stopping");
    long step = -1;
    const char *at = strstr(r.out, "interrupted at step ");
    ck_assert_msg(at && sscanf(at, "interrupted at step %ld", &step) == 1, "stdout:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(at, ": saved term.ckpt\n"));
    qkv_cli_result_free(&r);
    ck_assert_int_eq(csv_rows("term.ckpt.csv"), 1 + step);
    r = RUN("train", "--resume", "term.ckpt", "--data", suite_text, "--eval-every", "1000",
            "--log-every", "1", "--threads", "1");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
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
     * end (it must still print where it stopped) until qkv_cli_finish reads: the
     * later signals are certain to reach it before it exits. */
    qkv_child p = start_until(&(qkv_cli_opts){.keep_writer = true},
                              (const char *const[]){LONG_RUN("int.ckpt")}, "\nstep ");
    qkv_test_fill_pipe(p.writer);
    p.writer = -1;
    char err_path[256];
    snprintf(err_path, sizeof err_path, "%s/err", suite_cli.root);
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
    qkv_cli_result r = qkv_cli_finish(&suite_cli, &p);
    EXPECT(r, 130, "qkv: stopping");
    ck_assert_msg(strstr(r.err, "qkv: already stopping") || strstr(r.err, "qkv: saving"),
                  "stderr:\n%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, ": saved int.ckpt\n"));
    qkv_cli_result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(work_file("int.ckpt"), &vocab);
    ck_assert_qkv(m);
    qkv_gpt_free(m);
}
END_TEST

/* Item 8: output that cannot be written is an error naming it: stdout on a
 * full device for every command, a checkpoint on a full disk. */
START_TEST(test_write_errors_are_errors_naming_the_file)
{
    train_tiny("w.ckpt");
    train_tiny_s2s("s.ckpt");
    const char *cases[][24] = {
        {"sample", "--ckpt", "w.ckpt", "--tokens", "2000", "--threads", "1"},
        {"eval", "--ckpt", "w.ckpt", "--data", suite_text, "--eval-iters", "2", "--threads", "1"},
        {"s2s", "run", "--ckpt", "s.ckpt", "March 3rd, 1998"},
        {"lab", "example"},
        {"train", "--data", suite_text, TINY, "--iters", "2", "--out", "w2.ckpt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qkv_cli_result r = qkv_cli_run(&suite_cli, &(qkv_cli_opts){.stdout_path = "/dev/full"},
                                       cases[i]);
        EXPECT(r, 1, "cannot write to standard output: No space left on device");
        ck_assert_ptr_null(strstr(r.err, "tokens/s")); /* no success reported */
        qkv_cli_result_free(&r);
    }
    qkv_cli_opts small = {.fsize_limit = 16384}; /* the checkpoint does not fit */
    qkv_cli_result r = QKV_CLI_RUN(&suite_cli, &small, "train", "--data", suite_text, TINY, "--iters", "4", "--eval-every", "2",
                   "--out", "full.ckpt");
    EXPECT(r, 1, "cannot write 'full.ckpt': File too large");
    qkv_cli_result_free(&r);
    ck_assert_int_eq(access(work_file("full.ckpt"), F_OK), -1);
    ck_assert_ptr_null(strstr(qkv_test_listing(suite_cli.work), ".tmp"));
}
END_TEST

/* Item 9: a FIFO where a file is read is refused at once, never waited on. */
START_TEST(test_a_fifo_is_refused_without_blocking)
{
    train_tiny("r.ckpt");
    ck_assert_int_eq(mkfifo(work_file("f"), 0600), 0);
    ck_assert_int_eq(unlink(work_file("r.ckpt.csv")), 0);
    ck_assert_int_eq(mkfifo(work_file("r.ckpt.csv"), 0600), 0);
    const char *cases[][24] = {
        {"train", "--data", "f", TINY},
        {"sample", "--ckpt", "f"},
        {"eval", "--ckpt", "r.ckpt", "--data", "f"},
        {"train", "--resume", "f", "--data", suite_text, "--out", "other.ckpt"},
        {"train", "--resume", "r.ckpt", "--data", suite_text, "--iters", "8"},
        {"s2s", "run", "--ckpt", "f", "x"},
        {"attn", "--ckpt", "f", "--text", "the"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qkv_cli_result r = qkv_cli_run(&suite_cli, &(qkv_cli_opts){.alarm_s = 10}, cases[i]);
        EXPECT(r, 1, "FIFO");
        qkv_cli_result_free(&r);
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
        {"train", "--resume", "neg.ckpt", "--data", suite_text, "--iters", "8"},
        {"sample", "--ckpt", "neg.ckpt"},
        {"sample", "--ckpt", "nan.ckpt", "--tokens", "5"},
        {"eval", "--ckpt", "nan.ckpt", "--data", suite_text, "--eval-iters", "1"},
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
        qkv_cli_result r = RUN_ARGS(cases[i]);
        EXPECT(r, 1, want[i]);
        ck_assert_ptr_null(strchr(r.err, '\x07'));
        qkv_cli_result_free(&r);
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
    qkv_cli_result r = RUN("s2s", "run", "--ckpt", "wide.ckpt", "March 3rd, 1998");
    EXPECT(r, 1, "its config describes a model of", "parameter values but it holds");
    qkv_cli_result_free(&r);
    r = RUN("s2s", "train", "--resume", "wide.ckpt", "--steps", "4");
    EXPECT(r, 1, "its config describes a model of", "parameter values but it holds");
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *cli_files_suite(void)
{
    Suite *s = suite_create("cli_files");
    TCase *tc = cli_suite_tcase("files");
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
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_files_suite)
