/* The .bpe file (data/bpe_file.c): what is saved loads back the same; a damaged
 * file, one cut short, a later version or a bad merge is refused with a message
 * saying which; a save that fails leaves the old file whole. */
#include <stdlib.h>

#include "qkv/bpe.h"
#include "testing.h"

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_bpe"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

static const char TEXT[] = "the cat sat on the mat; the cat ate 12 rats, 21 bats\n";

/* A tokenizer of TEXT saved at tmpdir/name; its path. */
static const char *saved(const char *name, qkv_bpe **out)
{
    qkv_bpe *bpe = qkv_bpe_train(TEXT, sizeof TEXT - 1, 300);
    ck_assert_qkv(bpe);
    const char *path = qkv_test_path(tmpdir, name);
    ck_assert_msg(qkv_bpe_save(bpe, path) == 0, "%s", qkv_last_error());
    if (out)
        *out = bpe;
    else
        qkv_bpe_free(bpe);
    return path;
}

/* Little-endian u32 at p. */
static void put_u32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

/* Write bytes to path with a fresh checksum at its end (a file that is wrong but
 * not damaged): FNV-1a, 32-bit, as its definition reads (offset basis, then
 * xor and multiply by the FNV prime byte by byte). */
static void write_with_sum(const char *path, unsigned char *bytes, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n - 4; i++)
        h = (h ^ bytes[i]) * 16777619u;
    put_u32(bytes + n - 4, h);
    qkv_test_write_file(path, bytes, n);
}

/* Loading path fails, and the message names the path and holds want. */
static void refused(const char *path, const char *want)
{
    qkv_clear_error();
    ck_assert_ptr_null(qkv_bpe_load(path));
    const char *msg = qkv_last_error();
    ck_assert_msg(strstr(msg, "qkv_bpe_load") && strstr(msg, path) && strstr(msg, want),
                  "message \"%s\" lacks \"%s\"", msg, want);
}

START_TEST(test_load_gives_back_what_was_saved)
{
    qkv_bpe *bpe;
    const char *path = saved("a.bpe", &bpe);
    qkv_bpe *back = qkv_bpe_load(path);
    ck_assert_qkv(back);
    ck_assert_int_eq(qkv_bpe_size(back), qkv_bpe_size(bpe));
    for (int i = 0; i < qkv_bpe_size(bpe) - 256; i++) {
        int32_t l, r, l2, r2;
        qkv_bpe_merge(bpe, i, &l, &r);
        qkv_bpe_merge(back, i, &l2, &r2);
        ck_assert(l == l2 && r == r2);
    }
    int32_t a[sizeof TEXT], b[sizeof TEXT];
    long long n = qkv_bpe_encode(bpe, TEXT, sizeof TEXT - 1, a);
    ck_assert_int_eq(qkv_bpe_encode(back, TEXT, sizeof TEXT - 1, b), n);
    ck_assert_mem_eq(a, b, (size_t)n * sizeof *a);
    /* 20 bytes of header, 8 a merge, 4 of checksum */
    size_t len;
    free(qkv_test_read_file(path, &len));
    ck_assert_uint_eq(len, 24 + 8 * (size_t)(qkv_bpe_size(bpe) - 256));
    qkv_bpe_free(bpe);
    qkv_bpe_free(back);
}
END_TEST

START_TEST(test_no_merges_round_trip)
{
    qkv_bpe *bpe = qkv_bpe_from_merges(NULL, 0);
    ck_assert_qkv(bpe);
    const char *path = qkv_test_path(tmpdir, "empty.bpe");
    ck_assert_int_eq(qkv_bpe_save(bpe, path), 0);
    qkv_bpe *back = qkv_bpe_load(path);
    ck_assert_qkv(back);
    ck_assert_int_eq(qkv_bpe_size(back), 256);
    qkv_bpe_free(bpe);
    qkv_bpe_free(back);
}
END_TEST

START_TEST(test_every_flipped_byte_is_caught)
{
    const char *path = saved("b.bpe", NULL);
    size_t len;
    unsigned char *good = (unsigned char *)qkv_test_read_file(path, &len);
    const char *bad = qkv_test_path(tmpdir, "flipped.bpe");
    for (size_t i = 0; i < len; i++) {
        good[i] ^= 0x10;
        qkv_test_write_file(bad, good, len);
        qkv_clear_error();
        ck_assert_msg(qkv_bpe_load(bad) == NULL, "byte %zu flipped loads", i);
        good[i] ^= 0x10;
    }
    free(good);
}
END_TEST

START_TEST(test_bad_files_say_what_is_wrong)
{
    const char *path = saved("c.bpe", NULL);
    size_t len;
    unsigned char *b = (unsigned char *)qkv_test_read_file(path, &len);
    const char *bad = qkv_test_path(tmpdir, "bad.bpe");

    qkv_test_write_file(bad, b, len - 5);
    refused(bad, "cut short");
    qkv_test_write_file(bad, b, 10);
    refused(bad, "cut short");
    b[len - 1] ^= 1;
    qkv_test_write_file(bad, b, len);
    refused(bad, "checksum");
    b[len - 1] ^= 1;

    put_u32(b + 8, 2);
    write_with_sum(bad, b, len);
    refused(bad, "version 2");
    put_u32(b + 8, 1);

    put_u32(b + 12, 7);
    write_with_sum(bad, b, len);
    refused(bad, "pre-split 7");
    put_u32(b + 12, 1);

    put_u32(b + 20 + 4, 4000); /* merge 0's right half: a token not made yet */
    write_with_sum(bad, b, len);
    refused(bad, "merge 0");
    put_u32(b + 20 + 4, 0xffffffffu);
    write_with_sum(bad, b, len);
    refused(bad, "merge 0");

    unsigned char *longer = calloc(len + 8, 1);
    memcpy(longer, b, len);
    write_with_sum(bad, longer, len + 8);
    refused(bad, "after the end");
    free(longer);

    put_u32(b + 16, 0x7fffffff);
    write_with_sum(bad, b, len);
    refused(bad, "merges");
    free(b);
}
END_TEST

START_TEST(test_failed_save_leaves_the_old_file)
{
    const char *path = saved("d.bpe", NULL);
    size_t len;
    char *before = qkv_test_read_file(path, &len);
    ck_assert_int_eq(qkv_protect_input(path), 0);
    qkv_bpe *bpe = qkv_bpe_from_merges((int32_t[]){'a', 'b'}, 1);
    ck_assert_qkv(bpe);
    ck_assert_int_eq(qkv_bpe_save(bpe, path), -1); /* a protected input is never written */
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_bpe_save"));
    qkv_test_assert_file_holds(path, before, len);
    qkv_bpe_free(bpe);
    free(before);
}
END_TEST

static Suite *bpe_file_suite(void)
{
    Suite *s = suite_create("bpe_file");
    TCase *tc = tcase_create("file");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_load_gives_back_what_was_saved);
    tcase_add_test(tc, test_no_merges_round_trip);
    tcase_add_test(tc, test_every_flipped_byte_is_caught);
    tcase_add_test(tc, test_bad_files_say_what_is_wrong);
    tcase_add_test(tc, test_failed_save_leaves_the_old_file);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bpe_file_suite)
