/* The BPE tokenizer against its definition (qkv/bpe.h): the pre-split, training
 * and encoding compared with a slow, plain version written here from the
 * header's words; the ties, overlapping pairs and the early stop by hand; decode
 * undoing encode on any bytes. The oracle is written apart from data/bpe*.c:
 * the text is cut into runs of one class first and spaces handed on after;
 * training recounts every pair of every chunk occurrence per merge; encoding
 * replays the merges in order. */
#include <stdlib.h>

#include "qkv/bpe.h"
#include "data/bpe_internal.h"
#include "testing.h"

/* ---- the definition, slow ---- */

/* 'L' letter (ASCII or any byte >= 0x80), 'N' digit, 'S' whitespace, 'P' the rest. */
static char kind(unsigned char c)
{
    if (c >= 0x80 || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
        return 'L';
    if (c >= '0' && c <= '9')
        return 'N';
    if (strchr(" \t\n\v\f\r", c) && c != 0)
        return 'S';
    return 'P';
}

static size_t ref_split(const unsigned char *text, size_t len, size_t *ends)
{
    size_t n = 0, start = 0;
    while (start < len) {
        size_t end = start + 1; /* the run of one kind at start */
        while (end < len && kind(text[end]) == kind(text[start]))
            end++;
        if (kind(text[start]) == 'S' && end < len && text[end - 1] == ' ') {
            /* the run's last space belongs to the run after it */
            if (end - start > 1)
                ends[n++] = end - 1;
            size_t next = end + 1;
            while (next < len && kind(text[next]) == kind(text[end]))
                next++;
            ends[n++] = next;
            start = next;
        } else {
            ends[n++] = end;
            start = end;
        }
    }
    return n;
}

/* Replace every (l, r) in s[0, *n) by z, left to right. */
static void replace(int32_t *s, size_t *n, int32_t l, int32_t r, int32_t z)
{
    size_t out = 0;
    for (size_t i = 0; i < *n; i++) {
        if (i + 1 < *n && s[i] == l && s[i + 1] == r) {
            s[out++] = z;
            i++;
        } else {
            s[out++] = s[i];
        }
    }
    *n = out;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int ref_train(const unsigned char *text, size_t len, int n_merges, int32_t *merges)
{
    size_t *ends = malloc((len + 1) * sizeof *ends);
    int32_t *sym = malloc((len + 1) * sizeof *sym);
    size_t *n_sym = malloc((len + 1) * sizeof *n_sym);
    uint64_t *pairs = malloc((len + 1) * sizeof *pairs);
    size_t chunks = ref_split(text, len, ends);
    for (size_t i = 0; i < len; i++)
        sym[i] = text[i];
    for (size_t k = 0; k < chunks; k++)
        n_sym[k] = ends[k] - (k ? ends[k - 1] : 0);
    int made = 0;
    for (; made < n_merges; made++) {
        size_t np = 0;
        for (size_t k = 0; k < chunks; k++) {
            const int32_t *s = sym + (k ? ends[k - 1] : 0);
            for (size_t i = 0; i + 1 < n_sym[k]; i++)
                pairs[np++] = (uint64_t)s[i] << 32 | (uint32_t)s[i + 1];
        }
        if (np == 0)
            break;
        /* sorted, equal pairs side by side: the longest run wins, the first (smallest) on a tie */
        qsort(pairs, np, sizeof *pairs, by_key);
        uint64_t best = 0;
        size_t best_n = 0;
        for (size_t i = 0; i < np;) {
            size_t j = i;
            while (j < np && pairs[j] == pairs[i])
                j++;
            if (j - i > best_n)
                best_n = j - i, best = pairs[i];
            i = j;
        }
        int32_t l = (int32_t)(best >> 32), r = (int32_t)(best & 0xffffffff);
        merges[2 * made] = l;
        merges[2 * made + 1] = r;
        for (size_t k = 0; k < chunks; k++)
            replace(sym + (k ? ends[k - 1] : 0), &n_sym[k], l, r, 256 + made);
    }
    free(ends), free(sym), free(n_sym), free(pairs);
    return made;
}

static size_t ref_encode(const int32_t *merges, int n, const unsigned char *text, size_t len,
                  int32_t *ids)
{
    size_t *ends = malloc((len + 1) * sizeof *ends);
    size_t chunks = ref_split(text, len, ends), out = 0;
    for (size_t k = 0; k < chunks; k++) {
        size_t start = k ? ends[k - 1] : 0, m = ends[k] - start;
        for (size_t i = 0; i < m; i++)
            ids[out + i] = text[start + i];
        for (int j = 0; j < n; j++)
            replace(ids + out, &m, merges[2 * j], merges[2 * j + 1], 256 + j);
        out += m;
    }
    free(ends);
    return out;
}

/* ---- helpers ---- */

/* Real text: the opening of Shakespeare's sonnets 1, 2 and 18 (public domain). */
static const char SONNETS[] =
    "From fairest creatures we desire increase,\n"
    "That thereby beauty's rose might never die,\n"
    "But as the riper should by time decease,\n"
    "His tender heir might bear his memory:\n"
    "But thou contracted to thine own bright eyes,\n"
    "Feed'st thy light's flame with self-substantial fuel,\n"
    "Making a famine where abundance lies,\n"
    "Thy self thy foe, to thy sweet self too cruel:\n\n"
    "When forty winters shall besiege thy brow,\n"
    "And dig deep trenches in thy beauty's field,\n"
    "Thy youth's proud livery so gazed on now,\n"
    "Will be a tattered weed of small worth held:\n"
    "Then being asked, where all thy beauty lies,\n"
    "Where all the treasure of thy lusty days;\n"
    "To say, within thine own deep sunken eyes,\n"
    "Were an all-eating shame, and thriftless praise.\n\n"
    "XVIII.  Shall I compare thee to a summer's day?\n"
    "Thou art more lovely and more temperate:\n"
    "Rough winds do shake the darling buds of May,\n"
    "And summer's lease hath all too short a date;\n"
    "Sometime too hot the eye of heaven shines,\n"
    "And often is his gold complexion dimm'd;\n"
    "And every fair from fair sometime declines,\n"
    "By chance or nature's changing course untrimm'd;\n"
    "But thy eternal summer shall not fade,\n"
    "Nor lose possession of that fair thou ow'st;\n"
    "Nor shall Death brag thou wander'st in his shade,\n"
    "When in eternal lines to time thou grow'st:\n"
    "  So long as men can breathe or eyes can see,\n"
    "  So long lives this, and this gives life to thee.  1609\t\r\n";

/* len random bytes drawn from alphabet (n of them) into text. */
static void random_text(qkv_rng *rng, const char *alphabet, int n, unsigned char *text,
                        size_t len)
{
    for (size_t i = 0; i < len; i++)
        text[i] = (unsigned char)alphabet[qkv_rng_below(rng, (uint32_t)n)];
}

/* Alphabets with every class: letters, UTF-8-ish high bytes, digits, spaces, punctuation. */
static const char MIXED[] = "aab  b\n\t9 9,.'\x80\xe2\xff";
static const char WORDY[] = "eeettaoin  s\n,";

/* The merges of bpe (size - 256 of them, 2 each) into a malloc'd array. */
static int32_t *merges_of(const qkv_bpe *bpe)
{
    int n = qkv_bpe_size(bpe) - 256;
    int32_t *m = malloc((size_t)(2 * n + 1) * sizeof *m);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(qkv_bpe_merge(bpe, i, &m[2 * i], &m[2 * i + 1]), 0);
    return m;
}

/* Training on text must give the reference's merges, in order. */
static void check_train(const unsigned char *text, size_t len, int n_merges)
{
    int32_t *want = malloc((size_t)(2 * n_merges + 1) * sizeof *want);
    int n_want = ref_train(text, len, n_merges, want);
    qkv_bpe *bpe = qkv_bpe_train((const char *)text, len, 256 + n_merges);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 256 + n_want);
    int32_t *got = merges_of(bpe);
    for (int i = 0; i < n_want; i++)
        ck_assert_msg(got[2 * i] == want[2 * i] && got[2 * i + 1] == want[2 * i + 1],
                      "merge %d: (%d, %d), the definition's is (%d, %d)", i, got[2 * i],
                      got[2 * i + 1], want[2 * i], want[2 * i + 1]);
    free(got), free(want);
    qkv_bpe_free(bpe);
}

/* Encoding text must give the reference's ids; decoding them gives text back. */
static void check_encode(const qkv_bpe *bpe, const unsigned char *text, size_t len)
{
    int32_t *m = merges_of(bpe);
    int32_t *want = malloc((len + 1) * sizeof *want), *got = malloc((len + 1) * sizeof *got);
    size_t n_want = ref_encode(m, qkv_bpe_size(bpe) - 256, text, len, want);
    long long n = qkv_bpe_encode(bpe, (const char *)text, len, got);
    ck_assert_int_eq(n, (long long)n_want);
    for (size_t i = 0; i < n_want; i++)
        ck_assert_msg(got[i] == want[i], "id %zu is %d, the definition's %d", i, got[i],
                      want[i]);
    char *back = malloc(len + 1);
    ck_assert_int_eq(qkv_bpe_decode(bpe, got, (size_t)n, back, len), (long long)len);
    ck_assert(len == 0 || memcmp(back, text, len) == 0);
    free(m), free(want), free(got), free(back);
}

/* The chunks of text as qkv cuts them, "|" between them, into out. */
static const char *chunks_of(const char *text)
{
    static char out[256];
    size_t len = strlen(text), o = 0;
    for (size_t pos = 0; pos < len;) {
        size_t end = qkv__bpe_chunk_end((const unsigned char *)text, len, pos);
        if (pos)
            out[o++] = '|';
        memcpy(out + o, text + pos, end - pos);
        o += end - pos;
        pos = end;
    }
    out[o] = 0;
    return out;
}

/* ---- the pre-split ---- */

START_TEST(test_split_examples)
{
    ck_assert_str_eq(chunks_of("Hello, world 42!\n"), "Hello|,| world| 42|!|\n");
    ck_assert_str_eq(chunks_of("a  b"), "a| | b");
    ck_assert_str_eq(chunks_of("\n\nHi"), "\n\n|Hi");
    ck_assert_str_eq(chunks_of("x \n"), "x| \n");
    ck_assert_str_eq(chunks_of("it's 3.14"), "it|'|s| 3|.|14");
    ck_assert_str_eq(chunks_of("caf\xc3\xa9 na\xc3\xafve"), "caf\xc3\xa9| na\xc3\xafve");
    ck_assert_str_eq(chunks_of(" ...  "), " ...|  ");
}
END_TEST

START_TEST(test_split_matches_definition)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 11);
    unsigned char text[400];
    size_t want[400];
    for (int trial = 0; trial < 300; trial++) {
        size_t len = 1 + qkv_rng_below(&rng, 399);
        random_text(&rng, MIXED, (int)sizeof MIXED - 1, text, len);
        size_t n = ref_split(text, len, want), k = 0;
        for (size_t pos = 0; pos < len; k++) {
            pos = qkv__bpe_chunk_end(text, len, pos);
            ck_assert_msg(k < n && pos == want[k], "trial %d: chunk %zu ends at %zu, not %zu",
                          trial, k, pos, k < n ? want[k] : 0);
        }
        ck_assert_uint_eq(k, n);
    }
}
END_TEST

/* ---- training ---- */

START_TEST(test_train_matches_definition_on_random_text)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    unsigned char text[3000];
    for (int trial = 0; trial < 12; trial++) {
        size_t len = 200 + qkv_rng_below(&rng, 2800);
        if (trial % 2)
            random_text(&rng, MIXED, (int)sizeof MIXED - 1, text, len);
        else
            random_text(&rng, WORDY, (int)sizeof WORDY - 1, text, len);
        check_train(text, len, 1 + (int)qkv_rng_below(&rng, 120));
    }
}
END_TEST

START_TEST(test_train_matches_definition_on_real_text)
{
    check_train((const unsigned char *)SONNETS, sizeof SONNETS - 1, 300);
}
END_TEST

START_TEST(test_ties_go_to_the_smallest_pair)
{
    /* chunks "ab", " cd": three pairs once each; ' ' (32) < 'a' (97) < 'c' */
    qkv_bpe *bpe = qkv_bpe_train("ab cd", 5, 300);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 259);
    int32_t *m = merges_of(bpe);
    int32_t want[] = {' ', 'c', 'a', 'b', 256, 'd'};
    ck_assert_mem_eq(m, want, sizeof want);
    free(m);
    qkv_bpe_free(bpe);
}
END_TEST

START_TEST(test_overlapping_pairs_count_and_merge_left_to_right)
{
    /* "aaa" holds (a, a) twice and becomes "Z a"; "aaaa" becomes "Z Z" */
    qkv_bpe *bpe = qkv_bpe_train("aaa", 3, 300);
    ck_assert_qkv(bpe);
    int32_t *m = merges_of(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 258);
    ck_assert_mem_eq(m, ((int32_t[]){'a', 'a', 256, 'a'}), 4 * sizeof(int32_t));
    free(m);
    qkv_bpe_free(bpe);
    bpe = qkv_bpe_train("aaaa", 4, 300);
    ck_assert_qkv(bpe);
    m = merges_of(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 258);
    ck_assert_mem_eq(m, ((int32_t[]){'a', 'a', 256, 256}), 4 * sizeof(int32_t));
    free(m);
    qkv_bpe_free(bpe);
}
END_TEST

START_TEST(test_training_stops_when_no_pair_is_left)
{
    qkv_bpe *bpe = qkv_bpe_train("abc, d", 6, 4096); /* "abc" "," " d": 3 merges make all one */
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 259);
    qkv_bpe_free(bpe);
    bpe = qkv_bpe_train("", 0, 4096);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_size(bpe), 256);
    qkv_bpe_free(bpe);
}
END_TEST

/* ---- encoding and decoding ---- */

START_TEST(test_encode_matches_definition)
{
    qkv_bpe *bpe = qkv_bpe_train(SONNETS, sizeof SONNETS - 1, 256 + 250);
    ck_assert_qkv(bpe);
    check_encode(bpe, (const unsigned char *)SONNETS, sizeof SONNETS - 1);
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    unsigned char text[2000];
    for (int trial = 0; trial < 20; trial++) {
        size_t len = qkv_rng_below(&rng, 2000);
        random_text(&rng, WORDY, (int)sizeof WORDY - 1, text, len);
        check_encode(bpe, text, len);
    }
    qkv_bpe_free(bpe);
}
END_TEST

/* Random merges, none made by training: an encoder that does not apply the
 * lowest merge first, or stops early, parts from the replay. */
START_TEST(test_encode_matches_definition_for_random_merges)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 8);
    const char alphabet[] = "abcab";
    int32_t merges[2 * 60];
    unsigned char text[1500];
    for (int trial = 0; trial < 30; trial++) {
        int n = 0;
        while (n < 60) {
            /* halves among the letters and the tokens made so far */
            int32_t h[2];
            for (int k = 0; k < 2; k++) {
                uint32_t pick = qkv_rng_below(&rng, 3 + (uint32_t)n);
                h[k] = pick < 3 ? alphabet[pick] : 256 + (int32_t)(pick - 3);
            }
            bool seen = false;
            for (int j = 0; j < n; j++)
                seen |= merges[2 * j] == h[0] && merges[2 * j + 1] == h[1];
            if (!seen)
                merges[2 * n] = h[0], merges[2 * n + 1] = h[1], n++;
        }
        qkv_bpe *bpe = qkv_bpe_from_merges(merges, n);
        ck_assert_qkv(bpe);
        size_t len = qkv_rng_below(&rng, 1500);
        random_text(&rng, alphabet, 3, text, len);
        check_encode(bpe, text, len);
        qkv_bpe_free(bpe);
    }
}
END_TEST

START_TEST(test_round_trip_of_random_bytes)
{
    qkv_bpe *bpe = qkv_bpe_train(SONNETS, sizeof SONNETS - 1, 256 + 200);
    ck_assert_qkv(bpe);
    qkv_rng rng;
    qkv_rng_seed(&rng, 99);
    enum { MAX = 5000 };
    static unsigned char text[MAX];
    static char back[MAX];
    static int32_t ids[MAX];
    for (int trial = 0; trial < 300; trial++) {
        size_t len = qkv_rng_below(&rng, MAX);
        for (size_t i = 0; i < len; i++) /* any byte, and stretches of the sonnets */
            text[i] = trial % 3 ? (unsigned char)qkv_rng_below(&rng, 256)
                                : (unsigned char)SONNETS[(i * 7 + (size_t)trial) % (sizeof SONNETS - 1)];
        long long n = qkv_bpe_encode(bpe, (const char *)text, len, ids);
        ck_assert(n >= 0 && (size_t)n <= len);
        for (long long i = 0; i < n; i++)
            ck_assert(ids[i] >= 0 && ids[i] < qkv_bpe_size(bpe));
        ck_assert_int_eq(qkv_bpe_decode(bpe, ids, (size_t)n, NULL, 0), (long long)len);
        ck_assert_int_eq(qkv_bpe_decode(bpe, ids, (size_t)n, back, len), (long long)len);
        ck_assert(len == 0 || memcmp(back, text, len) == 0);
    }
    qkv_bpe_free(bpe);
}
END_TEST

START_TEST(test_token_bytes_are_its_halves)
{
    qkv_bpe *bpe = qkv_bpe_train(SONNETS, sizeof SONNETS - 1, 256 + 150);
    ck_assert_qkv(bpe);
    for (int t = 0; t < 256; t++) {
        size_t n;
        const char *b = qkv_bpe_token(bpe, t, &n);
        ck_assert(b && n == 1 && (unsigned char)b[0] == t);
    }
    for (int i = 0; i < qkv_bpe_size(bpe) - 256; i++) {
        int32_t l, r;
        size_t n, nl, nr;
        ck_assert_int_eq(qkv_bpe_merge(bpe, i, &l, &r), 0);
        const char *b = qkv_bpe_token(bpe, 256 + i, &n);
        const char *bl = qkv_bpe_token(bpe, l, &nl), *br = qkv_bpe_token(bpe, r, &nr);
        ck_assert_uint_eq(n, nl + nr);
        ck_assert(memcmp(b, bl, nl) == 0 && memcmp(b + nl, br, nr) == 0);
    }
    qkv_bpe_free(bpe);
}
END_TEST

START_TEST(test_decode_cap_and_the_last_id)
{
    qkv_bpe *bpe = qkv_bpe_train("hello hello", 11, 300);
    ck_assert_qkv(bpe);
    int32_t ids[11];
    long long n = qkv_bpe_encode(bpe, "hello hello", 11, ids);
    ck_assert_int_eq(n, 2); /* "hello", " hello" */
    char out[11];
    ck_assert_int_eq(qkv_bpe_decode(bpe, ids, 2, out, 10), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "cap"));
    ck_assert_int_eq(qkv_bpe_decode(bpe, ids, 2, out, 11), 11);
    /* the first id past the end, and the last one */
    int32_t past = qkv_bpe_size(bpe), last = past - 1;
    ck_assert_int_eq(qkv_bpe_decode(bpe, &past, 1, out, 11), -1);
    ck_assert_int_eq(qkv_bpe_decode(bpe, &last, 1, out, 11), 6); /* " hello" */
    size_t n_last;
    ck_assert_ptr_null(qkv_bpe_token(bpe, past, &n_last));
    ck_assert_ptr_nonnull(qkv_bpe_token(bpe, last, &n_last));
    qkv_bpe_free(bpe);
}
END_TEST

/* With no memory at all every function that allocates fails with a message
 * naming it, and nothing crashes or leaks a half-made tokenizer. */
static void without_memory(void *bpe)
{
    qkv_clear_error();
    ck_assert_ptr_null(qkv_bpe_train(SONNETS, sizeof SONNETS - 1, 300));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_bpe_train: out of memory"));
    ck_assert_ptr_null(qkv_bpe_from_merges((int32_t[]){'a', 'b'}, 1));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_bpe_from_merges: out of memory"));
    int32_t ids[sizeof SONNETS];
    ck_assert_int_eq(qkv_bpe_encode(bpe, SONNETS, sizeof SONNETS - 1, ids), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_bpe_encode: out of memory"));
}

START_TEST(test_no_memory_is_a_message)
{
    qkv_bpe *bpe = qkv_bpe_train(SONNETS, sizeof SONNETS - 1, 300);
    ck_assert_qkv(bpe);
    qkv_test_without_memory(without_memory, bpe);
    qkv_bpe_free(bpe);
}
END_TEST

static Suite *bpe_suite(void)
{
    Suite *s = suite_create("bpe");
    TCase *tc = tcase_create("definitions");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_split_examples);
    tcase_add_test(tc, test_split_matches_definition);
    tcase_add_test(tc, test_train_matches_definition_on_random_text);
    tcase_add_test(tc, test_train_matches_definition_on_real_text);
    tcase_add_test(tc, test_ties_go_to_the_smallest_pair);
    tcase_add_test(tc, test_overlapping_pairs_count_and_merge_left_to_right);
    tcase_add_test(tc, test_training_stops_when_no_pair_is_left);
    tcase_add_test(tc, test_encode_matches_definition);
    tcase_add_test(tc, test_encode_matches_definition_for_random_merges);
    tcase_add_test(tc, test_round_trip_of_random_bytes);
    tcase_add_test(tc, test_token_bytes_are_its_halves);
    tcase_add_test(tc, test_decode_cap_and_the_last_id);
    tcase_add_test(tc, test_no_memory_is_a_message);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bpe_suite)
