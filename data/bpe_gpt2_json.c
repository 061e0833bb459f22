/* A JSON reader for one file only: GPT-2's vocab.json (encoder.json), an object
 * of "token": id pairs. Strings take every JSON escape (\u with surrogate
 * pairs); values are non-negative integers. Nothing else of JSON is needed. */
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_gpt2.h"

typedef struct reader {
    const char *p;
    size_t len, at;
} reader;

static void skip_space(reader *r)
{
    while (r->at < r->len && (r->p[r->at] == ' ' || r->p[r->at] == '\t' || r->p[r->at] == '\n' ||
                              r->p[r->at] == '\r'))
        r->at++;
}

static int fail(const reader *r, const char *what)
{
    return qkv_set_error("byte %zu: %s", r->at, what);
}

/* The 4 hex digits at r into *u. */
static int hex4(reader *r, uint32_t *u)
{
    if (r->len - r->at < 4)
        return fail(r, "a \\u escape cut short");
    *u = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->p[r->at++];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return fail(r, "a \\u escape with a non-hex digit");
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
static int unicode_escape(reader *r, uint32_t *u)
{
    r->at++; /* the 'u' */
    if (hex4(r, u) < 0)
        return -1;
    if (*u >= 0xdc00 && *u <= 0xdfff)
        return fail(r, "a lone low surrogate");
    if (*u < 0xd800 || *u > 0xdbff)
        return 0;
    uint32_t lo;
    if (r->len - r->at < 2 || r->p[r->at] != '\\' || r->p[r->at + 1] != 'u')
        return fail(r, "a high surrogate without its low one");
    r->at += 2;
    if (hex4(r, &lo) < 0)
        return -1;
    if (lo < 0xdc00 || lo > 0xdfff)
        return fail(r, "a high surrogate without its low one");
    *u = 0x10000 + ((*u - 0xd800) << 10) + (lo - 0xdc00);
    return 0;
}

/* The string at r (at its opening quote), unescaped, into out (room for as
 * many bytes as the string's source: no escape grows); its length in *n. */
static int string(reader *r, char *out, size_t *n)
{
    if (r->at >= r->len || r->p[r->at] != '"')
        return fail(r, "expected a string");
    r->at++;
    *n = 0;
    for (;;) {
        if (r->at >= r->len)
            return fail(r, "a string without its closing quote");
        unsigned char c = (unsigned char)r->p[r->at];
        if (c == '"') {
            r->at++;
            return 0;
        }
        if (c < 0x20)
            return fail(r, "a control character inside a string");
        if (c != '\\') {
            out[(*n)++] = (char)c;
            r->at++;
            continue;
        }
        if (++r->at >= r->len)
            return fail(r, "a string cut short after a backslash");
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
            return fail(r, "an unknown escape");
        }
    }
}

/* The integer at r, in [0, 2^31). */
static int integer(reader *r, int32_t *v)
{
    if (r->at >= r->len || r->p[r->at] < '0' || r->p[r->at] > '9')
        return fail(r, "expected a token id, a non-negative integer");
    int64_t x = 0;
    while (r->at < r->len && r->p[r->at] >= '0' && r->p[r->at] <= '9') {
        x = 10 * x + (r->p[r->at++] - '0');
        if (x > INT32_MAX)
            return fail(r, "a token id of 2^31 or more");
    }
    *v = (int32_t)x;
    return 0;
}

void qkv__gpt2_vocab_free(qkv__gpt2_vocab *v)
{
    qkv_free(v->text), qkv_free(v->off), qkv_free(v->len), qkv_free(v->id);
    memset(v, 0, sizeof *v);
}

/* Room in v for one more pair. */
static int reserve(qkv__gpt2_vocab *v, int *cap)
{
    if (v->n < *cap)
        return 0;
    int c = *cap ? 2 * *cap : 1024;
    size_t *off = qkv_alloc((size_t)c * sizeof *off);
    uint32_t *len = qkv_alloc((size_t)c * sizeof *len);
    int32_t *id = qkv_alloc((size_t)c * sizeof *id);
    if (!off || !len || !id) {
        qkv_free(off), qkv_free(len), qkv_free(id);
        return qkv_set_error("out of memory for %d tokens", c);
    }
    if (v->n) {
        memcpy(off, v->off, (size_t)v->n * sizeof *off);
        memcpy(len, v->len, (size_t)v->n * sizeof *len);
        memcpy(id, v->id, (size_t)v->n * sizeof *id);
    }
    qkv_free(v->off), qkv_free(v->len), qkv_free(v->id);
    v->off = off, v->len = len, v->id = id, *cap = c;
    return 0;
}

/* The pairs after the object's '{' at r; the tokens' text goes to v->text at
 * *used. */
static int pairs(reader *r, qkv__gpt2_vocab *v, size_t *used)
{
    int cap = 0;
    skip_space(r);
    if (r->at < r->len && r->p[r->at] == '}')
        return r->at++, 0;
    for (;;) {
        size_t n = 0;
        skip_space(r);
        if (reserve(v, &cap) < 0 || string(r, v->text + *used, &n) < 0)
            return -1;
        if (n > UINT32_MAX)
            return fail(r, "a token of 4 GB or more");
        v->off[v->n] = *used, v->len[v->n] = (uint32_t)n;
        *used += n;
        v->text[(*used)++] = '\0';
        skip_space(r);
        if (r->at >= r->len || r->p[r->at++] != ':')
            return fail(r, "expected ':' after a token");
        skip_space(r);
        if (integer(r, &v->id[v->n]) < 0)
            return -1;
        v->n++;
        skip_space(r);
        if (r->at < r->len && r->p[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->at < r->len && r->p[r->at] == '}')
            return r->at++, 0;
        return fail(r, "expected ',' or '}' after a token id");
    }
}

int qkv__gpt2_vocab_parse(qkv__gpt2_vocab *v, const char *p, size_t len)
{
    memset(v, 0, sizeof *v);
    reader r = {p, len, 0};
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        r.at = 3; /* a UTF-8 byte order mark */
    skip_space(&r);
    if (r.at >= len || p[r.at] != '{') {
        fail(&r, "expected '{', the start of an object of \"token\": id pairs");
        return -1;
    }
    r.at++;
    size_t used = 0;
    if (!(v->text = qkv_alloc(len + 1))) /* the unescaped tokens are never longer */
        return qkv_set_error("out of memory for %zu bytes of tokens", len);
    if (pairs(&r, v, &used) < 0)
        goto fail;
    skip_space(&r);
    if (r.at != len) {
        fail(&r, "bytes after the object's end");
        goto fail;
    }
    return 0;
fail:
    qkv__gpt2_vocab_free(v);
    return -1;
}
