/* qkv/dates.h — a synthetic character-level task: human-written dates to ISO 8601.
 *
 * Each sample is one date between 1950-01-01 and 2049-12-31 (uniform over
 * days) written in one of QKV_DATES_N_FORMATS formats ("3 March 1998",
 * "Tue Mar 3 1998", "03/03/98", ...), in capitalised, UPPER or lower case;
 * the target is the same date as "1998-03-03". An encoder-decoder learns to
 * map one to the other, character by character.
 *
 * Conventions: slashes are US order (MM/DD/YY, MM/DD/YYYY), dots are European
 * order (D.M.YYYY), dashes lead with the year (YYYY-MM-DD) unless the month is
 * a name (DD-Mon-YYYY). A two-digit year YY means 19YY when YY >= 50 and
 * 20YY otherwise, which is exactly the sampled range, so every input string
 * names one date. Weekday names are the true day of the week.
 *
 * Train and test are split by the input string itself (a hash of it), so the
 * two sets never share an input, whatever the seeds; the same date may still
 * appear in both, written differently, which is the point: the test set
 * measures whether the model learnt to read formats, not memorised strings.
 *
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 7);
 *     char in[QKV_DATES_INPUT_MAX + 1], out[QKV_DATES_OUTPUT_LEN + 1];
 *     if (qkv_dates_sample_split(&rng, false, in, sizeof in, out, sizeof out) < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *     // in = "4th of JULY 2011", out = "2011-07-04" (for example)
 */
#ifndef QKV_DATES_H
#define QKV_DATES_H

#include "qkv/base.h"
#include "qkv/rng.h"

QKV_BEGIN_DECLS

/* Longest input in characters (an input buffer needs one more for the NUL). */
#define QKV_DATES_INPUT_MAX 32

/* Length of every output, "YYYY-MM-DD" (an output buffer needs one more for the NUL). */
#define QKV_DATES_OUTPUT_LEN 10

/* How many input formats there are; formats are numbered 0 .. QKV_DATES_N_FORMATS-1. */
#define QKV_DATES_N_FORMATS 13

/* Percentage of input strings that belong to the test split. */
#define QKV_DATES_TEST_PERCENT 10

/* The case an input is written in. */
typedef enum qkv_dates_case {
    QKV_DATES_CAPITALISED, /* "Tuesday, March 3, 1998", "3rd of March 1998" */
    QKV_DATES_UPPER,       /* "TUESDAY, MARCH 3, 1998", "3RD OF MARCH 1998" */
    QKV_DATES_LOWER,       /* "tuesday, march 3, 1998", "3rd of march 1998" */
} qkv_dates_case;

/* Every character that can appear in an input or an output, in ASCII order,
 * NUL-terminated: a model can size its vocabulary before seeing any data. */
const char *qkv_dates_vocab(void);

/* Format number `format` shown on 1998-03-03, e.g. "Tue Mar 3 1998"; NULL when out of range. */
const char *qkv_dates_format_name(int format);

/* Write year-month-day in `format` and `casing` into input (in_len bytes,
 * NUL-terminated); returns the length written, or -1 (with a message) for a
 * bad format, a date outside 1950-01-01 .. 2049-12-31 or a short buffer. */
int qkv_dates_format(char *input, size_t in_len, int format, qkv_dates_case casing, int year,
                     int month, int day);

/* Draw one pair from rng: a date, a format and a case. Writes the input
 * (in_len >= QKV_DATES_INPUT_MAX + 1) and the ISO output (out_len >=
 * QKV_DATES_OUTPUT_LEN + 1); returns the format number, or -1 (with a
 * message) when a buffer is too small. Ignores the train/test split. */
int qkv_dates_sample(qkv_rng *rng, char *input, size_t in_len, char *output, size_t out_len);

/* Like qkv_dates_sample, but draws until the input belongs to the test split
 * (test = true) or to the training split (test = false). */
int qkv_dates_sample_split(qkv_rng *rng, bool test, char *input, size_t in_len, char *output,
                           size_t out_len);

/* Whether an input string belongs to the test split: a fixed hash of its
 * characters, so it is the same on every run and machine. */
bool qkv_dates_is_test(const char *input);

QKV_END_DECLS
#endif
