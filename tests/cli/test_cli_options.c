/* The model options on the command line (cli/model_options.c, from
 * qkv/options.h's list): a choice is `--activation NAME`, its 1.x flag
 * (--relu2) the same as its value 1; the help lists the values; a name the
 * choice lacks, or a 1.x flag against the name given, is a usage error; a
 * choice given overrides a preset's; the run summary names what is not
 * GPT-2's. Every case runs the program. */
#include <stdlib.h>

#include "cli_run.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128]; /* a short English text, repeated: the corpus */

/* A small, fast model on one thread: 1 layer, 2 heads, 2 steps. */
#define TINY "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", "--batch", "4", \
             "--eval-iters", "1", "--threads", "1", "--iters", "2", "--eval-every", "2"

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_options");
    snprintf(text_path, sizeof text_path, "%s/text.txt", cli.root);
    FILE *f = fopen(text_path, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 40; i++)
        fputs("the quick brown fox jumps over the lazy dog.\n", f);
    ck_assert_int_eq(fclose(f), 0);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* r ended with status and its stream (r->out or r->err) holds want. */
static void expect(const qkv_cli_result *r, int status, const char *stream, const char *want)
{
    ck_assert_msg(r->status == status, "exit status %d, expected %d; stderr:\n%s", r->status,
                  status, r->err);
    ck_assert_msg(strstr(stream, want), "no '%s' in:\n%s", want, stream);
}

START_TEST(test_help_lists_each_choice_and_its_old_flag)
{
    const char *const cmds[2][3] = {{"train", "--help", NULL}, {"s2s", "train", "--help"}};
    for (int c = 0; c < 2; c++) {
        qkv_cli_result r = qkv_cli_run(&cli, NULL, (const char *const[]){cmds[c][0], cmds[c][1],
                                                                          cmds[c][2], NULL});
        expect(&r, 0, r.out, "--positions NAME");
        expect(&r, 0, r.out, "learned or rope (default learned)");
        expect(&r, 0, r.out, "layernorm or rmsnorm (default layernorm)");
        expect(&r, 0, r.out, "the MLP's activation: gelu, relu2 or silu (default gelu)");
        expect(&r, 0, r.out, "same as --activation relu2");
        expect(&r, 0, r.out, "same as --norm rmsnorm");
        expect(&r, 0, r.out, "--qk-norm");
        qkv_cli_result_free(&r);
    }
}
END_TEST

START_TEST(test_a_name_the_choice_lacks_is_a_usage_error)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--activation", "swish");
    expect(&r, 2, r.err, "--activation: 'swish' is not one of gelu, relu2 or silu");
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--relu2", "--activation", "silu");
    expect(&r, 2, r.err, "--relu2 says --activation relu2, but --activation says silu");
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "s2s", "train", "--norm", "batchnorm");
    expect(&r, 2, r.err, "--norm: 'batchnorm' is not one of layernorm or rmsnorm");
    qkv_cli_result_free(&r);
}
END_TEST

/* The 1.x flags and the names they stand for train the same run: the same
 * checkpoint, byte for byte; the summary names the three. */
START_TEST(test_old_flags_are_their_values)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--rope",
                                   "--rmsnorm", "--relu2", "--out", "old.ckpt");
    expect(&r, 0, r.out, "dropout 0, rope, rmsnorm, relu2:");
    qkv_cli_result_free(&r);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, TINY, "--positions", "rope", "--norm",
                    "rmsnorm", "--activation=relu2", "--relu2", "--out", "new.ckpt");
    expect(&r, 0, r.out, "dropout 0, rope, rmsnorm, relu2:");
    qkv_cli_result_free(&r);
    size_t n_old, n_new;
    char *old = qkv_test_read_file(qkv_cli_path(&cli, "old.ckpt"), &n_old);
    char *new = qkv_test_read_file(qkv_cli_path(&cli, "new.ckpt"), &n_new);
    ck_assert_msg(n_old == n_new && memcmp(old, new, n_old) == 0, "the checkpoints differ");
    free(old);
    free(new);
}
END_TEST

/* A choice given overrides the preset's (fast: rope, rmsnorm, relu2,
 * qk-norm); the checkpoint holds the choice. */
START_TEST(test_a_choice_given_overrides_the_preset)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--config", "fast",
                                   TINY, "--activation", "silu", "--out", "silu.ckpt");
    expect(&r, 0, r.out, "dropout 0, rope, rmsnorm, silu, qk-norm:");
    qkv_cli_result_free(&r);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(qkv_cli_path(&cli, "silu.ckpt"), &vocab);
    ck_assert_qkv(m);
    ck_assert_int_eq(m->cfg.opts.activation, QKV_ACTIVATION_SILU);
    ck_assert_int_eq(m->cfg.opts.positions, QKV_POSITIONS_ROPE);
    qkv_gpt_free(m);
    r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--config", "fast", TINY,
                    "--activation", "gelu", "--out", "gelu.ckpt");
    expect(&r, 0, r.out, "dropout 0, rope, rmsnorm, qk-norm:");
    qkv_cli_result_free(&r);
}
END_TEST

static Suite *cli_options_suite(void)
{
    Suite *s = suite_create("cli_options");
    TCase *tc = tcase_create("options");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_help_lists_each_choice_and_its_old_flag);
    tcase_add_test(tc, test_a_name_the_choice_lacks_is_a_usage_error);
    tcase_add_test(tc, test_old_flags_are_their_values);
    tcase_add_test(tc, test_a_choice_given_overrides_the_preset);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(cli_options_suite)
