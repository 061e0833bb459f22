/* The date-normalisation generator (models/seq2seq/dates.c): formats, determinism, a
 * round trip through an independent parser, the train/test split, the vocabulary. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

#include "qkv/dates.h"
#include "testing.h"

#define N_SAMPLES 20000

/* ck_assert_msg that costs nothing when it passes: Check reports each passing
 * assertion to its parent process, which is slow inside loops of 20,000. */
#define require(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

typedef struct {
    char in[QKV_DATES_INPUT_MAX + 1];
    char out[QKV_DATES_OUTPUT_LEN + 1];
    int format;
} pair;

/* n pairs from seed; split: -1 for any, 0 for train, 1 for test. */
static pair *draw(uint64_t seed, int n, int split)
{
    pair *p = malloc((size_t)n * sizeof *p);
    ck_assert_ptr_nonnull(p);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        p[i].format =
            split < 0 ? qkv_dates_sample(&rng, p[i].in, sizeof p[i].in, p[i].out, sizeof p[i].out)
                      : qkv_dates_sample_split(&rng, split == 1, p[i].in, sizeof p[i].in, p[i].out,
                                               sizeof p[i].out);
        require(p[i].format >= 0, "sample %d: %s", i, qkv_last_error());
    }
    return p;
}

/* ---- an independent reader of dates, written without looking at models/seq2seq/dates.c ---- */

static const char *const months[12] = {"january",   "february", "march",    "april",
                                       "may",       "june",     "july",     "august",
                                       "september", "october",  "november", "december"};
static const char *const weekdays[7] = {"sunday",   "monday", "tuesday", "wednesday",
                                        "thursday", "friday", "saturday"};

static bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m)
{
    static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : n[m - 1];
}

/* Day of the week by Sakamoto's method, 0 = Sunday. */
static int day_of_week(int y, int m, int d)
{
    static const int t[12] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
    if (m < 3)
        y--;
    return (y + y / 4 - y / 100 + y / 400 + t[m - 1] + d) % 7;
}

/* Index of word (lower case) in names, by full name or first three letters; -1 if none. */
static int find_name(const char *word, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(word, names[i]) == 0 || (strlen(word) == 3 && strncmp(word, names[i], 3) == 0))
            return i;
    return -1;
}

static const char *suffix_for(int day)
{
    if (day % 100 >= 11 && day % 100 <= 13)
        return "th";
    return day % 10 == 1 ? "st" : day % 10 == 2 ? "nd" : day % 10 == 3 ? "rd" : "th";
}

/* A year written with `digits` digits: two-digit years pivot at 50; -1 for other widths. */
static int full_year(int y, int digits)
{
    if (digits == 2)
        return y + (y >= 50 ? 1900 : 2000);
    return digits == 4 ? y : -1;
}

/* Read s as "YYYY-MM-DD" into buf; the weekday named in s (if any) must be right.
 * Returns false when s is not a date this reader understands. */
static bool read_date(const char *s, char *buf, size_t cap)
{
    int nums[3], digits[3], n = 0, month = 0, weekday = -1;
    char sep = 0;
    for (const char *p = s; *p;) {
        if (isdigit((unsigned char)*p)) {
            if (n == 3)
                return false;
            nums[n] = 0, digits[n] = 0;
            for (; isdigit((unsigned char)*p); p++, digits[n]++)
                nums[n] = nums[n] * 10 + (*p - '0');
            if (isalpha((unsigned char)*p)) { /* an ordinal: the suffix must fit the number */
                if (tolower((unsigned char)p[0]) != suffix_for(nums[n])[0] ||
                    tolower((unsigned char)p[1]) != suffix_for(nums[n])[1])
                    return false;
                p += 2;
            }
            n++;
        } else if (isalpha((unsigned char)*p)) {
            char word[16];
            size_t len = 0;
            for (; isalpha((unsigned char)*p); p++)
                if (len + 1 < sizeof word)
                    word[len++] = (char)tolower((unsigned char)*p);
            word[len] = '\0';
            int i;
            if (strcmp(word, "of") == 0)
                continue;
            if ((i = find_name(word, months, 12)) >= 0)
                month = i + 1;
            else if ((i = find_name(word, weekdays, 7)) >= 0)
                weekday = i;
            else
                return false;
        } else {
            if (strchr("/.-", *p) && !sep)
                sep = *p;
            p++;
        }
    }
    int y, m, d;
    if (month) { /* a named month: the other two numbers are the day and the year */
        if (n != 2)
            return false;
        int yi = digits[0] == 4 ? 0 : 1; /* the four-digit one, else the last */
        y = full_year(nums[yi], digits[yi]), m = month, d = nums[1 - yi];
    } else {
        if (n != 3)
            return false;
        int order[3]; /* positions of year, month, day */
        if (sep == '/')
            order[0] = 2, order[1] = 0, order[2] = 1;
        else if (sep == '.')
            order[0] = 2, order[1] = 1, order[2] = 0;
        else if (sep == '-')
            order[0] = 0, order[1] = 1, order[2] = 2;
        else
            return false;
        y = full_year(nums[order[0]], digits[order[0]]);
        m = nums[order[1]], d = nums[order[2]];
    }
    if (y < 0 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return false;
    if (weekday >= 0 && weekday != day_of_week(y, m, d))
        return false;
    snprintf(buf, cap, "%04d-%02d-%02d", y, m, d);
    return true;
}

/* ---- tests ---- */

START_TEST(test_each_format_on_a_known_date)
{
    char buf[QKV_DATES_INPUT_MAX + 1];
    for (int f = 0; f < QKV_DATES_N_FORMATS; f++) {
        ck_assert_int_gt(qkv_dates_format(buf, sizeof buf, f, QKV_DATES_CAPITALISED, 1998, 3, 3),
                         0);
        ck_assert_str_eq(buf, qkv_dates_format_name(f));
    }
    ck_assert_ptr_null(qkv_dates_format_name(QKV_DATES_N_FORMATS));
    struct {
        int format;
        qkv_dates_case casing;
        int y, m, d;
        const char *want;
    } cases[] = {
        {7, QKV_DATES_UPPER, 2011, 7, 4, "4TH OF JULY 2011"},
        {1, QKV_DATES_LOWER, 2001, 9, 11, "september 11th, 2001"},
        {1, QKV_DATES_CAPITALISED, 1962, 8, 22, "August 22nd, 1962"},
        {1, QKV_DATES_CAPITALISED, 1962, 8, 21, "August 21st, 1962"},
        {7, QKV_DATES_CAPITALISED, 1962, 8, 13, "13th of August 1962"},
        {7, QKV_DATES_CAPITALISED, 1962, 8, 23, "23rd of August 1962"},
        {5, QKV_DATES_CAPITALISED, 2049, 12, 31, "Fri Dec 31 2049"},
        {5, QKV_DATES_UPPER, 1950, 1, 1, "SUN JAN 1 1950"},
        {11, QKV_DATES_CAPITALISED, 2000, 2, 29, "Tuesday, February 29, 2000"},
        {11, QKV_DATES_CAPITALISED, 2049, 9, 29, "Wednesday, September 29, 2049"},
        {3, QKV_DATES_CAPITALISED, 2003, 1, 5, "01/05/03"},
        {9, QKV_DATES_LOWER, 1950, 11, 30, "nov 30 50"},
        {10, QKV_DATES_CAPITALISED, 1999, 12, 24, "24.12.1999"},
        {12, QKV_DATES_LOWER, 2024, 5, 9, "09-may-2024"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = qkv_dates_format(buf, sizeof buf, cases[i].format, cases[i].casing, cases[i].y,
                                 cases[i].m, cases[i].d);
        ck_assert_int_eq(n, (int)strlen(cases[i].want));
        ck_assert_str_eq(buf, cases[i].want);
    }
}
END_TEST

START_TEST(test_bad_requests_fail_with_a_message)
{
    char buf[QKV_DATES_INPUT_MAX + 1], out[QKV_DATES_OUTPUT_LEN + 1];
    const int bad[][3] = {{2001, 2, 29},      {1949, 12, 31},
                          {2050, 1, 1},       {2000, 13, 1},
                          {2000, 0, 1},       {2000, 4, 31},
                          {2000, 4, 0},       {INT_MIN, 1, 1},
                          {2000, 1, INT_MAX}, {INT_MAX, INT_MIN, INT_MIN}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qkv_clear_error();
        ck_assert_int_eq(qkv_dates_format(buf, sizeof buf, 0, QKV_DATES_CAPITALISED, bad[i][0],
                                          bad[i][1], bad[i][2]),
                         -1);
        ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is not a date"));
    }
    ck_assert_int_eq(qkv_dates_format(buf, sizeof buf, -1, QKV_DATES_CAPITALISED, 2000, 1, 1), -1);
    ck_assert_int_eq(
        qkv_dates_format(buf, sizeof buf, QKV_DATES_N_FORMATS, QKV_DATES_UPPER, 2000, 1, 1), -1);
    ck_assert_int_eq(qkv_dates_format(buf, 10, 11, QKV_DATES_CAPITALISED, 2000, 1, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "buffer"));
    ck_assert_int_eq(qkv_dates_format(buf, 11, 8, QKV_DATES_CAPITALISED, 2048, 2, 29), 10);

    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    ck_assert_int_eq(qkv_dates_sample(&rng, buf, QKV_DATES_INPUT_MAX, out, sizeof out), -1);
    ck_assert_int_eq(qkv_dates_sample(&rng, buf, sizeof buf, out, QKV_DATES_OUTPUT_LEN), -1);
    ck_assert_int_eq(qkv_dates_sample_split(&rng, true, buf, sizeof buf, out, 3), -1);
}
END_TEST

START_TEST(test_same_seed_same_pairs)
{
    pair *a = draw(42, 500, -1), *b = draw(42, 500, -1), *c = draw(43, 500, -1);
    int differ = 0;
    for (int i = 0; i < 500; i++) {
        ck_assert_str_eq(a[i].in, b[i].in);
        ck_assert_str_eq(a[i].out, b[i].out);
        ck_assert_int_eq(a[i].format, b[i].format);
        differ += strcmp(a[i].in, c[i].in) != 0;
    }
    ck_assert_int_gt(differ, 450);
    /* The first pairs of seed 42 are fixed: a change here changes every data set. */
    const char *golden[][2] = {
        {"1983 aug 03", "1983-08-03"},
        {"May 16, 1980", "1980-05-16"},
        {"19 FEBRUARY 1970", "1970-02-19"},
    };
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(a[i].in, golden[i][0]);
        ck_assert_str_eq(a[i].out, golden[i][1]);
    }
    free(a), free(b), free(c);
}
END_TEST

START_TEST(test_outputs_are_valid_iso_dates_in_range)
{
    pair *p = draw(7, N_SAMPLES, -1);
    int first_year = 9999, last_year = 0;
    for (int i = 0; i < N_SAMPLES; i++) {
        const char *o = p[i].out;
        require(strlen(o) == QKV_DATES_OUTPUT_LEN, "output \"%s\"", o);
        require(strlen(p[i].in) <= QKV_DATES_INPUT_MAX, "input \"%s\"", p[i].in);
        for (int k = 0; k < 10; k++)
            require(k == 4 || k == 7 ? o[k] == '-' : isdigit((unsigned char)o[k]), "%s", o);
        int y = atoi(o), m = atoi(o + 5), d = atoi(o + 8);
        require(y >= 1950 && y <= 2049 && m >= 1 && m <= 12 && d >= 1 && d <= days_in_month(y, m),
                "%s", o);
        first_year = y < first_year ? y : first_year;
        last_year = y > last_year ? y : last_year;
    }
    ck_assert_int_eq(first_year, 1950);
    ck_assert_int_eq(last_year, 2049);
    free(p);
}
END_TEST

START_TEST(test_every_input_reads_back_as_its_output)
{
    pair *p = draw(8, N_SAMPLES, -1);
    for (int i = 0; i < N_SAMPLES; i++) {
        char iso[32];
        require(read_date(p[i].in, iso, sizeof iso), "cannot read \"%s\" (format %d)", p[i].in,
                p[i].format);
        require(strcmp(iso, p[i].out) == 0, "\"%s\" reads as %s, generator says %s", p[i].in, iso,
                p[i].out);
    }
    free(p);
}
END_TEST

START_TEST(test_weekday_names_are_true)
{
    /* Sakamoto's method against the generator, day by day across the whole range. */
    char buf[QKV_DATES_INPUT_MAX + 1];
    for (int y = 1950; y <= 2049; y++)
        for (int m = 1; m <= 12; m++)
            for (int d = 1; d <= days_in_month(y, m); d++) {
                require(qkv_dates_format(buf, sizeof buf, 11, QKV_DATES_LOWER, y, m, d) > 0,
                        "%d-%d-%d", y, m, d);
                const char *want = weekdays[day_of_week(y, m, d)];
                require(strncmp(buf, want, strlen(want)) == 0, "%s: want %s", buf, want);
            }
}
END_TEST

static int cmp_pair(const void *a, const void *b)
{
    return strcmp(((const pair *)a)->in, ((const pair *)b)->in);
}

START_TEST(test_train_and_test_share_no_input)
{
    pair *train = draw(9, N_SAMPLES, 0), *test = draw(10, N_SAMPLES / 4, 1);
    for (int i = 0; i < N_SAMPLES; i++)
        require(!qkv_dates_is_test(train[i].in), "%s", train[i].in);
    for (int i = 0; i < N_SAMPLES / 4; i++)
        require(qkv_dates_is_test(test[i].in), "%s", test[i].in);
    qsort(train, N_SAMPLES, sizeof *train, cmp_pair);
    for (int i = 0; i < N_SAMPLES / 4; i++)
        require(!bsearch(&test[i], train, N_SAMPLES, sizeof *train, cmp_pair),
                "\"%s\" is in both splits", test[i].in);
    /* The split is a fair share of all inputs, not a handful of formats. */
    pair *any = draw(11, N_SAMPLES, -1);
    int n_test = 0, test_formats[QKV_DATES_N_FORMATS] = {0};
    for (int i = 0; i < N_SAMPLES; i++)
        if (qkv_dates_is_test(any[i].in))
            n_test++, test_formats[any[i].format]++;
    double share = 100.0 * n_test / N_SAMPLES;
    ck_assert_msg(share > QKV_DATES_TEST_PERCENT - 1.5 && share < QKV_DATES_TEST_PERCENT + 1.5,
                  "test share %.2f%%", share);
    for (int f = 0; f < QKV_DATES_N_FORMATS; f++)
        ck_assert_int_gt(test_formats[f], 50);
    free(train), free(test), free(any);
}
END_TEST

/* Assert every character of s is in vocab and mark it seen. */
static void mark_chars(const char *s, const char *vocab, bool *seen)
{
    for (const char *c = s; *c; c++) {
        require(strchr(vocab, *c), "'%c' in \"%s\" is not in the vocabulary", *c, s);
        seen[(unsigned char)*c] = true;
    }
}

START_TEST(test_vocabulary_is_exactly_the_characters_used)
{
    const char *vocab = qkv_dates_vocab();
    for (size_t i = 1; vocab[i]; i++)
        ck_assert_msg(vocab[i - 1] < vocab[i], "vocabulary not sorted or repeats at %zu", i);
    bool seen[256] = {false};
    pair *p = draw(12, N_SAMPLES, -1);
    for (int i = 0; i < N_SAMPLES; i++) {
        mark_chars(p[i].in, vocab, seen);
        mark_chars(p[i].out, vocab, seen);
    }
    for (const char *v = vocab; *v; v++)
        ck_assert_msg(seen[(unsigned char)*v], "'%c' is in the vocabulary but never used", *v);
    free(p);
}
END_TEST

START_TEST(test_all_formats_and_cases_occur)
{
    pair *p = draw(13, N_SAMPLES, -1);
    int per_format[QKV_DATES_N_FORMATS] = {0};
    int upper = 0, lower = 0, capitalised = 0;
    for (int i = 0; i < N_SAMPLES; i++) {
        per_format[p[i].format]++;
        const char *s = p[i].in;
        bool has_upper = false, has_lower = false;
        for (; *s; s++) {
            has_upper |= isupper((unsigned char)*s) != 0;
            has_lower |= islower((unsigned char)*s) != 0;
        }
        upper += has_upper && !has_lower;
        lower += has_lower && !has_upper;
        capitalised += has_upper && has_lower;
    }
    for (int f = 0; f < QKV_DATES_N_FORMATS; f++) /* uniform: N/13 = 1538 each on average */
        ck_assert_msg(per_format[f] > 1300 && per_format[f] < 1800, "format %d: %d", f,
                      per_format[f]);
    ck_assert_int_gt(upper, 3000);
    ck_assert_int_gt(lower, 3000);
    ck_assert_int_gt(capitalised, 3000);
    free(p);
}
END_TEST

static Suite *dates_suite(void)
{
    Suite *s = suite_create("dates");
    TCase *tc = tcase_create("dates");
    tcase_add_test(tc, test_each_format_on_a_known_date);
    tcase_add_test(tc, test_bad_requests_fail_with_a_message);
    tcase_add_test(tc, test_same_seed_same_pairs);
    tcase_add_test(tc, test_outputs_are_valid_iso_dates_in_range);
    tcase_add_test(tc, test_every_input_reads_back_as_its_output);
    tcase_add_test(tc, test_weekday_names_are_true);
    tcase_add_test(tc, test_train_and_test_share_no_input);
    tcase_add_test(tc, test_vocabulary_is_exactly_the_characters_used);
    tcase_add_test(tc, test_all_formats_and_cases_occur);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(dates_suite)
