/* The tests' files: temporary folders, small files written and read back,
 * folder listings, and files compared byte for byte. Every helper fails the
 * test (Check) when the file system says no. */
#ifndef QKV_TEST_FILES_H
#define QKV_TEST_FILES_H

#include <stddef.h>

/* Make a fresh directory /tmp/PREFIX_XXXXXX, its path into dir (len bytes). */
void qkv_test_make_tmpdir(char *dir, size_t len, const char *prefix);

/* Remove dir and the files in it (not subdirectories' contents). */
void qkv_test_remove_tmpdir(const char *dir);

/* Remove every file in dir, keeping dir (it must hold no folder). */
void qkv_test_empty_dir(const char *dir);

/* dir/name in a static buffer (three slots, so three can be held at once). */
const char *qkv_test_path(const char *dir, const char *name);

/* The whole file at path (malloc'd, NUL-terminated) and its length (n may be
 * NULL); fails the test when it cannot be read. */
char *qkv_test_read_file(const char *path, size_t *n);

/* Write the n bytes to path (made or truncated). */
void qkv_test_write_file(const char *path, const void *bytes, size_t n);

/* Write the n bytes to path (made or truncated) times times over. */
void qkv_test_write_repeated(const char *path, const void *bytes, size_t n, int times);

/* A fresh file /tmp/qkv_text_XXXXXX holding the n bytes times times over;
 * its path, in a static buffer (the caller unlinks it). */
const char *qkv_test_temp_file(const void *bytes, size_t n, int times);

/* The names of the files in dir, sorted, each after a space ("" when empty). */
const char *qkv_test_listing(const char *dir);

/* The file at path holds exactly the n bytes of want (else the test fails,
 * naming the file and the first byte that differs). */
void qkv_test_assert_file_holds(const char *path, const void *want, size_t n);

/* The files at a and b hold the same bytes (else the test fails, naming the
 * first byte that differs and what stands there in each). */
void qkv_test_assert_same_files(const char *a, const char *b);

#endif
