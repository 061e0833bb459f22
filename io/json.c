/* The JSON qkv's readers share (see json.h). */
#include "io/json.h"

#include <stdint.h>
#include <string.h>

#include "qkv/base.h"

void qkv__json_skip_space(qkv__json *r)
{
    while (r->at < r->len && (r->p[r->at] == ' ' || r->p[r->at] == '\t' || r->p[r->at] == '\n' ||
                              r->p[r->at] == '\r'))
        r->at++;
}

int qkv__json_fail(const qkv__json *r, const char *what)
{
    return qkv_set_error("%s %zu: %s", r->where, r->at, what);
}

/* The 4 hex digits at r into *u. */
static int hex4(qkv__json *r, uint32_t *u)
{
    if (r->len - r->at < 4)
        return qkv__json_fail(r, "a \\u escape cut short");
    *u = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[r->at++];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return qkv__json_fail(r, "a \\u escape with a non-hex digit");
        *u = *u << 4 | (uint32_t)d;
    }
    return 0;
}

/* Append code point u to out as UTF-8. */
static size_t put_utf8(char *out, uint32_t u)
{
    if (u < 0x80)
        return out[0] = (char)u, 1;
    if (u < 0x800)
        return out[0] = (char)(0xc0 | u >> 6), out[1] = (char)(0x80 | (u & 0x3f)), 2;
    if (u < 0x10000)
        return out[0] = (char)(0xe0 | u >> 12), out[1] = (char)(0x80 | (u >> 6 & 0x3f)),
               out[2] = (char)(0x80 | (u & 0x3f)), 3;
    return out[0] = (char)(0xf0 | u >> 18), out[1] = (char)(0x80 | (u >> 12 & 0x3f)),
           out[2] = (char)(0x80 | (u >> 6 & 0x3f)), out[3] = (char)(0x80 | (u & 0x3f)), 4;
}

/* The \u escape after the backslash at r (at its 'u') as a code point: a high
 * surrogate must be followed by \u and a low one. */
static int unicode_escape(qkv__json *r, uint32_t *u)
{
    r->at++; /* the 'u' */
    if (hex4(r, u) < 0)
        return -1;
    if (*u >= 0xdc00 && *u <= 0xdfff)
        return qkv__json_fail(r, "a lone low surrogate in a string");
    if (*u < 0xd800 || *u > 0xdbff)
        return 0;
    uint32_t lo;
    if (r->len - r->at < 2 || r->p[r->at] != '\\' || r->p[r->at + 1] != 'u')
        return qkv__json_fail(r, "a high surrogate without its low one");
    r->at += 2;
    if (hex4(r, &lo) < 0)
        return -1;
    if (lo < 0xdc00 || lo > 0xdfff)
        return qkv__json_fail(r, "a high surrogate without its low one");
    *u = 0x10000 + ((*u - 0xd800) << 10) + (lo - 0xdc00);
    return 0;
}

int qkv__json_string(qkv__json *r, char *out, size_t *n)
{
    if (r->at >= r->len || r->p[r->at] != '"')
        return qkv__json_fail(r, "expected '\"', a string");
    r->at++;
    *n = 0;
    for (;;) {
        if (r->at >= r->len)
            return qkv__json_fail(r, "a string that does not end");
        unsigned char c = (unsigned char)r->p[r->at];
        if (c == '"') {
            r->at++;
            return 0;
        }
        if (c < 0x20)
            return qkv__json_fail(r, "a control character in a string");
        if (c != '\\') {
            out[(*n)++] = (char)c;
            r->at++;
            continue;
        }
        if (++r->at >= r->len)
            return qkv__json_fail(r, "a string cut short after a backslash");
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *e = strchr(from, r->p[r->at]);
        if (r->p[r->at] == 'u') {
            uint32_t u;
            if (unicode_escape(r, &u) < 0)
                return -1;
            *n += put_utf8(out + *n, u);
        } else if (e && *e) {
            out[(*n)++] = to[e - from];
            r->at++;
        } else {
            return qkv__json_fail(r, "a bad escape in a string");
        }
    }
}
