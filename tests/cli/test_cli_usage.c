/* The qkv program facing bad input: usage errors name the flag and exit 2
 * before any work; bad data files, text outside a model's vocabulary and
 * truncated checkpoints exit 1 with a message that says what is meant; bytes
 * that are not UTF-8 are text like any other. Every case runs
 * $QKV_TEST_BUILD/qkv in a temporary directory (cli_suite.h). */
#include <stdlib.h>

#include "cli_suite.h"
#include "testing.h"

/* Each bad command line: exit 2, a message naming the flag and a pointer to
 * --help, and nothing written (no checkpoint, no CSV). */
START_TEST(test_usage_errors_exit_2_before_any_work)
{
    const char *text = suite_text;
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
        {{"train", "--data", text, "--threads", "many"},
         "--threads: 'many' is not a whole number or auto"},
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
        qkv_cli_result r = RUN_ARGS(cases[i].args);
        EXPECT(r, 2, cases[i].want);
        if (strcmp(cases[i].args[0], "frobnicate") != 0)
            ck_assert_msg(strstr(r.err, "--help'."), "case %zu: no pointer to --help:\n%s", i,
                          r.err);
        ck_assert_msg(r.out[0] == 0, "case %zu printed to stdout:\n%s", i, r.out);
        ck_assert_msg(qkv_test_listing(suite_cli.work)[0] == 0, "case %zu wrote files:%s", i,
                      qkv_test_listing(suite_cli.work));
        qkv_cli_result_free(&r);
    }
    /* No command at all is a usage error too; --help is not an error. */
    qkv_cli_result r = RUN_ARGS((const char *const[]){NULL});
    EXPECT(r, 2, "usage: qkv COMMAND");
    qkv_cli_result_free(&r);
    r = RUN("train", "--help");
    EXPECT(r, 0, "");
    ck_assert_ptr_nonnull(strstr(r.out, "--iters N"));
    qkv_cli_result_free(&r);
}
END_TEST

START_TEST(test_bad_data_exits_1_with_a_message)
{
    char empty[256], short_text[256];
    snprintf(empty, sizeof empty, "%s/empty.txt", suite_data);
    snprintf(short_text, sizeof short_text, "%s/short.txt", suite_data);
    struct {
        const char *args[8];
        const char *want[2];
    } cases[] = {
        {{"train", "--data", "missing.txt"},
         {"cannot open 'missing.txt': No such file or directory"}},
        {{"train", "--data", empty}, {"corpus '", "empty.txt' is empty"}},
        {{"train", "--data", suite_data}, {"Is a directory"}},
        {{"train", "--data", "/dev/null"}, {"cannot read '/dev/null': not a regular file"}},
        {{"train", "--data", short_text},
         {"the train split has 9 tokens, fewer than block size + 1 = 17", "smaller block size"}},
        {{"sample", "--ckpt", "absent.ckpt"}, {"cannot open 'absent.ckpt'"}},
        {{"sample", "--ckpt", suite_text}, {"is not a qkv checkpoint: bad magic"}},
        {{"eval", "--ckpt", "absent.ckpt", "--data", suite_text}, {"cannot open 'absent.ckpt'"}},
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
        qkv_cli_result r = RUN_ARGS(args);
        EXPECT(r, 1, cases[i].want[0], cases[i].want[1] ? cases[i].want[1] : "");
        ck_assert_msg(qkv_test_listing(suite_cli.work)[0] == 0, "case %zu wrote files:%s", i,
                      qkv_test_listing(suite_cli.work));
        qkv_cli_result_free(&r);
    }
}
END_TEST

START_TEST(test_text_outside_the_vocabulary)
{
    train_tiny("run.ckpt");
    /* A prompt character the model never saw. */
    qkv_cli_result r = RUN("sample", "--ckpt", "run.ckpt", "--prompt", "the Zebra", "--tokens", "5");
    EXPECT(r, 1, "qkv sample: --prompt: qkv_encode: character 'Z' at position 4 is not in the "
                 "vocabulary");
    qkv_cli_result_free(&r);
    /* Evaluating or resuming on a text with other characters. */
    const char *other = "THE QUICK BROWN FOX\n";
    char upper[256];
    snprintf(upper, sizeof upper, "%s/upper.txt", suite_data);
    qkv_test_write_repeated(upper, other, strlen(other), 20);
    r = RUN("eval", "--ckpt", "run.ckpt", "--data", upper, "--threads", "1");
    EXPECT(r, 1, "upper.txt", "encode: character 'T' at position 0 is not in the vocabulary");
    qkv_cli_result_free(&r);
    r = RUN("train", "--resume", "run.ckpt", "--data", upper, "--iters", "8");
    EXPECT(r, 1, "character 'T' at position 0");
    qkv_cli_result_free(&r);
    /* A truncated checkpoint says so. */
    size_t n;
    char *bytes = qkv_test_read_file(work_file("run.ckpt"), &n);
    qkv_test_write_file(work_file("cut.ckpt"), bytes, n / 2);
    free(bytes);
    r = RUN("sample", "--ckpt", "cut.ckpt");
    EXPECT(r, 1, "checkpoint 'cut.ckpt' is truncated");
    qkv_cli_result_free(&r);
}
END_TEST

/* The tokenizer is byte-level: text that is not UTF-8 (Latin-1 accents, a
 * stray continuation byte, a NUL) trains and samples like any other, one
 * token per byte, and a prompt may hold such bytes too. */
START_TEST(test_bytes_that_are_not_utf8_are_accepted)
{
    const char latin1[] = "caf\xe9 cr\xe8me br\xfbl\xe9\x80\xff e\0x na\xefve r\xe9sum\xe9.\n";
    char path[256], want[64];
    snprintf(path, sizeof path, "%s/latin1.txt", suite_data);
    qkv_test_write_repeated(path, latin1, sizeof latin1 - 1, 30);
    bool seen[256] = {false};
    int distinct = 0;
    for (size_t i = 0; i < sizeof latin1 - 1; i++)
        if (!seen[(unsigned char)latin1[i]]) {
            seen[(unsigned char)latin1[i]] = true;
            distinct++;
        }
    qkv_cli_result r = RUN("train", "--data", path, TINY, "--iters", "5", "--eval-every", "5", "--out",
                   "l1.ckpt");
    EXPECT(r, 0, "");
    snprintf(want, sizeof want, "vocabulary %d,", distinct);
    ck_assert_msg(strstr(r.out, want), "'%s' not in:\n%s", want, r.out);
    qkv_cli_result_free(&r);
    r = RUN("sample", "--ckpt", "l1.ckpt", "--prompt", "caf\xe9", "--tokens", "40", "--threads",
            "1");
    EXPECT(r, 0, "40 tokens");
    ck_assert_msg(strncmp(r.out, "caf\xe9", 4) == 0, "sample output: %s", r.out);
    /* Every byte written is one of the corpus's (the NUL aside, which ends this check). */
    for (const char *c = r.out; *c; c++)
        ck_assert_msg(memchr(latin1, *c, sizeof latin1 - 1) || *c == '\n',
                      "byte 0x%02x is not in the corpus", (unsigned char)*c);
    qkv_cli_result_free(&r);
}
END_TEST

/* Item 14: messages that say what is meant. */
START_TEST(test_messages_say_what_is_meant)
{
    qkv_cli_result r = RUN("sample", "--ckpt", "x.ckpt", "--seed", "-1");
    EXPECT(r, 2, "--seed: -1 is out of range [0, 2147483647]");
    qkv_cli_result_free(&r);
    r = RUN("train", "--data", "/proc/self/status", TINY);
    EXPECT(r, 1, "reports a size of 0 but has content");
    qkv_cli_result_free(&r);
    /* A text without a newline: the default prompt is not in its vocabulary. */
    qkv_test_write_repeated(qkv_test_path(suite_data, "line.txt"), "abcdefgh ijklmnop ", 18, 40);
    r = RUN("train", "--data", qkv_test_path(suite_data, "line.txt"), TINY, "--iters", "2", "--out", "l.ckpt");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
    r = RUN("sample", "--ckpt", "l.ckpt", "--tokens", "5");
    EXPECT(r, 1, "the default prompt (a newline; no --prompt was given)");
    ck_assert_ptr_null(strstr(r.err, "--prompt:"));
    qkv_cli_result_free(&r);
    r = RUN("sample", "--ckpt", "l.ckpt", "--prompt", "abc", "--temperature", "1e-320",
            "--tokens", "5", "--threads", "1");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
    ck_assert_int_eq(remove(qkv_test_path(suite_data, "line.txt")), 0);
}
END_TEST

static Suite *cli_usage_suite(void)
{
    Suite *s = suite_create("cli_usage");
    TCase *tc = cli_suite_tcase("input");
    tcase_add_test(tc, test_usage_errors_exit_2_before_any_work);
    tcase_add_test(tc, test_bad_data_exits_1_with_a_message);
    tcase_add_test(tc, test_text_outside_the_vocabulary);
    tcase_add_test(tc, test_bytes_that_are_not_utf8_are_accepted);
    tcase_add_test(tc, test_messages_say_what_is_meant);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_usage_suite)
