/* Misuse cases for qkv/dates.h: the dates task. */
#include "misuse.h"
#include "qkv/dates.h"

MISUSE(qkv_dates_vocab, takes_no_arguments) { MISUSE_ASSERT(qkv_dates_vocab()[0] != '\0'); }
MISUSE(qkv_dates_format_name, negative) { FAILS_NULL(qkv_dates_format_name(-1), "format -1"); }
MISUSE(qkv_dates_format_name, too_big)
{
    FAILS_NULL(qkv_dates_format_name(QKV_DATES_N_FORMATS), "format 13");
}
MISUSE(qkv_dates_format, null_input)
{
    FAILS_INT(qkv_dates_format(NULL, 40, 0, QKV_DATES_LOWER, 1998, 3, 3), "input is NULL");
}
MISUSE(qkv_dates_format, bad_case)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, (qkv_dates_case)9, 1998, 3, 3), "unknown case 9");
}
MISUSE(qkv_dates_format, bad_format)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 99, QKV_DATES_LOWER, 1998, 3, 3), "format 99");
}
MISUSE(qkv_dates_format, february_30)
{
    char in[40];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_LOWER, 1998, 2, 30), "1998-2-30");
}
MISUSE(qkv_dates_format, short_buffer)
{
    char in[4];
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_LOWER, 1998, 3, 3), "4-byte buffer");
}
MISUSE(qkv_dates_sample, null_rng)
{
    char in[40], out[16];
    FAILS_INT(qkv_dates_sample(NULL, in, sizeof in, out, sizeof out), "rng is NULL");
}
MISUSE(qkv_dates_sample, null_output)
{
    char in[40];
    FAILS_INT(qkv_dates_sample(rng(), in, sizeof in, NULL, 16), "output is NULL");
}
MISUSE(qkv_dates_sample, short_output)
{
    char in[40], out[4];
    FAILS_INT(qkv_dates_sample(rng(), in, sizeof in, out, sizeof out), "buffers of 40 and 4");
}
MISUSE(qkv_dates_sample_split, null_input)
{
    char out[16];
    FAILS_INT(qkv_dates_sample_split(rng(), true, NULL, 40, out, sizeof out), "input is NULL");
}
MISUSE(qkv_dates_sample_split, null_rng)
{
    char in[40], out[16];
    FAILS_INT(qkv_dates_sample_split(NULL, true, in, sizeof in, out, sizeof out), "rng is NULL");
}
MISUSE(qkv_dates_is_test, null) { FAILS_AS(false, qkv_dates_is_test(NULL), "input is NULL"); }
