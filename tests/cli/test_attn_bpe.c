/* qkv attn with a GPT of BPE tokens (`qkv train --tokenizer bpe:N`): the SVG
 * has a row and a column a token, labelled with the token's text; the page's
 * queries, keys and next-token distribution are the tokens' texts; --text and
 * --rows count tokens and say so; --live refuses such a model. A label shows
 * every byte safely: taking its escapes back gives the token's bytes. Runs
 * $QKV_TEST_BUILD/qkv. */
#include <stdlib.h>

#include "attn_page_read.h"
#include "cli/viz/viz.h"
#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"
#include "token_labels.h"

static qkv_cli cli;
static char text_path[128];

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_attn_bpe");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

#define READ token_labels_text

static void expect_ok(const qkv_cli_result *r)
{
    ck_assert_msg(r->status == 0, "exit status %d; stderr:\n%s", r->status, r->err);
}

/* A GPT of BPE tokens trained for 2 steps, saved as work/b.ckpt; loaded back
 * with its tokenizer into *bpe. */
static qkv_gpt *bpe_model(qkv_bpe **bpe)
{
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "train", "--data", text_path, "--tokenizer",
                                   "bpe:300", "--layers", "1", "--heads", "2", "--embd", "16",
                                   "--block", "32", "--batch", "4", "--threads", "1",
                                   "--eval-iters", "1", "--iters", "2", "--out", "b.ckpt");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    char path[256];
    snprintf(path, sizeof path, "%s/b.ckpt", cli.work);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load_bpe(path, &vocab, bpe);
    ck_assert_msg(m && *bpe, "%s", qkv_last_error());
    return m;
}

/* The SVG work/name draws query rows row0..row0+n-1 of the T tokens ids: a
 * row a query, labelled with its token's text, a column a key (every one),
 * and causal cells: row q has the keys up to itself. */
static void check_svg(const char *name, const qkv_bpe *bpe, const int32_t *ids, int T, int row0,
                      int n)
{
    char *svg = qkv_test_read_file(qkv_test_path(cli.work, name), NULL);
    /* The labels: rows to the left (anchored at their end), columns upwards. */
    char rows[80][64], cols[80][64];
    ck_assert_int_eq(svg_labels(svg, "text-anchor=\"end\"", rows, 80), n);
    ck_assert_int_eq(svg_labels(svg, "rotate(-90 ", cols, 80), T + 1); /* + the rows' caption */
    /* XML escapes none of these labels' characters but '&', '<', '>': READ has none. */
    for (int q = 0; q < n; q++)
        check_label(bpe, ids[row0 + q], rows[q]);
    for (int t = 0; t < T; t++)
        check_label(bpe, ids[t], cols[t + 1]);
    int cells = 0, want = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"cell\"")); p++)
        cells++;
    for (int q = row0; q < row0 + n; q++)
        want += q + 1;
    ck_assert_int_eq(cells, want);
    free(svg);
}

START_TEST(test_svg_of_a_bpe_model_has_a_row_and_column_a_token)
{
    qkv_bpe *bpe;
    qkv_gpt *m = bpe_model(&bpe);
    int32_t ids[64];
    int T = (int)qkv_bpe_encode(bpe, READ, strlen(READ), ids);
    ck_assert_int_lt(T, (int)strlen(READ)); /* merges apply: fewer tokens than bytes */
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "b.ckpt", "--text", READ,
                                   "--head", "0", "--out", "a.svg");
    expect_ok(&r);
    char want[96];
    snprintf(want, sizeof want, "wrote a.svg: %d tokens", T);
    ck_assert_msg(strstr(r.out, want), "%s", r.out);
    qkv_cli_result_free(&r);
    check_svg("a.svg", bpe, ids, T, 0, T); /* T×T */
    /* --rows counts tokens: queries 2 to 4, over every key. */
    r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "b.ckpt", "--text", READ, "--head", "1",
                    "--rows", "2:5", "--out", "r.svg");
    expect_ok(&r);
    ck_assert_msg(strstr(r.out, "query rows 2 to 4"), "%s", r.out);
    qkv_cli_result_free(&r);
    check_svg("r.svg", bpe, ids, T, 2, 3);
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_page_of_a_bpe_model_names_tokens)
{
    qkv_bpe *bpe;
    qkv_gpt *m = bpe_model(&bpe);
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "b.ckpt", "--text", READ,
                                   "--html", "a.html");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    check_bpe_page(qkv_test_path(cli.work, "a.html"), bpe);
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
}
END_TEST

/* Run attn; it must fail with status 1 saying want, and write nothing. */
static void expect_refused(const char *want, const char *const *args)
{
    qkv_cli_result r = qkv_cli_run(&cli, NULL, args);
    ck_assert_msg(r.status == 1 && strstr(r.err, want), "status %d, stderr:\n%s\nwanted: %s",
                  r.status, r.err, want);
    qkv_cli_result_free(&r);
    ck_assert_str_eq(qkv_test_listing(cli.work), " b.ckpt b.ckpt.csv b.ckpt.svg");
}

START_TEST(test_limits_count_tokens)
{
    qkv_bpe *bpe;
    qkv_gpt *m = bpe_model(&bpe);
    char msg[128];
    int32_t ids[64];
    int T = (int)qkv_bpe_encode(bpe, READ, strlen(READ), ids);
    snprintf(msg, sizeof msg, "with 0 <= I < J <= %d (the text's length in tokens)", T);
    expect_refused(msg, (const char *[]){"attn", "--ckpt", "b.ckpt", "--text", READ, "--rows",
                                         "0:40", "--out", "a.svg", NULL});
    /* 32 tokens fit, whatever their bytes; 33 do not. */
    char text[200] = "";
    int32_t *many = malloc(sizeof text * sizeof *many);
    while (qkv_bpe_encode(bpe, text, strlen(text), many) <= 32)
        strcat(text, "the cat ");
    long long n = qkv_bpe_encode(bpe, text, strlen(text), many);
    snprintf(msg, sizeof msg, "--text has %lld tokens (%zu bytes); the model reads 1 to 32 tokens",
             n, strlen(text));
    expect_refused(msg, (const char *[]){"attn", "--ckpt", "b.ckpt", "--text", text, "--out",
                                         "a.svg", NULL});
    expect_refused("--live: the live page's module reads characters only",
                   (const char *[]){"attn", "--ckpt", "b.ckpt", "--text", "the", "--html",
                                    "a.html", "--live", NULL});
    free(many);
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
}
END_TEST

static Suite *attn_bpe_suite(void)
{
    Suite *s = suite_create("attn_bpe");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_svg_of_a_bpe_model_has_a_row_and_column_a_token);
    tcase_add_test(tc, test_page_of_a_bpe_model_names_tokens);
    tcase_add_test(tc, test_limits_count_tokens);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(attn_bpe_suite)
