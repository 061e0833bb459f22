/* `qkv train --tokenizer bpe:N`: a GPT of BPE tokens trains, reports its
 * vocabulary and its losses in bits per byte of text (fewer bits per nat than
 * a character model: its tokens are longer than a byte), and its checkpoint
 * carries the tokenizer: sample continues a prompt, eval reads the text with
 * it, --resume goes on; a bad --tokenizer is named. Runs $QKV_TEST_BUILD/qkv. */
#include "cli_run.h"
#include "cli_text.h"
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

static Suite *tokenizer_suite(void)
{
    Suite *s = suite_create("tokenizer_cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bpe_model_trains_samples_evaluates_resumes);
    tcase_add_test(tc, test_bad_tokenizer_is_named);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(tokenizer_suite)
