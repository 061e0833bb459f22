/* What the suites of the library's error messages (tests/api/test_errors_*.c)
 * share: a fresh arena for every test, on one thread (these tests are about
 * messages, and idle OpenMP threads only slow tiny models down on a busy
 * machine), and the text they train on. */
#ifndef QKV_TEST_ERRORS_SUITE_H
#define QKV_TEST_ERRORS_SUITE_H

#include <check.h>

#include "qkv/qkv.h"

/* The test's arena (made before each test, freed after). */
extern qkv_arena *errors_arena;

/* A test case with that arena, and a timeout of 60 s. */
TCase *errors_tcase(const char *name);

/* A short English text, repeated by the tests into a corpus. */
extern const char *const ERRORS_TEXT;

#endif
