/* The date-normalisation task (see qkv/dates.h). */
#include "qkv/dates.h"

#include <ctype.h>
#include <string.h>

#include "tensor/check.h"

/* Formats as small templates, read by put_field():
 *   %d day   %D day, two digits   %o day as an ordinal ("3rd")
 *   %m month %M month, two digits %B month name  %b its first three letters
 *   %A weekday name  %a its first three letters  %Y year  %y year, two digits
 * Everything else is copied as it is. */
static const struct {
    const char *template; /* how to write a date */
    const char *example;  /* 1998-03-03 written so */
} formats[QKV_DATES_N_FORMATS] = {
    {"%d %B %Y", "3 March 1998"},
    {"%B %o, %Y", "March 3rd, 1998"},
    {"%B %d, %Y", "March 3, 1998"},
    {"%M/%D/%y", "03/03/98"},
    {"%M/%D/%Y", "03/03/1998"},
    {"%a %b %d %Y", "Tue Mar 3 1998"},
    {"%Y %b %D", "1998 Mar 03"},
    {"%o of %B %Y", "3rd of March 1998"},
    {"%Y-%M-%D", "1998-03-03"},
    {"%b %d %y", "Mar 3 98"},
    {"%d.%m.%Y", "3.3.1998"},
    {"%A, %B %d, %Y", "Tuesday, March 3, 1998"},
    {"%D-%b-%Y", "03-Mar-1998"},
};

static const char *const month_names[12] = {"January", "February", "March",     "April",
                                            "May",     "June",     "July",      "August",
                                            "September", "October", "November", "December"};

/* Indexed by days since 1970-01-01 modulo 7: that day was a Thursday. */
static const char *const weekday_names[7] = {"Thursday", "Friday",  "Saturday", "Sunday",
                                             "Monday",   "Tuesday", "Wednesday"};

/* The letters are those of the names above, "st nd rd th" and "of", in both cases. */
static const char vocab[] = " ,-./0123456789ABCDEFGHIJLMNOPRSTUVWYabcdefghijlmnoprstuvwy";

const char *qkv_dates_vocab(void) { return vocab; }

const char *qkv_dates_format_name(int format)
{
    if (format >= 0 && format < QKV_DATES_N_FORMATS)
        return formats[format].example;
    qkv_set_error("qkv_dates_format_name: format %d is not in 0..%d", format,
                  QKV_DATES_N_FORMATS - 1);
    return NULL;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil): counting years from March puts the leap day last. */
static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;                                    /* [0, 399] */
    long doy = (153L * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

/* The inverse of days_from_civil. */
static void civil_from_days(long z, int *y, int *m, int *d)
{
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

/* The sampled range, as day numbers. */
#define FIRST_DAY days_from_civil(1950, 1, 1)
#define LAST_DAY days_from_civil(2049, 12, 31)

/* The format that is also the output: YYYY-MM-DD. */
enum { ISO_FORMAT = 8 };

static const char *ordinal_suffix(int day)
{
    if (day >= 11 && day <= 13)
        return "th";
    switch (day % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
    }
}

/* A string being written into a fixed buffer; `len` keeps counting past the
 * end so the caller can tell the buffer was too short. */
typedef struct {
    char *buf;  /* destination */
    size_t cap; /* its size in bytes, including the NUL */
    size_t len; /* characters wanted so far */
} text;

static void put(text *t, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++, t->len++)
        if (t->len + 1 < t->cap)
            t->buf[t->len] = s[i];
}

static void put_str(text *t, const char *s) { put(t, s, strlen(s)); }

static void put_int(text *t, int v, int width)
{
    char digits[12];
    int n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0 || n < width);
    while (n > 0)
        put(t, &digits[--n], 1);
}

/* Write the field named by template letter c for the date. */
static void put_field(text *t, char c, int y, int m, int d, long days)
{
    const char *weekday = weekday_names[((days % 7) + 7) % 7];
    switch (c) {
    case 'd': put_int(t, d, 1); break;
    case 'D': put_int(t, d, 2); break;
    case 'o': put_int(t, d, 1); put_str(t, ordinal_suffix(d)); break;
    case 'm': put_int(t, m, 1); break;
    case 'M': put_int(t, m, 2); break;
    case 'B': put_str(t, month_names[m - 1]); break;
    case 'b': put(t, month_names[m - 1], 3); break;
    case 'A': put_str(t, weekday); break;
    case 'a': put(t, weekday, 3); break;
    case 'Y': put_int(t, y, 4); break;
    case 'y': put_int(t, y % 100, 2); break;
    default: put(t, &c, 1); break;
    }
}

/* Write one date from its day number; returns the length or -1 when buf is too short. */
static int write_date(char *buf, size_t cap, int format, qkv_dates_case casing, long days)
{
    int y, m, d;
    civil_from_days(days, &y, &m, &d);
    text t = {buf, cap, 0};
    for (const char *p = formats[format].template; *p; p++) {
        if (*p == '%')
            put_field(&t, *++p, y, m, d, days);
        else
            put(&t, p, 1);
    }
    if (t.len + 1 > cap)
        return qkv_set_error(
            "qkv_dates_format: a %zu-byte buffer cannot hold the %zu characters of format %d", cap,
            t.len, format);
    buf[t.len] = '\0';
    for (size_t i = 0; i < t.len; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (casing == QKV_DATES_UPPER)
            buf[i] = (char)toupper(ch);
        else if (casing == QKV_DATES_LOWER)
            buf[i] = (char)tolower(ch);
    }
    return (int)t.len;
}

int qkv_dates_format(char *input, size_t in_len, int format, qkv_dates_case casing, int year,
                     int month, int day)
{
    const char *fn = "qkv_dates_format";
    if (qkv__null(fn, "input", input))
        return -1;
    if (format < 0 || format >= QKV_DATES_N_FORMATS)
        return qkv_set_error("%s: format %d is not in 0..%d", fn, format, QKV_DATES_N_FORMATS - 1);
    if (casing != QKV_DATES_CAPITALISED && casing != QKV_DATES_UPPER && casing != QKV_DATES_LOWER)
        return qkv_set_error("%s: unknown case %d (not a qkv_dates_case)", fn, (int)casing);
    /* A date is valid when it survives the round trip through a day number
     * (the coarse range check first keeps that arithmetic far from overflow). */
    int y = 0, m = 0, d = 0;
    long days = 0;
    if (year >= 1950 && year <= 2049 && month >= 1 && month <= 12 && day >= 1 && day <= 31) {
        days = days_from_civil(year, month, day);
        civil_from_days(days, &y, &m, &d);
    }
    if (y != year || m != month || d != day)
        return qkv_set_error("qkv_dates_format: %d-%d-%d is not a date between 1950-01-01 and "
                             "2049-12-31",
                             year, month, day);
    return write_date(input, in_len, format, casing, days);
}

/* qkv_dates_sample, with fn naming the public function in a message. */
static int sample_in(const char *fn, qkv_rng *rng, char *input, size_t in_len, char *output,
                     size_t out_len)
{
    if (qkv__null(fn, "rng", rng) || qkv__null(fn, "input", input) ||
        qkv__null(fn, "output", output))
        return -1;
    if (in_len < QKV_DATES_INPUT_MAX + 1 || out_len < QKV_DATES_OUTPUT_LEN + 1)
        return qkv_set_error("%s: buffers of %zu and %zu bytes are too small (need %d and %d)", fn,
                             in_len, out_len, QKV_DATES_INPUT_MAX + 1, QKV_DATES_OUTPUT_LEN + 1);
    long days = FIRST_DAY + (long)qkv_rng_below(rng, (uint64_t)(LAST_DAY - FIRST_DAY + 1));
    int format = (int)qkv_rng_below(rng, QKV_DATES_N_FORMATS);
    qkv_dates_case casing = (qkv_dates_case)qkv_rng_below(rng, 3);
    if (write_date(input, in_len, format, casing, days) < 0 ||
        write_date(output, out_len, ISO_FORMAT, QKV_DATES_CAPITALISED, days) < 0)
        return -1;
    return format;
}

int qkv_dates_sample(qkv_rng *rng, char *input, size_t in_len, char *output, size_t out_len)
{
    return sample_in("qkv_dates_sample", rng, input, in_len, output, out_len);
}

int qkv_dates_sample_split(qkv_rng *rng, bool test, char *input, size_t in_len, char *output,
                           size_t out_len)
{
    int format;
    do
        format = sample_in("qkv_dates_sample_split", rng, input, in_len, output, out_len);
    while (format >= 0 && qkv_dates_is_test(input) != test);
    return format;
}

bool qkv_dates_is_test(const char *input)
{
    if (qkv__null("qkv_dates_is_test", "input", input))
        return false;
    /* FNV-1a, then a murmur-style finaliser so the low bits depend on every character. */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)input; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h % 100 < QKV_DATES_TEST_PERCENT;
}
