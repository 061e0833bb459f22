/* The safetensors reader: a good file's tensors, metadata and conversions
 * (F32, F16, BF16, F64 written by hand here), every kind of bad file with its
 * message, and a little fuzzing: thousands of mutations of a good file, each
 * read or refused with a message, never a crash (run it under ASan). */
#include "testing.h"

#include <stdlib.h>
#include <string.h>

/* A file of header json and n data bytes (malloc'd, its length into *len). */
static unsigned char *make_file(const char *json, const void *data, size_t n, size_t *len)
{
    size_t h = strlen(json);
    *len = 8 + h + n;
    unsigned char *f = malloc(*len);
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 8; i++)
        f[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(f + 8, json, h);
    if (n)
        memcpy(f + 8 + h, data, n);
    return f;
}

/* A good file: F32 (2,3), F16 (4), BF16 (2), F64 (1), I64 (1), metadata, an escaped name. */
static const char *GOOD_JSON =
    "{\"__metadata__\": {\"format\": \"pt\", \"n_head\": \"4\"},"
    " \"w\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]},"
    " \"h\": {\"shape\": [4], \"data_offsets\": [24, 32], \"dtype\": \"F16\"},"
    " \"b\\u00e9\\\"\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [32, 36]},"
    " \"d\": {\"dtype\": \"F64\", \"shape\": [], \"data_offsets\": [36, 44]},"
    " \"i\": {\"dtype\": \"I64\", \"shape\": [1], \"data_offsets\": [44, 52]}}   ";

static unsigned char *good_file(size_t *len)
{
    unsigned char data[52] = {0};
    float w[6] = {1.5f, -2, 0.25f, 3, 1e-3f, -7};
    memcpy(data, w, 24); /* little-endian on the machines qkv runs on */
    const uint16_t h[4] = {0x3C00, 0xC000, 0x0001, 0x7C00}; /* 1, -2, 2^-24, inf */
    memcpy(data + 24, h, 8);
    const uint16_t bf[2] = {0x3F80, 0x4049}; /* 1, 3.140625 */
    memcpy(data + 32, bf, 4);
    double d = 0.1;
    memcpy(data + 36, &d, 8);
    return make_file(GOOD_JSON, data, sizeof data, len);
}

START_TEST(reads_a_good_file)
{
    size_t len;
    unsigned char *f = good_file(&len);
    qkv_safetensors *st = qkv_safetensors_parse(f, len);
    ck_assert_qkv(st);
    ck_assert_int_eq(qkv_safetensors_count(st), 5);
    ck_assert_str_eq(qkv_safetensors_meta(st, "n_head"), "4");
    ck_assert_ptr_null(qkv_safetensors_meta(st, "none"));
    const qkv_st_tensor *w = qkv_safetensors_find(st, "w");
    ck_assert_qkv(w);
    ck_assert_int_eq(w->ndim, 2);
    ck_assert(w->shape[0] == 2 && w->shape[1] == 3 && w->count == 6 && w->dtype == QKV_ST_F32);
    qkv_real v[6];
    ck_assert_int_eq(qkv_safetensors_read(st, w, v, 6), 0);
    const qkv_real want_w[6] = {1.5, -2, (qkv_real)0.25, 3, (qkv_real)1e-3f, -7};
    for (int i = 0; i < 6; i++)
        ck_assert(v[i] == want_w[i]);
    ck_assert_int_eq(qkv_safetensors_read(st, qkv_safetensors_find(st, "h"), v, 6), 0);
    ck_assert(v[0] == 1 && v[1] == -2 && v[2] == (qkv_real)5.9604644775390625e-8 &&
              isinf(v[3]) && v[3] > 0);
    const qkv_st_tensor *b = qkv_safetensors_find(st, "b\xc3\xa9\"");
    ck_assert_qkv(b);
    ck_assert_str_eq(b->dtype_name, "BF16");
    ck_assert_int_eq(qkv_safetensors_read(st, b, v, 2), 0);
    ck_assert(v[0] == 1 && v[1] == (qkv_real)3.140625);
    const qkv_st_tensor *d = qkv_safetensors_tensor(st, 3);
    ck_assert(d->ndim == 0 && d->count == 1);
    ck_assert_int_eq(qkv_safetensors_read(st, d, v, 1), 0);
    ck_assert(v[0] == (qkv_real)0.1);
    const qkv_st_tensor *i = qkv_safetensors_find(st, "i");
    ck_assert_int_eq(qkv_safetensors_read(st, i, v, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "I64, not a float type"));
    ck_assert_int_eq(qkv_safetensors_read(st, w, v, 5), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "n 5 is less than w's 6 values"));
    qkv_safetensors_free(st);
    free(f);
}
END_TEST

START_TEST(opens_a_file_by_path)
{
    size_t len;
    unsigned char *f = good_file(&len);
    char dir[64];
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_st");
    const char *path = qkv_test_path(dir, "m.safetensors");
    qkv_test_write_file(path, f, len);
    qkv_safetensors *st = qkv_safetensors_open(path);
    ck_assert_qkv(st);
    ck_assert_int_eq(qkv_safetensors_count(st), 5);
    qkv_safetensors_free(st);
    qkv_test_write_file(path, f, len - 1); /* the data one byte short */
    ck_assert_ptr_null(qkv_safetensors_open(path));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_safetensors_open: "));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "m.safetensors"));
    qkv_test_remove_tmpdir(dir);
    ck_assert_ptr_null(qkv_safetensors_open("/nonexistent/m.safetensors"));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "/nonexistent/m.safetensors"));
    free(f);
}
END_TEST

/* A bad header of n data bytes and the words its message must hold. */
static const struct {
    const char *json;
    size_t data;
    const char *message;
} BAD[] = {
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "do not hold dtype x shape"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,16]}}", 8, "outside the data"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 8, "outside the data"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "a hole or an overlap"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "at data byte 4, not 0"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "end at data byte 4 of 8"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "named twice"},
    {"{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"offsets\":[0,4]}}", 4, "unknown field"},
    {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", 4, "given twice"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "without its dtype, shape or data_offsets"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "not [begin, end]"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4, "leading zero"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "non-negative integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4, "fraction"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", 4,
     "over 10^18"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
     "too many numbers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1000000000000,1000000000000],\"data_offsets\":[0,4]}}",
     4, "larger than the data"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", 4, "more after"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", 4, "expected '}'"},
    {"{\"a", 0, "does not end"},
    {"{\"a\\x\":1}", 0, "bad escape"},
    {"{\"a\\udc00\":1}", 0, "lone low surrogate"},
    {"{\"a\\ud800x\":1}", 0, "without its low one"},
    {"{\"a\\u0000\":1}", 0, "NUL character"},
    {"{\"a\tb\":1}", 0, "control character"},
    {"{\"__metadata__\":{\"k\":1}}", 0, "expected '\"'"},
    {"{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ given twice"},
    {"[]", 0, "expected '{'"},
    {"", 0, "expected '{'"},
};

START_TEST(refuses_bad_headers)
{
    unsigned char zeros[16] = {0};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        size_t len;
        unsigned char *f = make_file(BAD[i].json, zeros, BAD[i].data, &len);
        qkv_clear_error();
        qkv_safetensors *st = qkv_safetensors_parse(f, len);
        ck_assert_msg(st == NULL, "case %zu (%s) was read", i, BAD[i].json);
        ck_assert_msg(strstr(qkv_last_error(), BAD[i].message) &&
                          strstr(qkv_last_error(), "qkv_safetensors_parse: "),
                      "case %zu: \"%s\" does not say \"%s\"", i, qkv_last_error(), BAD[i].message);
        free(f);
    }
}
END_TEST

START_TEST(refuses_bad_lengths)
{
    unsigned char f[16] = {0};
    ck_assert_ptr_null(qkv_safetensors_parse(f, 7));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "shorter than the 8-byte header length"));
    f[0] = 9; /* a header of 9 bytes in a file of 16 */
    ck_assert_ptr_null(qkv_safetensors_parse(f, 16));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "a header of 9 bytes in a file of 16"));
    f[0] = 0, f[3] = 0x10; /* 256 MiB: past the format's limit */
    ck_assert_ptr_null(qkv_safetensors_parse(f, 16));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "over the limit"));
}
END_TEST

/* The good file mutated again and again (a byte changed, digits put in the
 * header, the length field or the end cut): each is read, with every tensor
 * inside the file and convertible, or refused with a message. */
START_TEST(survives_mutations)
{
    size_t len;
    unsigned char *good = good_file(&len);
    unsigned char *f = malloc(len);
    ck_assert_ptr_nonnull(f);
    qkv_rng rng;
    qkv_rng_seed(&rng, 36);
    int read = 0, refused = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(f, good, len);
        size_t n = len;
        for (int k = 1 + (int)(qkv_rng_u64(&rng) % 3); k > 0; k--) {
            uint64_t r = qkv_rng_u64(&rng);
            size_t at = (size_t)(r >> 8) % n;
            switch (r % 5) {
            case 0: f[at] = (unsigned char)(r >> 40); break;
            case 1: f[at] = (unsigned char)"0123456789{}[],:\"\\ u"[(r >> 40) % 20]; break;
            case 2: f[(r >> 40) % 8] = (unsigned char)(r >> 48); break;
            case 3: n = at + 1; break;
            default: f[at] ^= (unsigned char)(1u << ((r >> 40) % 8));
            }
        }
        qkv_clear_error();
        qkv_safetensors *st = qkv_safetensors_parse(f, n);
        if (!st) {
            ck_assert_msg(strstr(qkv_last_error(), "qkv_safetensors_parse: "),
                          "a refusal without a message: \"%s\"", qkv_last_error());
            refused++;
            continue;
        }
        read++;
        for (int i = 0; i < qkv_safetensors_count(st); i++) {
            const qkv_st_tensor *t = qkv_safetensors_tensor(st, i);
            ck_assert(t->begin <= t->end && t->end <= n);
            qkv_real v[64];
            if (t->dtype != QKV_ST_OTHER && t->count <= 64)
                ck_assert_int_eq(qkv_safetensors_read(st, t, v, 64), 0);
        }
        qkv_safetensors_free(st);
    }
    printf("mutations: %d read, %d refused with a message\n", read, refused);
    ck_assert_int_gt(read, 0);
    ck_assert_int_gt(refused, 0);
    free(f);
    free(good);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reads_a_good_file);
    tcase_add_test(tc, opens_a_file_by_path);
    tcase_add_test(tc, refuses_bad_headers);
    tcase_add_test(tc, refuses_bad_lengths);
    tcase_add_test(tc, survives_mutations);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
