/* What the program's suites share (see cli_suite.h). */
#include "cli_suite.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing.h"

qkv_cli suite_cli;
char suite_data[160];
char suite_text[200];

static const char *TEXT =
    "the quick brown fox jumps over the lazy dog; attention is all you need.\n";

void cli_suite_setup(void)
{
    qkv_cli_open(&suite_cli, "qkv_cli");
    snprintf(suite_data, sizeof suite_data, "%s/data", suite_cli.root);
    ck_assert_int_eq(mkdir(suite_data, 0700), 0);
    snprintf(suite_text, sizeof suite_text, "%s/text.txt", suite_data);
    qkv_test_write_repeated(suite_text, TEXT, strlen(TEXT), 60);
    qkv_test_write_file(qkv_test_path(suite_data, "empty.txt"), "", 0);
    qkv_test_write_file(qkv_test_path(suite_data, "short.txt"), "0123456789", 10);
}

void cli_suite_teardown(void)
{
    qkv_test_remove_tmpdir(suite_data);
    qkv_cli_close(&suite_cli);
}

void cli_suite_clean_work(void) { qkv_test_empty_dir(suite_cli.work); }

TCase *cli_suite_tcase(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_unchecked_fixture(tc, cli_suite_setup, cli_suite_teardown);
    tcase_add_checked_fixture(tc, cli_suite_clean_work, NULL);
    tcase_set_timeout(tc, 240);
    return tc;
}

void train_tiny(const char *name)
{
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "4", "--eval-every",
                           "4", "--out", name);
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
}

void train_tiny_s2s(const char *name)
{
    qkv_cli_result r = RUN("s2s", "train", "--steps", "2", "--layers", "1", "--heads", "2",
                           "--embd", "16", "--batch", "4", "--eval-iters", "1", "--threads", "1",
                           "--out", name);
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
}

const char *work_file(const char *name) { return qkv_test_path(suite_cli.work, name); }

char *work_bytes(const char *name, size_t *n) { return qkv_test_read_file(work_file(name), n); }
