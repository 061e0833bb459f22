/* The byte tokenizer, corpus loading and splitting, random batches. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qkv/data.h"
#include "testing.h"

/* ---- a temporary directory for the suite (made and removed by the parent
 * process, so it goes away even when a test fails) ---- */

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_data"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

/* tmpdir/name, written with len bytes of text (or not created when text is NULL). */
static const char *tmpfile_with(const char *name, const char *text, size_t len)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (text) {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        fclose(f);
    }
    return path;
}

/* A corpus of len letters drawn from 'a'..'t', saved in tmpdir/name. */
static qkv_corpus *random_corpus(const char *name, size_t len, uint64_t seed)
{
    char *text = malloc(len);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    for (size_t i = 0; i < len; i++)
        text[i] = (char)('a' + qkv_rng_below(&rng, 20));
    qkv_corpus *c = qkv_corpus_load(tmpfile_with(name, text, len), NULL);
    free(text);
    ck_assert_qkv(c);
    return c;
}

/* ---- tokenizer ---- */

START_TEST(test_vocab_is_sorted_distinct_bytes)
{
    qkv_tokenizer tok;
    const char *text = "hello world";
    qkv_tokenizer_build(&tok, text, strlen(text));
    ck_assert_int_eq(tok.size, 8);
    ck_assert_mem_eq(tok.byte, " dehlorw", 8);
    for (int i = 0; i < tok.size; i++)
        ck_assert_int_eq(tok.id[tok.byte[i]], i);
    ck_assert_int_eq(tok.id['z'], -1);
}
END_TEST

START_TEST(test_encode_decode_round_trip)
{
    /* "é" is two bytes in UTF-8, so two tokens. */
    const char *text = "Café, naïve\nfaçade";
    size_t n = strlen(text);
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, text, n);
    int32_t ids[64];
    char back[64];
    ck_assert_int_eq(qkv_encode(&tok, text, n, ids), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert(ids[i] >= 0 && ids[i] < tok.size);
    ck_assert_int_eq(ids[3], tok.id[0xc3]); /* the first byte of é */
    ck_assert_int_eq(qkv_decode(&tok, ids, n, back), 0);
    ck_assert_mem_eq(back, text, n);
}
END_TEST

START_TEST(test_encode_names_unknown_character)
{
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, "abc", 3);
    int32_t ids[8];
    ck_assert_int_eq(qkv_encode(&tok, "abxc", 4, ids), -1);
    ck_assert_str_eq(qkv_last_error(),
                     "qkv_encode: character 'x' at position 2 is not in the vocabulary (3 characters)");
    ck_assert_int_eq(qkv_encode(&tok, "ab\n", 3, ids), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "'\\n' at position 2"));
    ck_assert_int_eq(qkv_encode(&tok, "\xc3\xa9", 2, ids), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "'\\xc3' at position 0"));
}
END_TEST

START_TEST(test_decode_rejects_bad_id)
{
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, "abc", 3);
    char out[4];
    ck_assert_int_eq(qkv_decode(&tok, (int32_t[]){0, 3}, 2, out), -1);
    ck_assert_str_eq(qkv_last_error(), "qkv_decode: token id 3 at position 1 is outside [0, 3)");
}
END_TEST

START_TEST(test_vocab_from_bytes)
{
    qkv_tokenizer tok;
    ck_assert_int_eq(qkv_tokenizer_from_bytes(&tok, (const uint8_t *)"\nabz", 4), 0);
    ck_assert_int_eq(tok.size, 4);
    ck_assert_int_eq(tok.id['z'], 3);
    ck_assert_int_eq(qkv_tokenizer_from_bytes(&tok, (const uint8_t *)"abba", 4), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "strictly ascending"));
}
END_TEST

/* ---- corpus from memory ---- */

START_TEST(test_corpus_from_text_equals_the_file_corpus)
{
    char text[3000];
    qkv_rng rng;
    qkv_rng_seed(&rng, 4);
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + qkv_rng_below(&rng, 26));
    qkv_corpus *file = qkv_corpus_load(tmpfile_with("mem.txt", text, sizeof text), NULL);
    char *copy = malloc(sizeof text);
    memcpy(copy, text, sizeof text);
    qkv_corpus *mem = qkv_corpus_from_text(copy, sizeof text, NULL);
    memset(copy, 'z', sizeof text); /* the corpus does not keep the caller's buffer */
    free(copy);
    ck_assert_qkv(file);
    ck_assert_qkv(mem);
    ck_assert_int_eq(mem->tok.size, file->tok.size);
    ck_assert_mem_eq(mem->tok.byte, file->tok.byte, (size_t)file->tok.size);
    ck_assert_uint_eq(mem->len, file->len);
    ck_assert_uint_eq(mem->n_train, file->n_train);
    ck_assert_mem_eq(mem->ids, file->ids, file->len * sizeof(int32_t));
    /* Its train and val batches are the file corpus's. */
    for (int split = 0; split < 2; split++) {
        qkv_batcher a, b;
        ck_assert_int_eq(qkv_batcher_init(&a, mem, (qkv_split)split, 3, 16, 9), 0);
        ck_assert_int_eq(qkv_batcher_init(&b, file, (qkv_split)split, 3, 16, 9), 0);
        int32_t xa[48], ya[48], xb[48], yb[48];
        qkv_batcher_next(&a, xa, ya);
        qkv_batcher_next(&b, xb, yb);
        ck_assert_mem_eq(xa, xb, sizeof xa);
        ck_assert_mem_eq(ya, yb, sizeof ya);
    }
    /* With a given vocabulary, as a resumed run encodes its text. */
    qkv_corpus *again = qkv_corpus_from_text("cab", 3, &file->tok);
    ck_assert_qkv(again);
    ck_assert_int_eq(again->tok.size, 26);
    ck_assert_int_eq(again->ids[0], 2);
    qkv_corpus_free(again);
    qkv_corpus_free(mem);
    qkv_corpus_free(file);
}
END_TEST

START_TEST(test_corpus_from_text_misuse)
{
    ck_assert_ptr_null(qkv_corpus_from_text(NULL, 5, NULL));
    ck_assert_str_eq(qkv_last_error(), "qkv_corpus_from_text: text is NULL");
    ck_assert_ptr_null(qkv_corpus_from_text("abc", 0, NULL));
    ck_assert_str_eq(qkv_last_error(), "qkv_corpus_from_text: the text is empty");
    qkv_tokenizer ab;
    qkv_tokenizer_build(&ab, "ab", 2);
    ck_assert_ptr_null(qkv_corpus_from_text("abca", 4, &ab));
    ck_assert_str_eq(qkv_last_error(), "qkv_corpus_from_text: the text: qkv_encode: character 'c' "
                                       "at position 2 is not in the vocabulary (2 characters)");
    ck_assert_ptr_null(qkv_corpus_load(NULL, NULL));
    ck_assert_str_eq(qkv_last_error(), "qkv_corpus_load: path is NULL");
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, NULL, QKV_SPLIT_TRAIN, 1, 1, 1), -1);
    ck_assert_str_eq(qkv_last_error(), "qkv_batcher_init: c is NULL");
    /* One distinct character is a corpus (a vocabulary of 1), every id 0. */
    qkv_corpus *one = qkv_corpus_from_text("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 30, NULL);
    ck_assert_qkv(one);
    ck_assert_int_eq(one->tok.size, 1);
    ck_assert_int_eq(qkv_batcher_init(&s, one, (qkv_split)2, 2, 4, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "split 2"));
    ck_assert_int_eq(qkv_batcher_init(&s, one, QKV_SPLIT_TRAIN, 2, 4, 1), 0);
    int32_t x[8], y[8];
    qkv_batcher_next(&s, x, y);
    for (int i = 0; i < 8; i++)
        ck_assert(x[i] == 0 && y[i] == 0);
    /* Its val split (3 tokens) is too short for a block of 4: the message says so. */
    ck_assert_int_eq(qkv_batcher_init(&s, one, QKV_SPLIT_VAL, 2, 4, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "the val split has 3 tokens"));
    qkv_corpus_free(one);
    /* A single byte: a corpus whose train split is empty. */
    qkv_corpus *tiny = qkv_corpus_from_text("\n", 1, NULL);
    ck_assert_qkv(tiny);
    ck_assert_uint_eq(tiny->n_train, 0);
    ck_assert_int_eq(qkv_batcher_init(&s, tiny, QKV_SPLIT_TRAIN, 1, 1, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "the train split has 0 tokens"));
    qkv_corpus_free(tiny);
}
END_TEST

/* ---- corpus ---- */

START_TEST(test_missing_file_error)
{
    const char *path = tmpfile_with("nope.txt", NULL, 0);
    ck_assert_ptr_null(qkv_corpus_load(path, NULL));
    char want[256];
    snprintf(want, sizeof want, "qkv_corpus_load: cannot open '%s': No such file or directory", path);
    ck_assert_str_eq(qkv_last_error(), want);
}
END_TEST

START_TEST(test_empty_file_and_directory_errors)
{
    const char *path = tmpfile_with("empty.txt", "", 0);
    ck_assert_ptr_null(qkv_corpus_load(path, NULL));
    char want[256];
    snprintf(want, sizeof want, "qkv_corpus_load: corpus '%s' is empty", path);
    ck_assert_str_eq(qkv_last_error(), want);
    ck_assert_ptr_null(qkv_corpus_load(tmpdir, NULL));
    snprintf(want, sizeof want, "qkv_corpus_load: cannot read '%s': Is a directory", tmpdir);
    ck_assert_str_eq(qkv_last_error(), want);
}
END_TEST

START_TEST(test_split_is_first_90_percent)
{
    size_t lens[] = {1, 7, 10, 1000, 1115394}; /* the last is tiny Shakespeare's length */
    size_t train[] = {0, 6, 9, 900, 1003854};  /* nanoGPT's int(0.9 * n) */
    for (int i = 0; i < 5; i++) {
        qkv_corpus *c = random_corpus("c.txt", lens[i], 1);
        ck_assert_uint_eq(c->len, lens[i]);
        ck_assert_uint_eq(c->n_train, train[i]);
        qkv_corpus_free(c);
    }
}
END_TEST

START_TEST(test_corpus_with_given_vocab)
{
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, "abcdefg", 7);
    const char *path = tmpfile_with("t.txt", "bad\ncab", 7);
    qkv_corpus *c = qkv_corpus_load(path, &tok);
    ck_assert_ptr_null(c);
    char want[256];
    snprintf(want, sizeof want, "corpus '%s': qkv_encode: character '\\n' at position 3", path);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), want));
    path = tmpfile_with("t.txt", "badcab", 6);
    c = qkv_corpus_load(path, &tok);
    ck_assert_qkv(c);
    ck_assert_int_eq(c->tok.size, 7); /* the given vocabulary, not the text's 4 letters */
    ck_assert_int_eq(c->ids[0], 1);
    qkv_corpus_free(c);
}
END_TEST

/* ---- batches ---- */

START_TEST(test_batches_are_windows_shifted_by_one)
{
    qkv_corpus *c = random_corpus("c.txt", 2000, 3);
    enum { B = 8, T = 16 };
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, B, T, 42), 0);
    const int32_t *val = c->ids + c->n_train;
    size_t n_val = c->len - c->n_train;
    int32_t x[B * T], y[B * T];
    for (int round = 0; round < 20; round++) {
        qkv_batcher_next(&s, x, y);
        for (int b = 0; b < B; b++) {
            /* x[b] is some window of the val split and y[b] the same window one later. */
            size_t at = SIZE_MAX;
            for (size_t i = 0; i + T < n_val && at == SIZE_MAX; i++)
                if (memcmp(val + i, x + b * T, T * sizeof(int32_t)) == 0 &&
                    memcmp(val + i + 1, y + b * T, T * sizeof(int32_t)) == 0)
                    at = i;
            ck_assert_msg(at != SIZE_MAX, "row %d is not a window of the val split", b);
        }
    }
    qkv_corpus_free(c);
}
END_TEST

START_TEST(test_batches_depend_only_on_seed)
{
    qkv_corpus *c = random_corpus("c.txt", 5000, 4);
    enum { B = 4, T = 8 };
    qkv_batcher s1, s2, s3;
    ck_assert_int_eq(qkv_batcher_init(&s1, c, QKV_SPLIT_TRAIN, B, T, 7), 0);
    ck_assert_int_eq(qkv_batcher_init(&s2, c, QKV_SPLIT_TRAIN, B, T, 7), 0);
    ck_assert_int_eq(qkv_batcher_init(&s3, c, QKV_SPLIT_TRAIN, B, T, 8), 0);
    int32_t x1[B * T], y1[B * T], x2[B * T], y2[B * T], x3[B * T], y3[B * T];
    for (int round = 0; round < 5; round++) {
        qkv_batcher_next(&s1, x1, y1);
        qkv_batcher_next(&s2, x2, y2);
        qkv_batcher_next(&s3, x3, y3);
        ck_assert_mem_eq(x1, x2, sizeof x1);
        ck_assert_mem_eq(y1, y2, sizeof y1);
        ck_assert(memcmp(x1, x3, sizeof x1) != 0);
    }
    qkv_corpus_free(c);
}
END_TEST

START_TEST(test_sampler_state_restores_next_batch)
{
    qkv_corpus *c = random_corpus("c.txt", 5000, 5);
    enum { B = 4, T = 8 };
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_TRAIN, B, T, 9), 0);
    int32_t x[B * T], y[B * T], x2[B * T], y2[B * T];
    qkv_batcher_next(&s, x, y);
    qkv_rng saved = s.rng; /* what a checkpoint stores */
    qkv_batcher_next(&s, x, y);
    qkv_batcher resumed;
    ck_assert_int_eq(qkv_batcher_init(&resumed, c, QKV_SPLIT_TRAIN, B, T, 12345), 0);
    resumed.rng = saved;
    qkv_batcher_next(&resumed, x2, y2);
    ck_assert_mem_eq(x, x2, sizeof x);
    ck_assert_mem_eq(y, y2, sizeof y);
    qkv_corpus_free(c);
}
END_TEST

START_TEST(test_split_shorter_than_block_is_an_error)
{
    qkv_corpus *c = random_corpus("c.txt", 50, 6); /* train 45, val 5 */
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_TRAIN, 2, 8, 1), 0);
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, 2, 8, 1), -1);
    ck_assert_ptr_nonnull(
        strstr(qkv_last_error(), "the val split has 5 tokens, fewer than block size + 1 = 9"));
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_TRAIN, 2, 45, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "the train split has 45 tokens"));
    /* Exactly block size + 1 is enough: one window, at 0. */
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, 2, 4, 1), 0);
    int32_t x[8], y[8];
    qkv_batcher_next(&s, x, y);
    ck_assert_mem_eq(x, c->ids + c->n_train, 4 * sizeof(int32_t));
    ck_assert_mem_eq(y, c->ids + c->n_train + 1, 4 * sizeof(int32_t));
    qkv_corpus_free(c);
}
END_TEST

static Suite *data_suite(void)
{
    Suite *s = suite_create("data");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_vocab_is_sorted_distinct_bytes);
    tcase_add_test(tc, test_encode_decode_round_trip);
    tcase_add_test(tc, test_encode_names_unknown_character);
    tcase_add_test(tc, test_decode_rejects_bad_id);
    tcase_add_test(tc, test_vocab_from_bytes);
    tcase_add_test(tc, test_corpus_from_text_equals_the_file_corpus);
    tcase_add_test(tc, test_corpus_from_text_misuse);
    tcase_add_test(tc, test_missing_file_error);
    tcase_add_test(tc, test_empty_file_and_directory_errors);
    tcase_add_test(tc, test_split_is_first_90_percent);
    tcase_add_test(tc, test_corpus_with_given_vocab);
    tcase_add_test(tc, test_batches_are_windows_shifted_by_one);
    tcase_add_test(tc, test_batches_depend_only_on_seed);
    tcase_add_test(tc, test_sampler_state_restores_next_batch);
    tcase_add_test(tc, test_split_shorter_than_block_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(data_suite)
