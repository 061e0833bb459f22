/* The JSON header of a .safetensors file: a strict reader for this header only
 * (objects, strings, non-negative integers), then the checks that every
 * tensor's bytes lie in the data, match its dtype and shape, and tile the
 * data with no hole and no overlap, as the format requires. */
#include "safetensors_internal.h"

#include "io/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The dtypes of the format, their element sizes and which ones qkv converts. */
static const struct {
    const char *name;
    size_t size;
    qkv_st_dtype dtype;
} DTYPES[] = {
    {"F32", 4, QKV_ST_F32},    {"F16", 2, QKV_ST_F16},       {"BF16", 2, QKV_ST_BF16},
    {"F64", 8, QKV_ST_F64},    {"I64", 8, QKV_ST_OTHER},     {"I32", 4, QKV_ST_OTHER},
    {"I16", 2, QKV_ST_OTHER},  {"I8", 1, QKV_ST_OTHER},      {"U64", 8, QKV_ST_OTHER},
    {"U32", 4, QKV_ST_OTHER},  {"U16", 2, QKV_ST_OTHER},     {"U8", 1, QKV_ST_OTHER},
    {"BOOL", 1, QKV_ST_OTHER}, {"F8_E4M3", 1, QKV_ST_OTHER}, {"F8_E5M2", 1, QKV_ST_OTHER},
};
enum { N_DTYPES = sizeof DTYPES / sizeof DTYPES[0] };

/* A place in the header. */
typedef struct cursor {
    const char *p, *start, *end;
} cursor;

static int fail(const cursor *c, const char *what)
{
    return qkv_set_error("header byte %zu: %s", (size_t)(c->p - c->start), what);
}

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Skip whitespace; true when the next character is ch (not consumed). */
static bool next_is(cursor *c, char ch)
{
    skip_space(c);
    return c->p < c->end && *c->p == ch;
}

static int expect(cursor *c, char ch)
{
    if (!next_is(c, ch)) {
        char what[32] = "expected 'x'";
        what[10] = ch;
        return fail(c, what);
    }
    c->p++;
    return 0;
}

/* A JSON string (io/json.h), decoded to a NUL-terminated UTF-8 copy in *out
 * (qkv_free it); a name with a NUL inside could not be looked up. */
static int string(cursor *c, char **out)
{
    *out = NULL;
    if (!next_is(c, '"'))
        return expect(c, '"');
    /* The raw length bounds the decoded one: every escape is at least as long as its bytes. */
    const char *q = c->p + 1;
    while (q < c->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= c->end)
        return fail(c, "a string that does not end");
    char *s = qkv_alloc((size_t)(q - c->p) + 1);
    if (!s)
        return -1;
    qkv__json j = {c->start, (size_t)(c->end - c->start), (size_t)(c->p - c->start), "header byte"};
    size_t n;
    int rc = qkv__json_string(&j, s, &n);
    c->p = c->start + j.at;
    if (rc == 0 && memchr(s, 0, n))
        rc = fail(c, "a NUL character in a string");
    if (rc < 0) {
        qkv_free(s);
        return -1;
    }
    s[n] = 0;
    *out = s;
    return 0;
}

/* A non-negative integer without sign, fraction or leading zero, at most 10^18. */
static int integer(cursor *c, uint64_t *out)
{
    skip_space(c);
    const char *s = c->p;
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (v > 100000000000000000ULL)
            return fail(c, "an integer over 10^18");
        v = v * 10 + (uint64_t)(*c->p++ - '0');
    }
    if (c->p == s)
        return fail(c, "expected a non-negative integer");
    if (*s == '0' && c->p - s > 1)
        return fail(c, "an integer with a leading zero");
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'))
        return fail(c, "an integer with a fraction or an exponent");
    *out = v;
    return 0;
}

/* An array of integers into v (at most max), their number into *n. */
static int integers(cursor *c, uint64_t *v, int max, int *n)
{
    *n = 0;
    if (expect(c, '[') < 0)
        return -1;
    if (next_is(c, ']'))
        return c->p++, 0;
    do {
        if (*n == max)
            return fail(c, "too many numbers in an array");
        if (integer(c, &v[(*n)++]) < 0)
            return -1;
    } while (next_is(c, ',') && c->p++);
    return expect(c, ']');
}

/* Room for one more of elem bytes in *items (count n, capacity *cap). */
static int grow(void **items, int *cap, int n, size_t elem)
{
    if (n < *cap)
        return 0;
    if (*cap > (1 << 24))
        return qkv_set_error("over 16M entries in the header");
    int ncap = *cap ? 2 * *cap : 16;
    void *bigger = qkv_calloc((size_t)ncap * elem);
    if (!bigger)
        return -1;
    if (*items)
        memcpy(bigger, *items, (size_t)n * elem);
    qkv_free(*items);
    *items = bigger, *cap = ncap;
    return 0;
}

/* t's dtype word into its fields. */
static int dtype(cursor *c, qkv_st_tensor *t, size_t *size)
{
    char *word;
    if (string(c, &word) < 0)
        return -1;
    int i = 0;
    while (i < N_DTYPES && strcmp(word, DTYPES[i].name) != 0)
        i++;
    qkv_free(word);
    if (i == N_DTYPES)
        return fail(c, "an unknown dtype");
    t->dtype_name = DTYPES[i].name, t->dtype = DTYPES[i].dtype, *size = DTYPES[i].size;
    return 0;
}

/* A tensor's object {"dtype", "shape", "data_offsets"}, each once, nothing else. */
static int tensor(cursor *c, qkv_st_tensor *t, size_t data_len)
{
    uint64_t shape[QKV_ST_MAX_DIMS], off[2];
    int n_off = 0, seen = 0;
    size_t size = 0;
    if (expect(c, '{') < 0)
        return -1;
    do {
        char *key;
        if (string(c, &key) < 0)
            return -1;
        int k = !strcmp(key, "dtype") ? 1 : !strcmp(key, "shape") ? 2
              : !strcmp(key, "data_offsets")                      ? 4
                                                                  : 0;
        qkv_free(key);
        if (!k || (seen & k))
            return fail(c, k ? "a tensor's field given twice" : "an unknown field in a tensor");
        seen |= k;
        if (expect(c, ':') < 0 ||
            (k == 1 ? dtype(c, t, &size)
             : k == 2 ? integers(c, shape, QKV_ST_MAX_DIMS, &t->ndim)
                      : integers(c, off, 2, &n_off)) < 0)
            return -1;
    } while (next_is(c, ',') && c->p++);
    if (expect(c, '}') < 0)
        return -1;
    if (seen != 7)
        return fail(c, "a tensor without its dtype, shape or data_offsets");
    if (n_off != 2)
        return fail(c, "data_offsets is not [begin, end]");
    size_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (shape[d] && count > data_len / shape[d])
            return fail(c, "a shape larger than the data");
        t->shape[d] = (int64_t)shape[d];
        count *= (size_t)shape[d];
    }
    if (off[0] > off[1] || off[1] > data_len)
        return fail(c, "data_offsets outside the data");
    if (off[1] - off[0] != count * size)
        return fail(c, "data_offsets do not hold dtype x shape bytes");
    t->count = count, t->begin = (size_t)off[0], t->end = (size_t)off[1];
    return 0;
}

/* The "__metadata__" object: string keys to string values. */
static int metadata(cursor *c, qkv_safetensors *st)
{
    int cap = 0;
    if (expect(c, '{') < 0)
        return -1;
    if (next_is(c, '}'))
        return c->p++, 0;
    do {
        if (grow((void **)&st->meta, &cap, 2 * st->n_meta + 1, sizeof *st->meta) < 0 ||
            string(c, &st->meta[2 * st->n_meta]) < 0)
            return -1;
        st->n_meta++;
        if (expect(c, ':') < 0 || string(c, &st->meta[2 * st->n_meta - 1]) < 0)
            return -1;
    } while (next_is(c, ',') && c->p++);
    return expect(c, '}');
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(qkv_st_tensor *const *)a)->name, (*(qkv_st_tensor *const *)b)->name);
}

static int by_begin(const void *a, const void *b)
{
    const qkv_st_tensor *x = *(qkv_st_tensor *const *)a, *y = *(qkv_st_tensor *const *)b;
    return x->begin != y->begin ? (x->begin > y->begin ? 1 : -1)
                                : (x->end > y->end) - (x->end < y->end);
}

/* No name twice; the tensors' bytes cover the data exactly, in some order. */
static int check_tensors(const qkv_safetensors *st)
{
    qkv_st_tensor **order = qkv_alloc((size_t)(st->n ? st->n : 1) * sizeof *order);
    if (!order)
        return -1;
    for (int i = 0; i < st->n; i++)
        order[i] = &st->t[i];
    int rc = 0;
    qsort(order, (size_t)st->n, sizeof *order, by_name);
    for (int i = 1; i < st->n && !rc; i++)
        if (!strcmp(order[i - 1]->name, order[i]->name))
            rc = qkv_set_error("tensor \"%s\" is named twice", order[i]->name);
    qsort(order, (size_t)st->n, sizeof *order, by_begin);
    size_t at = 0;
    for (int i = 0; i < st->n && !rc; i++, at = order[i - 1]->end)
        if (order[i]->begin != at)
            rc = qkv_set_error("tensor \"%s\" starts at data byte %zu, not %zu: a hole or an "
                               "overlap",
                               order[i]->name, order[i]->begin, at);
    if (!rc && at != st->data_len)
        rc = qkv_set_error("the tensors end at data byte %zu of %zu", at, st->data_len);
    qkv_free(order);
    return rc;
}

int qkv__st_parse_header(qkv_safetensors *st, const char *json, size_t len)
{
    cursor c = {json, json, json + len};
    int cap = 0;
    bool have_meta = false;
    if (expect(&c, '{') < 0)
        return -1;
    if (!next_is(&c, '}'))
        do {
            char *name;
            if (string(&c, &name) < 0)
                return -1;
            if (expect(&c, ':') < 0) {
                qkv_free(name);
                return -1;
            }
            if (!strcmp(name, "__metadata__")) {
                qkv_free(name);
                if (have_meta)
                    return fail(&c, "__metadata__ given twice");
                have_meta = true;
                if (metadata(&c, st) < 0)
                    return -1;
                continue;
            }
            if (grow((void **)&st->t, &cap, st->n, sizeof *st->t) < 0) {
                qkv_free(name);
                return -1;
            }
            st->t[st->n].name = name;
            if (tensor(&c, &st->t[st->n++], st->data_len) < 0)
                return -1;
        } while (next_is(&c, ',') && c.p++);
    if (expect(&c, '}') < 0)
        return -1;
    /* The format pads the header with spaces to align the data. */
    skip_space(&c);
    if (c.p != c.end)
        return fail(&c, "more after the header's object");
    return check_tensors(st);
}
