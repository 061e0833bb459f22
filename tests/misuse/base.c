/* Misuse cases for qkv/base.h (errors, allocation, threads) and qkv/version.h. */
#include "misuse.h"

MISUSE(qkv_last_error, takes_no_arguments) { MISUSE_ASSERT(qkv_last_error() != NULL); }

/* The message is valid right after a failure; a success does not clear it. */
MISUSE(qkv_last_error, stale_after_success)
{
    MISUSE_ASSERT(qkv_sum(arena(), NULL) == NULL);
    char first[512];
    snprintf(first, sizeof first, "%s", qkv_last_error());
    MISUSE_ASSERT(strcmp(first, "qkv_sum: input x is NULL") == 0);
    MISUSE_ASSERT(qkv_sum(arena(), tensor(SHAPE23)) != NULL);
    MISUSE_ASSERT(strcmp(qkv_last_error(), first) == 0);
    qkv_clear_error();
    MISUSE_ASSERT(qkv_last_error()[0] == '\0');
}

MISUSE(qkv_clear_error, takes_no_arguments)
{
    qkv_set_error("x");
    qkv_clear_error();
    MISUSE_ASSERT(qkv_last_error()[0] == '\0');
}

MISUSE(qkv_set_error, null_fmt) { FAILS_INT(qkv_set_error(NULL), "fmt is NULL"); }

MISUSE(qkv_set_allocator, null_hooks_mean_malloc_and_free)
{
    HARMLESS((qkv_set_allocator(NULL, NULL), 0));
    void *p = qkv_alloc(16);
    MISUSE_ASSERT(p != NULL);
    qkv_free(p);
}

MISUSE(qkv_alloc, huge) { FAILS_NULL(qkv_alloc(SIZE_MAX), "too large"); }
MISUSE(qkv_alloc, huge_minus_align) { FAILS_NULL(qkv_alloc(SIZE_MAX - 8), "too large"); }
MISUSE(qkv_calloc, huge) { FAILS_NULL(qkv_calloc(SIZE_MAX), "too large"); }
MISUSE(qkv_free, null) { HARMLESS((qkv_free(NULL), 0)); }
MISUSE(qkv_alloc_count, takes_no_arguments) { (void)qkv_alloc_count(); }
MISUSE(qkv_set_threads, negative) { FAILS_INT(qkv_set_threads(-1), "n -1"); }
MISUSE(qkv_set_threads, int_min) { FAILS_INT(qkv_set_threads(-2147483647 - 1), "n"); }
/* Above the limit is refused, and the ops after it still run: 100000 made
 * libgomp overflow its stack, INT_MAX made it exit the process. */
MISUSE(qkv_set_threads, above_the_limit)
{
    int before = qkv_threads();
    FAILS_INT(qkv_set_threads(100000), "n 100000", "limit");
    FAILS_INT(qkv_set_threads(2147483647), "n 2147483647", "limit");
    MISUSE_ASSERT(qkv_threads() == before);
    MISUSE_ASSERT(qkv_matmul(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(3, 2)), false, false));
}
/* The limit itself is usable: every op runs on QKV_MAX_THREADS threads. */
MISUSE(qkv_set_threads, at_the_limit)
{
    MISUSE_ASSERT(qkv_set_threads(QKV_MAX_THREADS) == 0);
    MISUSE_ASSERT(qkv_matmul(arena(), tensor(SHAPE23), tensor(QKV_SHAPE(3, 2)), false, false));
    MISUSE_ASSERT(qkv_set_threads(0) == 0);
}
MISUSE(qkv_threads, takes_no_arguments) { MISUSE_ASSERT(qkv_threads() >= 1); }

MISUSE(qkv_version, takes_no_arguments) { MISUSE_ASSERT(strcmp(qkv_version(), QKV_VERSION_STRING) == 0); }

MISUSE(qkv_check_version, negative) { REFUSES(qkv_check_version(-1, 0), "major -1"); }
MISUSE(qkv_check_version, a_newer_minor)
{
    REFUSES(qkv_check_version(QKV_VERSION_MAJOR, QKV_VERSION_MINOR + 1), "built for qkv");
}
MISUSE(qkv_check_version, another_major)
{
    REFUSES(qkv_check_version(QKV_VERSION_MAJOR + 1, 0), "built for qkv");
    MISUSE_ASSERT(QKV_CHECK_VERSION() == 0);
}
