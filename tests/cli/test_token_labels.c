/* The labels of the program's pictures of a GPT of BPE tokens, in this
 * process (no program needed): a token's bytes made visible by one rule
 * (case by case, and read back to the bytes), svg_heatmap naming every row
 * and column, and attn_html_gpt_bpe's page naming each query, key and next
 * token by its text. */
#include <stdlib.h>
#include <unistd.h>

#include "cli/viz/viz_internal.h"
#include "testing.h"
#include "token_labels.h"

static char dir[64];

static void setup(void) { qkv_test_make_tmpdir(dir, sizeof dir, "qkv_token_labels"); }

static void teardown(void) { qkv_test_remove_tmpdir(dir); }

/* s with every byte outside printable ASCII as \xHH, into buf (a message
 * of raw bytes would make the suite's log binary). */
static const char *shown(char buf[128], const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : "(null)"); *p && n < 120; p++)
        n += (size_t)snprintf(buf + n, 128 - n, *p >= 0x20 && *p < 0x7f ? "%c" : "\\x%02X", *p);
    buf[n] = 0;
    return buf;
}

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
        char got[128], want[128];
        ck_assert_msg(name && strcmp(name, cases[i].name) == 0, "case %zu: '%s', not '%s'", i,
                      shown(got, name), shown(want, cases[i].name));
    }
    ck_assert_int_eq(qkv__viz_label_width("\xE2\x90\xA3" "ab\\x80"), 7);
    qkv_arena_free(&a);
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
    ck_assert_msg(svg_heatmap(qkv_test_path(dir, "h.svg"), &h) == 0, "%s", qkv_last_error());
    char *svg = qkv_test_read_file(qkv_test_path(dir, "h.svg"), NULL);
    static char rows[N + 1][64], cols[N + 1][64];
    ck_assert_int_eq(svg_labels(svg, "text-anchor=\"end\"", rows, N + 1), N);
    ck_assert_int_eq(svg_labels(svg, "rotate(-90 ", cols, N + 1), N);
    for (int i = 0; i < N; i++) {
        ck_assert_str_eq(rows[i], names[i]);
        ck_assert_str_eq(cols[i], names[i]);
    }
    free(svg);
    unlink(qkv_test_path(dir, "h.svg"));
}
END_TEST

/* A fresh GPT of 300 BPE tokens trained on English text, block 32. */
START_TEST(test_page_names_tokens)
{
    static const char text[] = "the cat sat on the mat; the cat ate the rat. the naive cat, "
                               "the mat sat on the cat; that is the matter with the rat.\n";
    qkv_bpe *bpe = qkv_bpe_train(text, sizeof text - 1, 300);
    ck_assert_ptr_nonnull(bpe);
    qkv_gpt_config cfg = {.vocab_size = qkv_bpe_size(bpe), .block_size = 32, .n_layer = 1,
                          .n_head = 2, .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&cfg, 7);
    ck_assert_ptr_nonnull(m);
    const char *path = qkv_test_path(dir, "p.html");
    ck_assert_msg(attn_html_gpt_bpe(path, m, bpe, token_labels_text) == 0, "%s", qkv_last_error());
    check_bpe_page(path, bpe);
    unlink(path);
    qkv_gpt_free(m);
    qkv_bpe_free(bpe);
}
END_TEST

static Suite *token_labels_suite(void)
{
    Suite *s = suite_create("token_labels");
    TCase *tc = tcase_create("labels");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_token_names);
    tcase_add_test(tc, test_heatmap_names_every_row_and_column);
    tcase_add_test(tc, test_page_names_tokens);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(token_labels_suite)
