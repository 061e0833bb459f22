/* Assert what the last qkv error message says:
 *
 *     ck_assert_ptr_null(qkv_add(a, x, y));
 *     ck_assert_error("add", "(2,3)", "(4)");   // every string must appear
 */
#ifndef QKV_ERROR_TEXT_H
#define QKV_ERROR_TEXT_H

#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "qkv/base.h"

/* True when qkv_last_error() contains every one of the n strings. */
static inline bool qkv_test_error_has(int n, const char *const *parts)
{
    for (int i = 0; i < n; i++)
        if (!strstr(qkv_last_error(), parts[i]))
            return false;
    return true;
}

/* Fail the test, showing the message, unless it contains every string given. */
#define ck_assert_error(...)                                                                  \
    ck_assert_msg(qkv_test_error_has((int)(sizeof((const char *[]){__VA_ARGS__}) /            \
                                           sizeof(const char *)),                             \
                                     (const char *[]){__VA_ARGS__}),                          \
                  "unexpected error message: %s", qkv_last_error())

/* The call must return NULL and leave a message holding every string given. */
#define FAILS_NULL(call, ...)                                               \
    do {                                                                    \
        qkv_clear_error();                                                  \
        ck_assert_msg((call) == NULL, "%s did not fail", #call);            \
        ck_assert_error(__VA_ARGS__);                                       \
    } while (0)

/* The call must return -1 and leave a message holding every string given. */
#define FAILS_INT(call, ...)                                                \
    do {                                                                    \
        qkv_clear_error();                                                  \
        ck_assert_msg((call) == -1, "%s did not return -1", #call);         \
        ck_assert_error(__VA_ARGS__);                                       \
    } while (0)

#endif
