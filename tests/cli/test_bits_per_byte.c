/* Every loss the program prints is also given in bits per byte of text: the
 * progress lines, the evaluations, the done line of `qkv train`, and `qkv eval`.
 * A character model's token is one byte, so its bits per byte are its loss in
 * nats over ln 2; each figure printed is checked against the loss printed
 * beside it (both rounded to 4 decimals). Runs $QKV_TEST_BUILD/qkv. */
#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128];

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_bits");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* bits, printed to 4 decimals, is nats (printed so) over ln 2. */
static void same_measure(double nats, double bits, const char *line)
{
    ck_assert_msg(fabs(bits - nats / log(2.0)) < 2e-4, "%.4f bits/byte for a loss of %.4f: %s",
                  bits, nats, line);
}

/* Each "train loss T, val loss V...; bits per byte: train t, val v" in out (at least one). */
static void check_summaries(const char *out)
{
    int n = 0;
    for (const char *at = out; (at = strstr(at, "train loss ")); at++) {
        double t, v, bt, bv;
        const char *bits = strstr(at, "bits per byte: ");
        ck_assert_msg(sscanf(at, "train loss %lf, val loss %lf", &t, &v) == 2 && bits &&
                          sscanf(bits, "bits per byte: train %lf, val %lf", &bt, &bv) == 2,
                      "no bits per byte beside: %.120s", at);
        same_measure(t, bt, at);
        same_measure(v, bv, at);
        n++;
    }
    ck_assert_msg(n > 0, "no losses in:\n%s", out);
}

START_TEST(test_every_loss_in_bits_per_byte)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--layers", "1",
                                   "--heads", "1", "--embd", "16", "--block", "16", "--batch", "4",
                                   "--threads", "1", "--iters", "20", "--log-every", "5",
                                   "--eval-every", "10", "--eval-iters", "2", "--out", "m.ckpt");
    ck_assert_msg(r.status == 0, "exit status %d; stderr:\n%s", r.status, r.err);
    int steps = 0;
    for (const char *at = r.out; (at = strstr(at, "\nstep ")); at++) {
        long s, total;
        double loss, bits;
        const char *b = strstr(at, " bits/byte");
        ck_assert_msg(sscanf(at, "\nstep %ld/%ld loss %lf", &s, &total, &loss) == 3 && b,
                      "a progress line without bits/byte: %.120s", at);
        while (b > at && b[-1] != ' ')
            b--;
        ck_assert_int_eq(sscanf(b, "%lf", &bits), 1);
        same_measure(loss, bits, at);
        steps++;
    }
    ck_assert_int_eq(steps, 4);
    check_summaries(r.out); /* two evaluations and the done line */
    qkv_cli_result_free(&r);

    r = QKV_CLI_RUN(&cli, NULL, "eval", "--ckpt", "m.ckpt", "--data", text_path, "--eval-iters",
                    "2", "--threads", "1");
    ck_assert_msg(r.status == 0, "exit status %d; stderr:\n%s", r.status, r.err);
    check_summaries(r.out);
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *bits_suite(void)
{
    Suite *s = suite_create("bits_per_byte");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_loss_in_bits_per_byte);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bits_suite)
