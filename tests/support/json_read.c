/* A small JSON reader for the tests (see json_read.h). */
#include "json_read.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

void json_skip_space(jreader *r)
{
    while (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')
        r->p++;
}

static bool expect(jreader *r, char c)
{
    json_skip_space(r);
    if (*r->p != c)
        return !(r->bad = true);
    r->p++;
    return true;
}

/* Append code point u as UTF-8. */
static size_t put_utf8(char *out, unsigned u)
{
    if (u < 0x80)
        return out[0] = (char)u, 1;
    if (u < 0x800)
        return out[0] = (char)(0xc0 | u >> 6), out[1] = (char)(0x80 | (u & 0x3f)), 2;
    out[0] = (char)(0xe0 | u >> 12), out[1] = (char)(0x80 | ((u >> 6) & 0x3f));
    out[2] = (char)(0x80 | (u & 0x3f));
    return 3;
}

static char *read_string(jreader *r)
{
    if (!expect(r, '"'))
        return NULL;
    char *out = malloc(strlen(r->p) + 1);
    size_t n = 0;
    while (*r->p && *r->p != '"') {
        if ((unsigned char)*r->p < 0x20)
            r->bad = true; /* raw control characters are not JSON */
        if (*r->p != '\\') {
            out[n++] = *r->p++;
            continue;
        }
        r->p++;
        const char *simple = strchr("\"\\/bfnrt", *r->p);
        if (*r->p == 'u') {
            unsigned u = 0;
            for (int i = 1; i <= 4; i++) {
                char c = r->p[i];
                int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
                r->bad |= d < 0;
                u = u * 16 + (unsigned)(d < 0 ? 0 : d);
            }
            n += put_utf8(out + n, u);
            r->p += 5;
        } else if (simple && *r->p) {
            out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            r->p++;
        } else {
            r->bad = true;
            break;
        }
    }
    r->bad |= *r->p != '"';
    if (*r->p)
        r->p++;
    out[n] = '\0';
    return out;
}

void json_read_value(jreader *r, jval *v);

/* The items of an array (close = ']') or an object (close = '}'). */
static void read_items(jreader *r, jval *v, char close)
{
    int cap = 0;
    r->p++;
    json_skip_space(r);
    if (*r->p == close) {
        r->p++;
        return;
    }
    do {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            v->items = realloc(v->items, (size_t)cap * sizeof *v->items);
            if (close == '}')
                v->keys = realloc(v->keys, (size_t)cap * sizeof *v->keys);
        }
        if (close == '}') {
            v->keys[v->n] = read_string(r);
            expect(r, ':');
        }
        json_read_value(r, &v->items[v->n++]);
        json_skip_space(r);
    } while (!r->bad && *r->p == ',' && r->p++);
    expect(r, close);
}

void json_read_value(jreader *r, jval *v)
{
    *v = (jval){.kind = J_NULL};
    json_skip_space(r);
    char *end;
    if (*r->p == '{') {
        v->kind = J_OBJ;
        read_items(r, v, '}');
    } else if (*r->p == '[') {
        v->kind = J_ARR;
        read_items(r, v, ']');
    } else if (*r->p == '"') {
        v->kind = J_STR;
        v->str = read_string(r);
    } else if (strncmp(r->p, "true", 4) == 0 || strncmp(r->p, "false", 5) == 0) {
        v->kind = J_BOOL;
        v->num = *r->p == 't';
        r->p += *r->p == 't' ? 4 : 5;
    } else if (strncmp(r->p, "null", 4) == 0) {
        r->p += 4;
    } else if ((v->num = strtod(r->p, &end)), end != r->p && (*r->p == '-' || (*r->p >= '0' && *r->p <= '9'))) {
        v->kind = J_NUM;
        r->p = end;
    } else {
        r->bad = true;
    }
}

void json_free(jval *v)
{
    for (int i = 0; i < v->n; i++) {
        json_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

const jval *json_get(const jval *v, const char *key)
{
    ck_assert_int_eq(v->kind, J_OBJ);
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    ck_abort_msg("the page's data has no \"%s\"", key);
    return NULL;
}

int json_get_int(const jval *v, const char *key)
{
    const jval *x = json_get(v, key);
    ck_assert_int_eq(x->kind, J_NUM);
    return (int)x->num;
}

const jval *json_get_numbers(const jval *v, const char *key, int n)
{
    const jval *a = json_get(v, key);
    ck_assert_int_eq(a->kind, J_ARR);
    ck_assert_msg(a->n == n, "\"%s\" has %d values, not %d", key, a->n, n);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(a->items[i].kind, J_NUM);
    return a;
}
