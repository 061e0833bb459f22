/* A JSON reader for one file only: GPT-2's vocab.json (encoder.json), an object
 * of "token": id pairs. Strings take every JSON escape (\u with surrogate
 * pairs); values are non-negative integers. Nothing else of JSON is needed. */
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_gpt2.h"
#include "io/json.h"

/* The integer at r, in [0, 2^31). */
static int integer(qkv__json *r, int32_t *v)
{
    if (r->at >= r->len || r->p[r->at] < '0' || r->p[r->at] > '9')
        return qkv__json_fail(r, "expected a token id, a non-negative integer");
    int64_t x = 0;
    while (r->at < r->len && r->p[r->at] >= '0' && r->p[r->at] <= '9') {
        x = 10 * x + (r->p[r->at++] - '0');
        if (x > INT32_MAX)
            return qkv__json_fail(r, "a token id of 2^31 or more");
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
static int pairs(qkv__json *r, qkv__gpt2_vocab *v, size_t *used)
{
    int cap = 0;
    qkv__json_skip_space(r);
    if (r->at < r->len && r->p[r->at] == '}')
        return r->at++, 0;
    for (;;) {
        size_t n = 0;
        qkv__json_skip_space(r);
        if (reserve(v, &cap) < 0 || qkv__json_string(r, v->text + *used, &n) < 0)
            return -1;
        if (n > UINT32_MAX)
            return qkv__json_fail(r, "a token of 4 GB or more");
        v->off[v->n] = *used, v->len[v->n] = (uint32_t)n;
        *used += n;
        v->text[(*used)++] = '\0';
        qkv__json_skip_space(r);
        if (r->at >= r->len || r->p[r->at++] != ':')
            return qkv__json_fail(r, "expected ':' after a token");
        qkv__json_skip_space(r);
        if (integer(r, &v->id[v->n]) < 0)
            return -1;
        v->n++;
        qkv__json_skip_space(r);
        if (r->at < r->len && r->p[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->at < r->len && r->p[r->at] == '}')
            return r->at++, 0;
        return qkv__json_fail(r, "expected ',' or '}' after a token id");
    }
}

int qkv__gpt2_vocab_parse(qkv__gpt2_vocab *v, const char *p, size_t len)
{
    memset(v, 0, sizeof *v);
    qkv__json r = {p, len, 0, "byte"};
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        r.at = 3; /* a UTF-8 byte order mark */
    qkv__json_skip_space(&r);
    if (r.at >= len || p[r.at] != '{') {
        qkv__json_fail(&r, "expected '{', the start of an object of \"token\": id pairs");
        return -1;
    }
    r.at++;
    size_t used = 0;
    if (!(v->text = qkv_alloc(len + 1))) /* the unescaped tokens are never longer */
        return qkv_set_error("out of memory for %zu bytes of tokens", len);
    if (pairs(&r, v, &used) < 0)
        goto fail;
    qkv__json_skip_space(&r);
    if (r.at != len) {
        qkv__json_fail(&r, "bytes after the object's end");
        goto fail;
    }
    return 0;
fail:
    qkv__gpt2_vocab_free(v);
    return -1;
}
