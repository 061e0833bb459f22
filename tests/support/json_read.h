/* A small JSON reader, so the tests need no JSON library: enough for the
 * data block qkv attn's page embeds (numbers, strings with \u escapes,
 * arrays, objects, true, false, null). */
#ifndef QKV_TEST_JSON_READ_H
#define QKV_TEST_JSON_READ_H

#include <stdbool.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
    jkind kind;
    double num;          /* J_NUM, J_BOOL (0 or 1) */
    char *str;           /* J_STR: the decoded UTF-8 text */
    int n;               /* J_ARR, J_OBJ: items */
    struct jval *items;  /* n values */
    char **keys;         /* J_OBJ: n keys */
} jval;

typedef struct {
    const char *p; /* next character */
    bool bad;      /* a syntax error was met */
} jreader;

/* Skip spaces, tabs and line breaks. */
void json_skip_space(jreader *r);

/* Read one value at r into v (r->bad set on a syntax error). */
void json_read_value(jreader *r, jval *v);

/* Free what v holds. */
void json_free(jval *v);

/* Member key of object v; fails the test when it is missing. */
const jval *json_get(const jval *v, const char *key);

/* Member key of object v, a number, as an int. */
int json_get_int(const jval *v, const char *key);

/* An array member of n numbers (fails the test on another length). */
const jval *json_get_numbers(const jval *v, const char *key, int n);

#endif
