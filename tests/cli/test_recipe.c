/* The recipe of a budgeted run (cli/recipe.c) as a function: its FLOPs per
 * token against the formula written out, a longer budget (or a faster
 * machine) never a smaller model, dropout only past the first epoch, heads
 * that divide the width, the learning rate falling with width; and the
 * program's plan line for `qkv train --config budget --time`: the recipe's
 * line, and the model it announces built. */
#include <stdlib.h>

#include "cli/recipe.h"
#include "cli_run.h"
#include "testing.h"

START_TEST(test_flops_per_token_is_the_formula)
{
    /* 4 layers of width 128, context 128, 65 symbols: 12·4·128² matrix
     * parameters and the head's 65·128, 6 FLOPs each; attention 6·4·128·128. */
    double want = 6.0 * (12 * 4 * 128 * 128 + 65 * 128) + 6.0 * 4 * 128 * 128;
    ck_assert_double_eq_tol(recipe_flops_per_token(4, 128, 128, 65), want, 1e-6 * want);
    ck_assert(recipe_flops_per_token(8, 128, 128, 65) > recipe_flops_per_token(4, 128, 128, 65));
    ck_assert(recipe_flops_per_token(4, 256, 128, 65) > recipe_flops_per_token(4, 128, 128, 65));
}
END_TEST

START_TEST(test_a_longer_budget_never_picks_a_smaller_model)
{
    const double speeds[] = {2e9, 2e10, 1e11};
    for (size_t k = 0; k < sizeof speeds / sizeof *speeds; k++) {
        recipe prev = {0};
        for (double t = 5; t <= 86400; t *= 1.25) {
            recipe r;
            recipe_choose(t, speeds[k], 1e6, 65, &r);
            ck_assert_msg(r.params >= prev.params, "%g s at %g FLOP/s: %g parameters, %g before",
                          t, speeds[k], r.params, prev.params);
            ck_assert_msg(r.tokens >= prev.tokens || r.params > prev.params,
                          "%g s: fewer tokens on the same model", t);
            ck_assert_int_eq(r.embd % r.heads, 0);
            ck_assert(r.dropout >= 0 && r.dropout <= 0.2);
            ck_assert(r.lr > r.min_lr && r.min_lr > 0);
            ck_assert_double_eq_tol(r.params, 12.0 * r.layers * r.embd * r.embd, 1);
            ck_assert_double_eq_tol(r.epochs, r.tokens / 1e6, 1e-9 * r.epochs + 1e-12);
            /* The tokens are what the time buys at that speed on that model. */
            double fpt = recipe_flops_per_token(r.layers, r.embd, r.block, 65);
            ck_assert_double_eq_tol(r.tokens * fpt, r.seconds * speeds[k], 1e-6 * r.tokens * fpt);
            ck_assert(r.seconds <= t && r.seconds > 0.5 * t);
            prev = r;
        }
        /* From the smallest size at a few seconds to a larger one in a day. */
        recipe first, last;
        recipe_choose(5, speeds[k], 1e6, 65, &first);
        recipe_choose(86400, speeds[k], 1e6, 65, &last);
        ck_assert(last.params > first.params);
    }
    /* A faster machine, the same budget: never a smaller model. */
    recipe slow, fast;
    recipe_choose(300, 1e10, 1e6, 65, &slow);
    recipe_choose(300, 4e10, 1e6, 65, &fast);
    ck_assert(fast.params >= slow.params);
}
END_TEST

START_TEST(test_a_short_text_caps_the_size)
{
    recipe r;
    recipe_choose(86400, 1e11, 4e5, 1024, &r); /* a day on Shakespeare's BPE tokens */
    ck_assert_int_eq(r.layers, 4);
    ck_assert_int_eq(r.embd, 128);
    recipe_choose(86400, 1e11, 1e9, 1024, &r); /* a day on a large text */
    ck_assert(r.params > 2e6);
    for (double n = 1e4; n < 1e9; n *= 2) { /* never more parameters than 2 a token, but fast's */
        recipe_choose(86400, 1e11, n, 1024, &r);
        ck_assert(r.params <= 2 * n || (r.layers == 4 && r.embd == 128));
    }
}
END_TEST

START_TEST(test_dropout_only_past_the_first_epoch)
{
    recipe r;
    recipe_choose(60, 1e10, 1e12, 65, &r); /* a huge corpus: far less than an epoch */
    ck_assert(r.epochs < 1);
    ck_assert_double_eq(r.dropout, 0);
    recipe_choose(3600, 1e10, 1e5, 65, &r); /* a tiny one: many epochs */
    ck_assert(r.epochs > 10);
    ck_assert(r.dropout > 0);
}
END_TEST

START_TEST(test_wider_models_take_a_lower_rate)
{
    recipe small, big;
    recipe_choose(10, 1e10, 1e6, 65, &small);
    recipe_choose(86400, 1e11, 1e6, 65, &big);
    ck_assert_int_lt(small.embd, big.embd);
    ck_assert(big.lr < small.lr);
}
END_TEST

START_TEST(test_words_name_the_choice)
{
    recipe r;
    recipe_choose(300, 2e10, 1e6, 65, &r);
    char text[256], want[64];
    recipe_words(&r, 300, text, sizeof text);
    snprintf(want, sizeof want, "%d layers x %d", r.layers, r.embd);
    ck_assert_msg(strstr(text, want), "no '%s' in '%s'", want, text);
    ck_assert_msg(strstr(text, "recipe for 300 s"), "%s", text);
    ck_assert_msg(strstr(text, "dropout"), "%s", text);
}
END_TEST

/* Write a text of n lines of the fox to path. */
static void write_fox(const char *path, int n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < n; i++)
        fprintf(f, "the quick brown fox %d jumps over the lazy dog.\n", i % 997);
    ck_assert_int_eq(fclose(f), 0);
}

/* The program: `qkv train --config budget --time` prints the recipe's line,
 * and the model line shows the size it chose. */
START_TEST(test_the_plan_line_says_the_choice)
{
    qkv_cli cli;
    qkv_cli_open(&cli, "qkv_recipe");
    char text_path[160], out[160];
    snprintf(text_path, sizeof text_path, "%s/text.txt", cli.root);
    snprintf(out, sizeof out, "%s/run.ckpt", cli.root);
    write_fox(text_path, 200); /* 10 kB: one token a byte */
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--config", "budget",
                                   "--time", "4", "--threads", "1", "--out", out);
    ck_assert_msg(r.status == 0, "status %d; stderr:\n%s", r.status, r.err);
    const char *line = strstr(r.out, "recipe for ");
    ck_assert_msg(line, "no recipe line in:\n%s", r.out);
    int layers = 0, embd = 0;
    ck_assert_int_eq(sscanf(strstr(line, "GFLOP/s: ") + 9, "%d layers x %d", &layers, &embd), 2);
    char model[96];
    snprintf(model, sizeof model, "model: %d layers, %d heads, width %d", layers, embd / 32, embd);
    ck_assert_msg(strstr(r.out, model), "no '%s' in:\n%s", model, r.out);
    ck_assert_msg(strstr(r.out, "training for "), "%s", r.out);
    qkv_cli_result_free(&r);
    qkv_cli_close(&cli);
}
END_TEST

START_TEST(test_the_tokenizer_follows_the_text)
{
    ck_assert_int_eq(recipe_tokenizer(0), 0);
    ck_assert_int_eq(recipe_tokenizer(100e3), 0); /* too short for a vocabulary of 1,024 */
    ck_assert_int_eq(recipe_tokenizer(1.1e6), 1024); /* tiny Shakespeare */
    for (double b = 1e3; b < 1e9; b *= 1.5) /* once BPE, BPE on every longer text */
        ck_assert(recipe_tokenizer(b * 1.5) >= recipe_tokenizer(b));
}
END_TEST

/* A new run with --time and nothing that sizes the model is the recipe's,
 * with or without --config fast, and on a long enough text a BPE's; another
 * preset, a size flag or an explicit tokenizer keep theirs. */
START_TEST(test_time_alone_is_the_recipe)
{
    qkv_cli cli;
    qkv_cli_open(&cli, "qkv_recipe_time");
    char text_path[160], out[160];
    snprintf(text_path, sizeof text_path, "%s/text.txt", cli.root);
    snprintf(out, sizeof out, "%s/run.ckpt", cli.root);
    write_fox(text_path, 6000); /* about 300 kB: past the recipe's BPE threshold */
    const struct { const char *args[4]; const char *want; } runs[] = {
        {{"--threads", "1"}, "vocabulary 1024"},
        {{"--config", "fast", "--threads", "1"}, "vocabulary 1024"},
        {{"--tokenizer", "chars", "--threads", "1"}, "vocabulary "},
        {{"--config", "baby", "--threads", "1"}, NULL},
        {{"--layers", "2", "--threads", "1"}, NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        const char *const *a = runs[i].args;
        qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--time", "2",
                                       "--eval-iters", "2", "--force", "--out", out, a[0], a[1],
                                       a[2], a[3]);
        ck_assert_msg(r.status == 0, "run %zu: status %d; stderr:\n%s", i, r.status, r.err);
        const char *line = strstr(r.out, "recipe for ");
        if (runs[i].want)
            ck_assert_msg(line && strstr(line, runs[i].want), "run %zu: no '%s' in:\n%s", i,
                          runs[i].want, r.out);
        else
            ck_assert_msg(!line, "run %zu: a recipe line in:\n%s", i, r.out);
        if (i == 2)
            ck_assert_msg(!strstr(line, "vocabulary 1024"), "%s", r.out);
        qkv_cli_result_free(&r);
    }
    qkv_cli_close(&cli);
}
END_TEST

static Suite *recipe_suite(void)
{
    Suite *s = suite_create("recipe");
    TCase *tc = tcase_create("recipe");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_flops_per_token_is_the_formula);
    tcase_add_test(tc, test_a_longer_budget_never_picks_a_smaller_model);
    tcase_add_test(tc, test_a_short_text_caps_the_size);
    tcase_add_test(tc, test_dropout_only_past_the_first_epoch);
    tcase_add_test(tc, test_wider_models_take_a_lower_rate);
    tcase_add_test(tc, test_words_name_the_choice);
    tcase_add_test(tc, test_the_plan_line_says_the_choice);
    tcase_add_test(tc, test_the_tokenizer_follows_the_text);
    tcase_add_test(tc, test_time_alone_is_the_recipe);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(recipe_suite)
