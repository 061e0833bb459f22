/* The tests' files (see files.h). */
#include "files.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void qkv_test_make_tmpdir(char *dir, size_t len, const char *prefix)
{
    snprintf(dir, len, "/tmp/%s_XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

void qkv_test_empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open the folder %s", dir);
    char path[512];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            ck_assert_msg(remove(path) == 0, "cannot remove %s", path);
        }
    closedir(d);
}

void qkv_test_remove_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char path[512];
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
    closedir(d);
    ck_assert_int_eq(rmdir(dir), 0);
}

const char *qkv_test_path(const char *dir, const char *name)
{
    static char paths[3][256];
    static int slot;
    slot = (slot + 1) % 3;
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
    return paths[slot];
}

char *qkv_test_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *b = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap)
            ck_assert_ptr_nonnull(b = realloc(b, cap = 2 * cap + 4096 + 1));
        got = fread(b + len, 1, 4096, f);
        len += got;
    } while (got > 0);
    fclose(f);
    b[len] = 0;
    if (n)
        *n = len;
    return b;
}

void qkv_test_write_repeated(const char *path, const void *bytes, size_t n, int times)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    for (int i = 0; i < times; i++)
        ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

void qkv_test_write_file(const char *path, const void *bytes, size_t n)
{
    qkv_test_write_repeated(path, bytes, n, 1);
}

const char *qkv_test_temp_file(const void *bytes, size_t n, int times)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/qkv_text_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(close(fd), 0);
    qkv_test_write_repeated(path, bytes, n, times);
    return path;
}

/* qsort's order for names. */
static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *qkv_test_listing(const char *dir)
{
    static char names[2048];
    char *sorted[64];
    int n = 0;
    names[0] = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) && n < 64;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            ck_assert_ptr_nonnull(sorted[n++] = strdup(e->d_name));
    closedir(d);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_name);
    for (int i = 0; i < n; i++) {
        strncat(names, " ", sizeof names - strlen(names) - 1);
        strncat(names, sorted[i], sizeof names - strlen(names) - 1);
        free(sorted[i]);
    }
    return names;
}

/* Fail unless the na bytes of a (from where_a) and the nb of b agree. */
static void assert_same_bytes(const char *where_a, const char *a, size_t na, const char *where_b,
                              const char *b, size_t nb)
{
    size_t same = 0;
    while (same < na && same < nb && a[same] == b[same])
        same++;
    ck_assert_msg(na == nb && same == na,
                  "%s (%zu bytes) and %s (%zu bytes) differ at byte %zu: \"%.60s\" vs \"%.60s\"",
                  where_a, na, where_b, nb, same, a + same, b + same);
}

void qkv_test_assert_file_holds(const char *path, const void *want, size_t n)
{
    size_t m;
    char *now = qkv_test_read_file(path, &m);
    assert_same_bytes(path, now, m, "what it should hold", want, n);
    free(now);
}

void qkv_test_assert_same_files(const char *a, const char *b)
{
    size_t na, nb;
    char *bytes_a = qkv_test_read_file(a, &na), *bytes_b = qkv_test_read_file(b, &nb);
    assert_same_bytes(a, bytes_a, na, b, bytes_b, nb);
    free(bytes_a);
    free(bytes_b);
}
