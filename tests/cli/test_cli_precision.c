/* --precision for qkv train and qkv s2s train: the run says which precision
 * and which kernel, its checkpoint keeps it, a resumed run takes it back
 * unless given another, and a name that is no precision is a usage error;
 * for qkv sample, s2s eval and s2s run: generation's products, fp32 unless
 * asked (whatever the checkpoint was trained in).
 * (The numbers themselves: tests/train/test_mixed_precision.c.) */
#include "cli_suite.h"
#include "testing.h"

/* The precision the checkpoint work/name was saved in. */
static int saved(const char *name)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(work_file(name), NULL);
    ck_assert_qkv(ck);
    int p = qkv_checkpoint_precision(ck);
    qkv_checkpoint_close(ck);
    return p;
}

/* The line a bf16 run prints for `why`, with the kernel this CPU runs. */
static const char *bf16_line(const char *why)
{
    static char line[200];
    snprintf(line, sizeof line, "precision: bf16 products with fp32 sums (%s), on the %s kernel",
             why, qkv_precision_kernel());
    return line;
}

START_TEST(test_train_keeps_and_resumes_the_precision)
{
    const char *text = suite_text;
    qkv_cli_result r = RUN("train", "--data", text, TINY, "--iters", "4", "--precision", "bf16",
                           "--out", "run.ckpt");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, bf16_line("--precision")), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
    ck_assert_int_eq(saved("run.ckpt"), QKV_PRECISION_BF16);

    r = RUN("train", "--resume", "run.ckpt", "--data", text, "--iters", "6", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, bf16_line("the resumed run's")), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
    ck_assert_int_eq(saved("run.ckpt"), QKV_PRECISION_BF16);

    r = RUN("train", "--resume", "run.ckpt", "--data", text, "--iters", "8", "--threads", "1",
            "--precision", "fp32");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, "precision: fp32 (--precision)\n"), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
    ck_assert_int_eq(saved("run.ckpt"), QKV_PRECISION_FP32);

    r = RUN("train", "--resume", "run.ckpt", "--data", text, "--iters", "9", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, "precision: fp32 (the resumed run's)\n"), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
}
END_TEST

START_TEST(test_s2s_train_takes_it_too)
{
    qkv_cli_result r = RUN("s2s", "train", "--steps", "2", "--layers", "1", "--heads", "2",
                           "--embd", "16", "--batch", "4", "--eval-iters", "1", "--threads", "1",
                           "--precision", "bf16", "--out", "s2s.ckpt");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, bf16_line("--precision")), "stdout:\n%s", r.out);
    qkv_cli_result_free(&r);
    ck_assert_int_eq(saved("s2s.ckpt"), QKV_PRECISION_BF16);
}
END_TEST

START_TEST(test_an_unknown_precision_is_a_usage_error)
{
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--precision",
                           "fp16", "--out", "no.ckpt");
    EXPECT(r, 2, "--precision: 'fp16' is not a precision (fp32 or bf16)");
    qkv_cli_result_free(&r);
    r = RUN("train", "--help");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, "--precision"), "--help lacks --precision:\n%s", r.out);
    qkv_cli_result_free(&r);
}
END_TEST

START_TEST(test_generation_takes_it_and_defaults_to_fp32)
{
    qkv_cli_result r = RUN("train", "--data", suite_text, TINY, "--iters", "2", "--precision",
                           "bf16", "--out", "gen.ckpt");
    EXPECT(r, 0, "");
    qkv_cli_result_free(&r);
    const char *ckpt = work_file("gen.ckpt");
    /* a bf16 checkpoint samples in fp32 unless asked */
    r = RUN("sample", "--ckpt", ckpt, "--tokens", "20", "--temperature", "0", "--threads", "1");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.err, "(key/value cache, fp32 products)"), "stderr:\n%s", r.err);
    qkv_cli_result_free(&r);
    r = RUN("sample", "--ckpt", ckpt, "--tokens", "20", "--temperature", "0", "--threads", "1",
            "--precision", "bf16");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.err, "(key/value cache, bf16 products)"), "stderr:\n%s", r.err);
    qkv_cli_result_free(&r);
    r = RUN("sample", "--ckpt", ckpt, "--precision", "half");
    EXPECT(r, 2, "--precision: 'half' is not a precision (fp32 or bf16)");
    qkv_cli_result_free(&r);
    r = RUN("sample", "--help");
    EXPECT(r, 0, "");
    ck_assert_msg(strstr(r.out, "default: fp32"), "--help lacks the default:\n%s", r.out);
    qkv_cli_result_free(&r);
    r = RUN("s2s", "eval", "--ckpt", "none.ckpt", "--precision", "fp8");
    EXPECT(r, 2, "--precision: 'fp8' is not a precision (fp32 or bf16)");
    qkv_cli_result_free(&r);
    r = RUN("s2s", "run", "--ckpt", "none.ckpt", "--precision", "fp8", "May 1st, 1999");
    EXPECT(r, 2, "--precision: 'fp8' is not a precision (fp32 or bf16)");
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *cli_precision_suite(void)
{
    Suite *s = suite_create("cli_precision");
    TCase *tc = cli_suite_tcase("precision");
    tcase_add_test(tc, test_train_keeps_and_resumes_the_precision);
    tcase_add_test(tc, test_s2s_train_takes_it_too);
    tcase_add_test(tc, test_an_unknown_precision_is_a_usage_error);
    tcase_add_test(tc, test_generation_takes_it_and_defaults_to_fp32);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_precision_suite)
