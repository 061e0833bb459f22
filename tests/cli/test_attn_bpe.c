/* qkv attn with a GPT of BPE tokens (`qkv train --tokenizer bpe:N`): the SVG
 * has a row and a column a token, labelled with the token's text; the page's
 * queries, keys and next-token distribution are the tokens' texts; --text and
 * --rows count tokens and say so; --live refuses such a model. A label shows
 * every byte safely: taking its escapes back gives the token's bytes. Runs
 * $QKV_TEST_BUILD/qkv. */
#include <stdlib.h>

#include "attn_page_read.h"
#include "cli/viz/viz_internal.h"
#include "cli_run.h"
#include "cli_text.h"
#include "testing.h"

static qkv_cli cli;
static char text_path[128];

static void setup(void)
{
    qkv_cli_open(&cli, "qkv_attn_bpe");
    qkv_cli_write_text(&cli, text_path, sizeof text_path, 60);
}

static void teardown(void) { qkv_cli_close(&cli); }

/* What the model reads: words of the training text, a tab, a backslash, a
 * line break, a whole UTF-8 character and a byte that is none. */
static const char READ[] = "the cat sat\ton \\ the mat\nnaïve \xFF";

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

/* The bytes a label stands for, its escapes taken back (the plain reading of
 * the rule: '␣' a space, '⏎' a newline, '⇥' a tab, "\\" a backslash, "\xHH"
 * a byte, anything else itself), into out; their number. A label must be
 * UTF-8 with no control byte: it is also checked here. */
static size_t unescape(const char *label, char *out)
{
    size_t n = 0;
    for (const char *p = label; *p;) {
        ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "label '%s' has a control byte",
                      label);
        if (strncmp(p, "\xE2\x90\xA3", 3) == 0)
            out[n++] = ' ', p += 3;
        else if (strncmp(p, "\xE2\x8F\x8E", 3) == 0)
            out[n++] = '\n', p += 3;
        else if (strncmp(p, "\xE2\x87\xA5", 3) == 0)
            out[n++] = '\t', p += 3;
        else if (strncmp(p, "\\\\", 2) == 0)
            out[n++] = '\\', p += 2;
        else if (strncmp(p, "\\x", 2) == 0) {
            unsigned v;
            ck_assert_msg(sscanf(p + 2, "%2X", &v) == 1, "label '%s': a bad escape", label);
            out[n++] = (char)v, p += 4;
        } else
            out[n++] = *p++;
    }
    return n;
}

/* The label of token id stands for its bytes. */
static void check_label(const qkv_bpe *bpe, int32_t id, const char *label)
{
    size_t len, n;
    const char *bytes = qkv_bpe_token(bpe, id, &len);
    char back[64];
    ck_assert_int_lt(strlen(label), sizeof back);
    n = unescape(label, back);
    ck_assert_msg(n == len && memcmp(back, bytes, len) == 0, "token %d's label '%s' is not its "
                  "%zu bytes", id, label, len);
}

/* The texts of the SVG's <text> elements with this anchor and rotation, in order. */
static int svg_labels(const char *svg, const char *attrs, char labels[][64], int cap)
{
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "<text ")); p++) {
        const char *end = strchr(p, '>'), *close = strstr(p, "</text>");
        char head[256];
        snprintf(head, sizeof head, "%.*s", (int)(end - p), p);
        if (!strstr(head, attrs) || n == cap)
            continue;
        snprintf(labels[n++], 64, "%.*s", (int)(close - end - 1), end + 1);
    }
    return n;
}

START_TEST(test_svg_of_a_bpe_model_has_a_row_and_column_a_token)
{
    qkv_bpe *bpe;
    qkv_gpt *m = bpe_model(&bpe);
    int32_t ids[sizeof READ];
    int T = (int)qkv_bpe_encode(bpe, READ, strlen(READ), ids);
    ck_assert_int_lt(T, (int)strlen(READ)); /* merges apply: fewer tokens than bytes */
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "b.ckpt", "--text", READ,
                                   "--head", "0", "--out", "a.svg");
    expect_ok(&r);
    char want[96];
    snprintf(want, sizeof want, "wrote a.svg: %d tokens", T);
    ck_assert_msg(strstr(r.out, want), "%s", r.out);
    qkv_cli_result_free(&r);
    char *svg = qkv_test_read_file(qkv_test_path(cli.work, "a.svg"), NULL);
    /* The labels: rows to the left (anchored at their end), columns upwards. */
    char rows[80][64], cols[80][64];
    ck_assert_int_eq(svg_labels(svg, "text-anchor=\"end\"", rows, 80), T);
    ck_assert_int_eq(svg_labels(svg, "rotate(-90 ", cols, 80), T + 1); /* + the rows' caption */
    for (int t = 0; t < T; t++) {
        /* XML escapes none of these labels' characters but '&', '<', '>': READ has none. */
        check_label(bpe, ids[t], rows[t]);
        check_label(bpe, ids[t], cols[t + 1]);
    }
    /* T×T, causal: row t has the t + 1 keys up to itself. */
    int cells = 0;
    for (const char *p = svg; (p = strstr(p, "class=\"cell\"")); p++)
        cells++;
    ck_assert_int_eq(cells, T * (T + 1) / 2);
    free(svg);
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
}
END_TEST

/* The page at work/name is of m reading READ: a query and a key a token,
 * named by its text, and the next token's distribution by token. */
static void check_page(const char *name, const qkv_bpe *bpe)
{
    int32_t ids[sizeof READ];
    int T = (int)qkv_bpe_encode(bpe, READ, strlen(READ), ids);
    jval data = attn_page_data(qkv_test_path(cli.work, name));
    ck_assert_str_eq(json_get(&data, "text")->str, READ);
    const jval *v = &json_get(&data, "views")->items[0];
    ck_assert_int_eq(json_get_int(v, "Tq"), T);
    ck_assert_int_eq(json_get_int(v, "Tk"), T);
    const jval *rows = json_get(v, "rows"), *cols = json_get(v, "cols");
    ck_assert_int_eq(rows->n, T);
    for (int t = 0; t < T; t++) {
        check_label(bpe, ids[t], rows->items[t].str);
        ck_assert_str_eq(cols->items[t].str, rows->items[t].str);
    }
    /* The next token's distribution: every token, by its text, in id order. */
    const jval *next = json_get(&data, "next"), *chars = json_get(next, "chars");
    ck_assert_int_eq(chars->n, qkv_bpe_size(bpe));
    ck_assert_int_eq(json_get(next, "logits")->n, qkv_bpe_size(bpe));
    for (int i = 0; i < chars->n; i++)
        check_label(bpe, i, chars->items[i].str);
    json_free(&data);
}

START_TEST(test_page_of_a_bpe_model_names_tokens)
{
    qkv_bpe *bpe;
    qkv_gpt *m = bpe_model(&bpe);
    qkv_cli_result r = QKV_CLI_RUN(&cli, NULL, "attn", "--ckpt", "b.ckpt", "--text", READ,
                                   "--html", "a.html");
    expect_ok(&r);
    qkv_cli_result_free(&r);
    check_page("a.html", bpe);
    /* The same page from the function, in this process. */
    ck_assert_msg(attn_html_gpt_bpe(qkv_test_path(cli.work, "f.html"), m, bpe, READ) == 0, "%s",
                  qkv_last_error());
    check_page("f.html", bpe);
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
}
END_TEST

/* svg_heatmap with names: each row's name to its left, each column's
 * upwards above it, every one of them however narrow the cells. */
START_TEST(test_heatmap_names_every_row_and_column)
{
    enum { N = 120 }; /* cells of 6 pixels: a 4-character label is wider */
    static qkv_real values[N * N];
    static char text[N][8];
    const char *names[N];
    for (int i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[i], "t%03d", i);
        names[i] = text[i];
    }
    svg_heatmap_spec h = {.panels = 1, .rows = N, .cols = N, .values = values,
                          .row_names = names, .col_names = names};
    ck_assert_msg(svg_heatmap(qkv_test_path(cli.work, "h.svg"), &h) == 0, "%s", qkv_last_error());
    char *svg = qkv_test_read_file(qkv_test_path(cli.work, "h.svg"), NULL);
    static char rows[N + 1][64], cols[N + 1][64];
    ck_assert_int_eq(svg_labels(svg, "text-anchor=\"end\"", rows, N + 1), N);
    ck_assert_int_eq(svg_labels(svg, "rotate(-90 ", cols, N + 1), N);
    for (int i = 0; i < N; i++) {
        ck_assert_str_eq(rows[i], names[i]);
        ck_assert_str_eq(cols[i], names[i]);
    }
    free(svg);
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
    int32_t ids[sizeof READ];
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

/* The rule of a label, case by case (the plain check above reads labels back;
 * this one says which bytes pass as they are). */
START_TEST(test_token_names)
{
    static const struct {
        const char *bytes;
        size_t n;
        const char *name;
    } cases[] = {
        {"a b", 3, "a\xE2\x90\xA3" "b"},
        {"\n\t", 2, "\xE2\x8F\x8E\xE2\x87\xA5"},
        {"\\", 1, "\\\\"},
        {"\0\x1F\x7F", 3, "\\x00\\x1F\\x7F"},
        {"\xC3\xA9", 2, "\xC3\xA9"},                 /* é, whole */
        {"\xC3", 1, "\\xC3"},                        /* cut short */
        {"\xC3" "a", 2, "\\xC3" "a"},                 /* a lead byte, then no continuation */
        {"\xA9", 1, "\\xA9"},                        /* a stray continuation byte */
        {"\xC0\xAF", 2, "\\xC0\\xAF"},               /* overlong '/' */
        {"\xE0\x80\xAF", 3, "\\xE0\\x80\\xAF"},      /* overlong, 3 bytes */
        {"\xED\xA0\x80", 3, "\\xED\\xA0\\x80"},      /* a surrogate */
        {"\xF0\x9F\x98\x80", 4, "\xF0\x9F\x98\x80"}, /* 😀, whole */
        {"\xF4\x90\x80\x80", 4, "\\xF4\\x90\\x80\\x80"}, /* beyond U+10FFFF */
        {"\xE2\x82", 2, "\\xE2\\x82"},               /* € cut short */
        {"x\xE2\x82\xAC", 4, "x\xE2\x82\xAC"},       /* x€ */
    };
    qkv_arena *a = qkv_arena_new(4096);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = qkv__viz_token_name(a, cases[i].bytes, cases[i].n);
        ck_assert_msg(name && strcmp(name, cases[i].name) == 0, "case %zu: '%s', not '%s'", i,
                      name, cases[i].name);
    }
    ck_assert_int_eq(qkv__viz_label_width("\xE2\x90\xA3" "ab\\x80"), 7);
    qkv_arena_free(&a);
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
    tcase_add_test(tc, test_heatmap_names_every_row_and_column);
    tcase_add_test(tc, test_limits_count_tokens);
    tcase_add_test(tc, test_token_names);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(attn_bpe_suite)
