/* One rule for every file the qkv program writes (cli/output.h): qkv
 * attn's picture and page and a training run's loss log and plot are
 * refused, like a checkpoint, when they would replace a file the run did not
 * write (unless --force), a file another run holds locked, or another output
 * of the same command; a failed write says why; a --force run's checkpoint
 * and log always belong to the same run. Every case runs the program. */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_suite.h"
#include "testing.h"

/* Run qkv with the arguments; it must end with status, saying want. */
#define EXPECT_RUN(status, want, ...)           \
    do {                                        \
        qkv_cli_result r_ = RUN(__VA_ARGS__);   \
        EXPECT(r_, (status), (want));           \
        qkv_cli_result_free(&r_);               \
    } while (0)

/* The tiny GPT trained for 4 steps, saved as work/name (with its .csv and .svg,
 * a row a step). */
static void train_logged(const char *name)
{
    EXPECT_RUN(0, "", "train", "--data", suite_text, TINY, "--iters", "4", "--eval-every", "4",
               "--log-every", "1", "--out", name);
}

/* Point 1: qkv attn replaces no existing file without --force: not a
 * trained checkpoint given as --html or --out. With --force it does. */
START_TEST(test_attn_never_replaces_an_existing_file)
{
    train_logged("base.ckpt");
    size_t n;
    char *ckpt = work_bytes("base.ckpt", &n);
    qkv_test_write_file(work_file("trained.ckpt"), ckpt, n);
    const char *flags[] = {"--html", "--out"};
    for (int i = 0; i < 2; i++) {
        EXPECT_RUN(1, "'trained.ckpt' exists already", "attn", "--ckpt", "base.ckpt", "--text",
                   "the", flags[i], "trained.ckpt");
        qkv_test_assert_file_holds(work_file("trained.ckpt"), ckpt, n);
    }
    /* A symbolic link is a file of the user's too, even one that leads nowhere. */
    ck_assert_int_eq(symlink("nowhere", work_file("link.svg")), 0);
    EXPECT_RUN(1, "'link.svg' exists already", "attn", "--ckpt", "base.ckpt", "--text", "the",
               "--out", "link.svg");
    qkv_cli_result r = QKV_CLI_RUN(&suite_cli, NULL, "attn", "--ckpt", "base.ckpt", "--text", "the",
                                   "--html", "trained.ckpt");
    ck_assert_ptr_nonnull(strstr(r.err, "--force"));
    qkv_cli_result_free(&r);
    EXPECT_RUN(0, "", "attn", "--ckpt", "base.ckpt", "--text", "the", "--html", "trained.ckpt",
               "--force");
    char *page = work_bytes("trained.ckpt", NULL);
    ck_assert_ptr_nonnull(strstr(page, "<html"));
    free(page);
    free(ckpt);
    r = QKV_CLI_RUN(&suite_cli, NULL, "attn", "--help");
    ck_assert_ptr_nonnull(strstr(r.out, "--force"));
    qkv_cli_result_free(&r);
    char target[16] = "";
    ck_assert_int_eq(readlink(work_file("link.svg"), target, sizeof target - 1), 7);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work),
                     " base.ckpt base.ckpt.csv base.ckpt.svg link.svg trained.ckpt");
}
END_TEST

/* Point 1: a file whose lock another process holds (a live run's
 * checkpoint) is refused even with --force, and so is the lock file itself. */
START_TEST(test_attn_refuses_a_file_another_run_holds)
{
    train_logged("base.ckpt");
    size_t n, lock_n;
    char *ckpt = work_bytes("base.ckpt", &n);
    qkv_test_write_file(work_file("live.ckpt"), ckpt, n);
    ck_assert_int_eq(qkv_output_lock(work_file("live.ckpt")), 0); /* the "run" */
    char *lock = work_bytes("live.ckpt.lock", &lock_n);
    EXPECT_RUN(1, "'live.ckpt' exists already", "attn", "--ckpt", "base.ckpt", "--text", "the",
               "--out", "live.ckpt");
    EXPECT_RUN(1, "'live.ckpt' is being written by another process", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--out", "live.ckpt", "--force");
    EXPECT_RUN(1, "'live.ckpt' is being written by another process", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--html", "live.ckpt", "--force");
    EXPECT_RUN(1, "'live.ckpt.lock' is a lock file another process holds", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--out", "live.ckpt.lock", "--force");
    qkv_test_assert_file_holds(work_file("live.ckpt"), ckpt, n);
    qkv_test_assert_file_holds(work_file("live.ckpt.lock"), lock, lock_n);
    qkv_output_unlock(work_file("live.ckpt"));
    free(ckpt);
    free(lock);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " base.ckpt base.ckpt.csv base.ckpt.svg live.ckpt");
}
END_TEST

/* Point 1: --html and --out naming one file (the same name, another path to
 * it, a hard link, or one the other's lock file) are refused before any work. */
START_TEST(test_attn_refuses_two_outputs_naming_one_file)
{
    train_logged("base.ckpt");
    qkv_test_write_file(work_file("page.html"), "old\n", 4);
    ck_assert_int_eq(link(work_file("page.html"), work_file("hard.svg")), 0);
    const char *cases[][3] = {
        {"x", "x", "'x' is the same file as --html 'x'"},
        {"y", "./y", "'./y' is the same file as --html 'y'"},
        {"page.html", "hard.svg", "'hard.svg' is the same file as --html 'page.html'"},
        {"z.lock", "z", "one of them is the other's lock file"},
        {"w", "w.lock", "one of them is the other's lock file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* (--force only lets the hard links, which exist, be replaced.) */
        qkv_cli_result r = QKV_CLI_RUN(&suite_cli, NULL, "attn", "--ckpt", "base.ckpt", "--text", "the",
                                       "--html", cases[i][0], "--out", cases[i][1],
                                       i == 2 ? "--force" : NULL);
        EXPECT(r, 1, cases[i][2]);
        ck_assert_msg(r.out[0] == 0, "case %zu wrote:\n%s", i, r.out);
        qkv_cli_result_free(&r);
    }
    qkv_test_assert_file_holds(work_file("page.html"), "old\n", 4);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work),
                     " base.ckpt base.ckpt.csv base.ckpt.svg hard.svg page.html");
}
END_TEST

/* Point 9: a page that cannot be written says why, not "Input/output
 * error": a file too large (RLIMIT_FSIZE) and, where a tmpfs can be mounted
 * (root), a full disk; a device is refused without being written. */
START_TEST(test_attn_says_why_a_page_cannot_be_written)
{
    train_logged("base.ckpt");
    qkv_cli_opts small = {.fsize_limit = 4096};
    qkv_cli_result r = qkv_cli_run(&suite_cli, &small, (const char *const[]){
        "attn", "--ckpt", "base.ckpt", "--text", "the", "--html", "big.html", NULL});
    EXPECT(r, 1, "cannot write 'big.html': File too large");
    qkv_cli_result_free(&r);
    EXPECT_RUN(1, "cannot write '/dev/full': it is a character device", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--html", "/dev/full", "--force");

    ck_assert_int_eq(mkdir(work_file("../disk"), 0700), 0);
    qkv_cli_opts full = {.tmpfs = "../disk", .tmpfs_size = "16k"};
    char ckpt[300];
    snprintf(ckpt, sizeof ckpt, "%s/base.ckpt", suite_cli.work); /* the tmpfs hides nothing of work */
    r = qkv_cli_run(&suite_cli, &full, (const char *const[]){
        "attn", "--ckpt", ckpt, "--text", "the quick", "--html", "../disk/a.html", NULL});
    if (r.status == 126)
        printf("SKIPPED: attn --html on a full disk (mounting a tmpfs needs root)\n");
    else
        EXPECT(r, 1, "cannot write '../disk/a.html': No space left on device");
    qkv_cli_result_free(&r);
    ck_assert_int_eq(rmdir(work_file("../disk")), 0);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " base.ckpt base.ckpt.csv base.ckpt.svg");
}
END_TEST

/* Point 9: a --layer or --head the model does not have is an error naming
 * the option and its range, with --html alone too, and nothing is written. */
START_TEST(test_attn_refuses_a_layer_or_head_the_model_lacks)
{
    train_logged("base.ckpt");
    EXPECT_RUN(1, "--head 9 does not exist; the model has heads 0 to 1", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--head", "9", "--html", "x");
    EXPECT_RUN(1, "--layer 5 does not exist; the model has layers 0 to 0", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--layer", "5", "--html", "x");
    EXPECT_RUN(1, "--head 2 does not exist; the model has heads 0 to 1", "attn", "--ckpt",
               "base.ckpt", "--text", "the", "--head", "2", "--out", "x.svg", "--html", "x");
    EXPECT_RUN(0, "", "s2s", "train", "--steps", "2", "--layers", "1", "--heads", "2", "--embd",
               "16", "--batch", "4", "--eval-iters", "1", "--threads", "1", "--out", "s.ckpt");
    EXPECT_RUN(1, "--head 4 does not exist; the model has heads 0 to 1", "attn", "--ckpt",
               "s.ckpt", "--input", "May 1, 2000", "--head", "4", "--html", "x");
    ck_assert_str_eq(qkv_test_listing(suite_cli.work),
                     " base.ckpt base.ckpt.csv base.ckpt.svg s.ckpt s.ckpt.csv s.ckpt.svg");
}
END_TEST

/* The values of the cells of work/name, in the order drawn (row by row, the
 * masked cells skipped), into v (at most cap); how many there were. */
static int cell_values(const char *name, double *v, int cap)
{
    char *svg = work_bytes(name, NULL);
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"cell\"")) && n < cap; n++) {
        p = strstr(p, "<title>");
        ck_assert_ptr_nonnull(p);
        v[n] = strtod(p += 7, NULL);
    }
    free(svg);
    return n;
}

/* --rows I:J draws query rows i..j-1 alone: the cells of those rows of the
 * whole picture, each row's keys up to itself (causal), nothing else. */
START_TEST(test_attn_rows_draw_those_rows_of_the_whole_picture)
{
    train_logged("base.ckpt");
    const char *text = "the lazy dog"; /* 12 characters: rows 0..11, row r has r + 1 cells */
    EXPECT_RUN(0, "", "attn", "--ckpt", "base.ckpt", "--text", text, "--head", "1", "--out",
               "all.svg");
    EXPECT_RUN(0, "", "attn", "--ckpt", "base.ckpt", "--text", text, "--head", "1", "--rows",
               "4:7", "--out", "part.svg");
    double all[100], part[100];
    ck_assert_int_eq(cell_values("all.svg", all, 100), 12 * 13 / 2);
    ck_assert_int_eq(cell_values("part.svg", part, 100), 5 + 6 + 7);
    int first = 4 * 5 / 2; /* the cells of rows 0..3 come before row 4's */
    for (int i = 0; i < 18; i++)
        ck_assert_msg(part[i] == all[first + i], "cell %d of rows 4:7: %g, the whole picture %g",
                      i, part[i], all[first + i]);
    const char *bad[] = {"7:4", "0:13", "-1:3", "2", "2:5x"};
    for (int i = 0; i < 5; i++)
        EXPECT_RUN(1, "give I:J, the query rows i to j-1, with 0 <= I < J <= 12", "attn", "--ckpt",
                   "base.ckpt", "--text", text, "--rows", bad[i], "--out", "bad.svg");
    EXPECT_RUN(2, "--rows chooses the rows of the GPT's SVG", "attn", "--ckpt", "base.ckpt",
               "--text", text, "--rows", "1:2", "--html", "x");
    ck_assert_str_eq(qkv_test_listing(suite_cli.work),
                     " all.svg base.ckpt base.ckpt.csv base.ckpt.svg part.svg");
}
END_TEST

/* Point 2: a new run (train or s2s train) without --force refuses an existing
 * OUT.csv or OUT.svg before any work, and leaves it as it was. */
START_TEST(test_a_new_run_never_replaces_an_existing_log)
{
    const char *names[] = {"results.csv", "results.svg"};
    for (int i = 0; i < 2; i++) {
        qkv_test_write_file(work_file(names[i]), "data\n", 5);
        char want[64];
        snprintf(want, sizeof want, "'%s' exists already", names[i]);
        qkv_cli_result r = QKV_CLI_RUN(&suite_cli, NULL, "train", "--data", suite_text, TINY, "--iters",
                                       "20", "--out", "results");
        EXPECT(r, 1, want);
        ck_assert_msg(r.out[0] == 0, "it trained:\n%s", r.out);
        qkv_cli_result_free(&r);
        EXPECT_RUN(1, want, "s2s", "train", "--steps", "2", "--out", "results");
        qkv_test_assert_file_holds(work_file(names[i]), "data\n", 5);
        ck_assert_str_eq(qkv_test_listing(suite_cli.work), i ? " results.svg" : " results.csv");
        ck_assert_int_eq(unlink(work_file(names[i])), 0);
    }
    /* --force lets it replace them. */
    qkv_test_write_file(work_file("results.csv"), "data\n", 5);
    EXPECT_RUN(0, "", "train", "--data", suite_text, TINY, "--iters", "4", "--out", "results",
               "--force");
    char *csv = work_bytes("results.csv", NULL);
    const char *header = "step,train_loss,val_loss,val_share\n";
    ck_assert_msg(strncmp(csv, header, strlen(header)) == 0, "results.csv:\n%s", csv);
    free(csv);
}
END_TEST

/* The step of the last row of work/name, a loss log. */
static long last_logged_step(const char *name)
{
    char *csv = work_bytes(name, NULL);
    size_t len = strlen(csv);
    ck_assert_msg(len > 1 && csv[len - 1] == '\n', "%s does not end in a whole row", name);
    csv[len - 1] = 0;
    long step = strtol(strrchr(csv, '\n') + 1, NULL, 10);
    free(csv);
    return step;
}

/* Point 2: a --force run over another run's checkpoint that is killed before
 * its first save leaves the old run's checkpoint, log and plot as they were;
 * one whose first save fails puts the old log back; one that saves has its
 * own log beside its checkpoint. */
START_TEST(test_a_forced_run_keeps_its_checkpoint_and_log_together)
{
    train_logged("r.ckpt");
    const char *set[] = {"r.ckpt", "r.ckpt.csv", "r.ckpt.svg"};
    char *old[3];
    size_t old_n[3];
    for (int i = 0; i < 3; i++)
        old[i] = work_bytes(set[i], &old_n[i]);

    pid_t pid = qkv_cli_start(&suite_cli, NULL, (const char *const[]){
        "train", "--data", suite_text, TINY, "--iters", "100000", "--eval-every", "100000",
        "--log-every", "1", "--out", "r.ckpt", "--force", NULL});
    ck_assert_msg(qkv_cli_wait_for(&suite_cli, "step     20/", 60), "the run did not reach step 20");
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    qkv_cli_result r = qkv_cli_wait(&suite_cli, pid);
    ck_assert_int_eq(r.status, 128 + SIGKILL);
    qkv_cli_result_free(&r);
    for (int i = 0; i < 3; i++)
        qkv_test_assert_file_holds(work_file(set[i]), old[i], old_n[i]);

    /* The first save fails (too large a file): the old log is put back. */
    qkv_cli_opts small = {.fsize_limit = 4096};
    r = qkv_cli_run(&suite_cli, &small, (const char *const[]){
        "train", "--data", suite_text, TINY, "--iters", "4", "--eval-every", "4", "--log-every",
        "1", "--out", "r.ckpt", "--force", NULL});
    EXPECT(r, 1, "File too large");
    qkv_cli_result_free(&r);
    for (int i = 0; i < 3; i++)
        qkv_test_assert_file_holds(work_file(set[i]), old[i], old_n[i]);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " r.ckpt r.ckpt.csv r.ckpt.svg");

    /* Stopped after 30 steps, it saves: checkpoint and log both at its step. */
    pid = qkv_cli_start(&suite_cli, NULL, (const char *const[]){
        "train", "--data", suite_text, TINY, "--iters", "100000", "--eval-every", "100000",
        "--log-every", "1", "--out", "r.ckpt", "--force", NULL});
    ck_assert(qkv_cli_wait_for(&suite_cli, "step     30/", 60));
    ck_assert_int_eq(kill(pid, SIGINT), 0);
    r = qkv_cli_wait(&suite_cli, pid);
    EXPECT(r, 130, "");
    qkv_cli_result_free(&r);
    qkv_checkpoint *ck = qkv_checkpoint_open(work_file("r.ckpt"), "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_ge(ck->step, 30);
    ck_assert_int_eq(last_logged_step("r.ckpt.csv"), ck->step);
    qkv_checkpoint_close(ck);
    char *svg = work_bytes("r.ckpt.svg", NULL);
    ck_assert_msg(strcmp(svg, old[2]) != 0, "r.ckpt.svg is the old run's plot");
    free(svg);
    for (int i = 0; i < 3; i++)
        free(old[i]);
    ck_assert_str_eq(qkv_test_listing(suite_cli.work), " r.ckpt r.ckpt.csv r.ckpt.svg");
}
END_TEST

static Suite *outputs_suite(void)
{
    Suite *s = suite_create("cli_outputs");
    TCase *tc = cli_suite_tcase("outputs");
    tcase_add_test(tc, test_attn_never_replaces_an_existing_file);
    tcase_add_test(tc, test_attn_refuses_a_file_another_run_holds);
    tcase_add_test(tc, test_attn_refuses_two_outputs_naming_one_file);
    tcase_add_test(tc, test_attn_says_why_a_page_cannot_be_written);
    tcase_add_test(tc, test_attn_refuses_a_layer_or_head_the_model_lacks);
    tcase_add_test(tc, test_attn_rows_draw_those_rows_of_the_whole_picture);
    tcase_add_test(tc, test_a_new_run_never_replaces_an_existing_log);
    tcase_add_test(tc, test_a_forced_run_keeps_its_checkpoint_and_log_together);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(outputs_suite)
