/* `qkv train --tokenizer bpe:N`: a GPT of BPE tokens trains, reports its
 * vocabulary and its losses in bits per byte of text (fewer bits per nat than
 * a character model: its tokens are longer than a byte), and its checkpoint
 * carries the tokenizer: sample continues a prompt, eval reads the text with
 * it, --resume goes on; a bad --tokenizer is named. `--tokenizer DIR` (GPT-2's
 * files, small ones made here) does the same with the folder's ids (and resumes),
 * and `qkv sample --tokenizer DIR` reads the prompt and writes the output with it;
 * `--tokenizer FILE` trains on the ids of a tokenizer qkv_bpe_save wrote. Runs
 * $QKV_TEST_BUILD/qkv. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "cli_text.h"
#include "gpt2_files.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128];

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_tokenizer");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

#define TINY "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", "--batch", "4", \
             "--threads", "1", "--eval-iters", "2"

static void expect_ok(const qkv_cli_result *r)
{
    ck_assert_msg(r->status == 0, "exit status %d; stderr:\n%s", r->status, r->err);
}

/* The bits per byte beside each "train loss T, val loss V": the same number
 * of bytes per token for both, and more than one byte a token. */
static void check_bits(const char *out)
{
    const char *at = strstr(out, "train loss ");
    double t, v, bt, bv;
    ck_assert_msg(at && sscanf(at, "train loss %lf, val loss %lf", &t, &v) == 2, "%s", out);
    const char *b = strstr(at, "bits per byte: ");
    ck_assert_msg(b && sscanf(b, "bits per byte: train %lf, val %lf", &bt, &bv) == 2, "%s", out);
    double per_token_t = t / log(2.0) / bt, per_token_v = v / log(2.0) / bv; /* bytes a token */
    ck_assert_msg(fabs(per_token_t - per_token_v) < 1e-3 * per_token_t && per_token_t > 1.5,
                  "bytes per token %g and %g: %s", per_token_t, per_token_v, at);
}

START_TEST(test_bpe_model_trains_samples_evaluates_resumes)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer",
                                   "bpe:300", TINY, "--iters", "10", "--out", "b.ckpt");
    expect_ok(&r);
    int n_tokens, vocab;
    const char *data = strstr(r.out, "data ");
    const char *tokens = data ? strstr(data, ": ") : NULL;
    ck_assert_msg(tokens && sscanf(tokens, ": %d tokens, vocabulary %d", &n_tokens, &vocab) == 2,
                  "%s", r.out);
    ck_assert_int_le(vocab, 300);
    ck_assert_int_gt(vocab, 256);
    check_bits(r.out);
    qkv_cli_result_free(&r);

    r = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "b.ckpt", "--prompt", "The cat", "--tokens",
                    "20", "--threads", "1");
    expect_ok(&r);
    ck_assert_msg(strncmp(r.out, "The cat", 7) == 0 && strlen(r.out) > 20, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.err, "20 tokens"));
    qkv_cli_result_free(&r);

    r = QKV_CLI_RUN(&cli, NULL, "eval", "--ckpt", "b.ckpt", "--data", text_path, "--eval-iters",
                    "2", "--threads", "1");
    expect_ok(&r);
    check_bits(r.out);
    qkv_cli_result_free(&r);

    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--resume", "b.ckpt", "--iters",
                    "14", "--threads", "1", "--out", "b.ckpt");
    expect_ok(&r);
    ck_assert_msg(strstr(r.out, "done: 4 steps"), "%s", r.out);
    qkv_cli_result_free(&r);
}
END_TEST

START_TEST(test_bad_tokenizer_is_named)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer",
                                   "bpe:12", TINY, "--iters", "2", "--out", "x.ckpt");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--tokenizer") && strstr(r.err, "bpe:12"), "%s", r.err);
    qkv_cli_result_free(&r);
}
END_TEST

/* A folder "gpt2" in the program's directory of GPT-2 files: the bytes, three
 * merges (" t", "he", " the") and <|endoftext|>, 260 tokens. */
static void write_gpt2_folder(void)
{
    ck_assert_int_eq(mkdir(qkv_cli_path(&cli, "gpt2"), 0755), 0);
    char *vocab = qkv_test_gpt2_byte_vocab(
        "\"\\u0120t\": 256, \"he\": 257, \"\\u0120the\": 258, \"<|endoftext|>\": 259");
    qkv_test_write_file(qkv_cli_path(&cli, "gpt2/vocab.json"), vocab, strlen(vocab));
    static const char merges[] = "#version: 0.2\n\xc4\xa0 t\nh e\n\xc4\xa0t he\n";
    qkv_test_write_file(qkv_cli_path(&cli, "gpt2/merges.txt"), merges, sizeof merges - 1);
    free(vocab);
}

START_TEST(test_gpt2_folder_trains_and_samples)
{
    write_gpt2_folder();
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer",
                                   "gpt2", TINY, "--iters", "4", "--out", "g.ckpt");
    expect_ok(&r);
    ck_assert_msg(strstr(r.out, "vocabulary 260"), "%s", r.out);
    qkv_cli_result_free(&r);

    /* The checkpoint carries the tokenizer: the same text with it or the folder's. */
    r = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "g.ckpt", "--prompt", "the cat", "--tokens",
                    "30", "--threads", "1");
    expect_ok(&r);
    ck_assert_msg(strncmp(r.out, "the cat", 7) == 0 && strlen(r.out) > 30, "%s", r.out);
    qkv_cli_result again = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "g.ckpt", "--tokenizer",
                                       "gpt2", "--prompt", "the cat", "--tokens", "30",
                                       "--threads", "1");
    expect_ok(&again);
    ck_assert_str_eq(again.out, r.out);
    qkv_cli_result_free(&r);
    qkv_cli_result_free(&again);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--resume", "g.ckpt", "--iters",
                    "6", "--threads", "1", "--out", "g.ckpt");
    expect_ok(&r);
    ck_assert_msg(strstr(r.out, "done: 2 steps") && strstr(r.out, "vocabulary 260"), "%s", r.out);
    qkv_cli_result_free(&r);

    /* A folder without the files, or of another size than the model's, is named. */
    ck_assert_int_eq(mkdir(qkv_cli_path(&cli, "empty"), 0755), 0);
    r = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "g.ckpt", "--tokenizer", "empty");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--tokenizer") && strstr(r.err, "vocab.json"), "%s", r.err);
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--iters", "2", "--out",
                    "c.ckpt");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "c.ckpt", "--tokenizer", "gpt2");
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "260 tokens"), "%s", r.err);
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer", "no-such-folder",
                    TINY, "--iters", "2", "--out", "x.ckpt");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--tokenizer") && strstr(r.err, "no-such-folder"), "%s", r.err);
    qkv_cli_result_free(&r);
    /* The fixture removes the files of the program's folder, not folders. */
    unlink(qkv_cli_path(&cli, "gpt2/vocab.json"));
    unlink(qkv_cli_path(&cli, "gpt2/merges.txt"));
    ck_assert(rmdir(qkv_cli_path(&cli, "gpt2")) == 0 && rmdir(qkv_cli_path(&cli, "empty")) == 0);
}
END_TEST

/* A tokenizer trained and saved by the library (qkv_bpe_save) is the one
 * the model reads: its size is the vocabulary, and sampling with the file
 * writes what sampling with the checkpoint's copy writes. */
START_TEST(test_a_saved_bpe_file_trains_and_samples)
{
    size_t len;
    char *text = qkv_test_read_file(text_path, &len);
    qkv_bpe *bpe = qkv_bpe_train(text, len, 300);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_save(bpe, qkv_cli_path(&cli, "t.bpe")), 0);
    char want[32];
    snprintf(want, sizeof want, "vocabulary %d", qkv_bpe_size(bpe));
    qkv_bpe_free(bpe);
    free(text);
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer",
                                   "t.bpe", TINY, "--iters", "4", "--out", "f.ckpt");
    expect_ok(&r);
    ck_assert_msg(strstr(r.out, want), "%s: %s", want, r.out);
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "f.ckpt", "--prompt", "the cat", "--tokens",
                    "20", "--threads", "1");
    expect_ok(&r);
    qkv_cli_result again = QKV_CLI_RUN(&cli, NULL, "sample", "--ckpt", "f.ckpt", "--tokenizer",
                                       "t.bpe", "--prompt", "the cat", "--tokens", "20",
                                       "--threads", "1");
    expect_ok(&again);
    ck_assert_str_eq(again.out, r.out);
    qkv_cli_result_free(&r);
    qkv_cli_result_free(&again);
}
END_TEST

static Suite *tokenizer_suite(void)
{
    Suite *s = suite_create("tokenizer_cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bpe_model_trains_samples_evaluates_resumes);
    tcase_add_test(tc, test_bad_tokenizer_is_named);
    tcase_add_test(tc, test_gpt2_folder_trains_and_samples);
    tcase_add_test(tc, test_a_saved_bpe_file_trains_and_samples);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(tokenizer_suite)
