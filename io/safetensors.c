/* Reading a .safetensors file (see qkv/safetensors.h): the 8-byte length, the
 * header (safetensors_header.c), the lookups and the conversion to qkv_real. */
#include "internal.h"
#include "safetensors_internal.h"
#include "tensor/check.h"
#include "tensor/kernels/gemm_bf16_held.h"

#include <math.h>
#include <string.h>

void qkv_safetensors_free(qkv_safetensors *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->n; i++)
        qkv_free((char *)st->t[i].name);
    for (int i = 0; i < 2 * st->n_meta; i++)
        qkv_free(st->meta[i]);
    qkv_free(st->meta);
    qkv_free(st->t);
    qkv_free(st->bytes);
    qkv_free(st);
}

/* The file's bytes (owned: freed with st on failure) split and checked. */
static qkv_safetensors *parse_owned(unsigned char *bytes, size_t len)
{
    qkv_safetensors *st = qkv_calloc(sizeof *st);
    if (!st) {
        qkv_free(bytes);
        return NULL;
    }
    st->bytes = bytes, st->len = len;
    uint64_t hlen = 0;
    for (int i = 7; len >= 8 && i >= 0; i--)
        hlen = hlen << 8 | bytes[i];
    if (len < 8)
        qkv_set_error("%zu bytes: shorter than the 8-byte header length", len);
    else if (hlen > QKV_ST_MAX_HEADER)
        qkv_set_error("a header of %llu bytes: over the limit of %d", (unsigned long long)hlen,
                      QKV_ST_MAX_HEADER);
    else if (hlen > len - 8)
        qkv_set_error("a header of %llu bytes in a file of %zu", (unsigned long long)hlen, len);
    else {
        st->data = bytes + 8 + hlen, st->data_len = len - 8 - (size_t)hlen;
        if (qkv__st_parse_header(st, (const char *)bytes + 8, (size_t)hlen) == 0)
            return st;
    }
    qkv_safetensors_free(st);
    return NULL;
}

qkv_safetensors *qkv_safetensors_open(const char *path)
{
    const char *fn = "qkv_safetensors_open";
    if (qkv__null(fn, "path", path))
        return NULL;
    size_t len;
    unsigned char *bytes = qkv__read_file(path, &len);
    if (!bytes) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_safetensors *st = parse_owned(bytes, len);
    if (!st)
        qkv__error_prefix("%s: %s", fn, path);
    return st;
}

qkv_safetensors *qkv_safetensors_parse(const void *bytes, size_t len)
{
    const char *fn = "qkv_safetensors_parse";
    if (qkv__null(fn, "bytes", bytes))
        return NULL;
    unsigned char *copy = qkv_alloc(len ? len : 1);
    if (!copy)
        return NULL;
    memcpy(copy, bytes, len);
    qkv_safetensors *st = parse_owned(copy, len);
    if (!st)
        qkv__fail_in(fn);
    return st;
}

int qkv_safetensors_count(const qkv_safetensors *st)
{
    return qkv__null("qkv_safetensors_count", "st", st) ? -1 : st->n;
}

const qkv_st_tensor *qkv_safetensors_tensor(const qkv_safetensors *st, int i)
{
    const char *fn = "qkv_safetensors_tensor";
    if (qkv__null(fn, "st", st))
        return NULL;
    if (i < 0 || i >= st->n) {
        qkv_set_error("%s: i %d is not in [0, %d)", fn, i, st->n);
        return NULL;
    }
    return &st->t[i];
}

const qkv_st_tensor *qkv_safetensors_find(const qkv_safetensors *st, const char *name)
{
    const char *fn = "qkv_safetensors_find";
    if (qkv__null(fn, "st", st) || qkv__null(fn, "name", name))
        return NULL;
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->t[i].name, name))
            return &st->t[i];
    qkv_set_error("%s: no tensor \"%s\" in the file", fn, name);
    return NULL;
}

const char *qkv_safetensors_meta(const qkv_safetensors *st, const char *key)
{
    const char *fn = "qkv_safetensors_meta";
    if (qkv__null(fn, "st", st) || qkv__null(fn, "key", key))
        return NULL;
    for (int i = 0; i < st->n_meta; i++)
        if (!strcmp(st->meta[2 * i], key))
            return st->meta[2 * i + 1];
    qkv_set_error("%s: no metadata \"%s\" in the file", fn, key);
    return NULL;
}

/* IEEE half h as a double (subnormals, infinities and NaN included). */
static double from_f16(uint16_t h)
{
    int e = h >> 10 & 0x1F, f = h & 0x3FF;
    double v = e == 0 ? ldexp(f, -24) : e == 31 ? (f ? NAN : INFINITY) : ldexp(f | 0x400, e - 25);
    return h >> 15 ? -v : v;
}

/* The little-endian word of n bytes at p. */
static uint64_t word(const unsigned char *p, int n)
{
    uint64_t w = 0;
    for (int i = n - 1; i >= 0; i--)
        w = w << 8 | p[i];
    return w;
}

int qkv_safetensors_read(const qkv_safetensors *st, const qkv_st_tensor *t, qkv_real *out,
                         size_t n)
{
    const char *fn = "qkv_safetensors_read";
    if (qkv__null(fn, "st", st) || qkv__null(fn, "t", t) || qkv__null(fn, "out", out))
        return -1;
    if (t < st->t || t >= st->t + st->n)
        return qkv_set_error("%s: t is not a tensor of st", fn);
    if (n < t->count)
        return qkv_set_error("%s: n %zu is less than %s's %zu values", fn, n, t->name, t->count);
    if (t->dtype == QKV_ST_OTHER)
        return qkv_set_error("%s: %s is %s, not a float type (F32, F16, BF16, F64)", fn,
                             t->name, t->dtype_name);
    qkv__bf16_held_changed(); /* out may be a parameter's values */
    const unsigned char *p = st->data + t->begin;
    for (size_t i = 0; i < t->count; i++) {
        float f;
        double d;
        switch (t->dtype) {
        case QKV_ST_F32: {
            uint32_t w = (uint32_t)word(p + 4 * i, 4);
            memcpy(&f, &w, 4);
            out[i] = (qkv_real)f;
            break;
        }
        case QKV_ST_BF16: {
            uint32_t w = (uint32_t)word(p + 2 * i, 2) << 16;
            memcpy(&f, &w, 4);
            out[i] = (qkv_real)f;
            break;
        }
        case QKV_ST_F16:
            out[i] = (qkv_real)from_f16((uint16_t)word(p + 2 * i, 2));
            break;
        default: { /* QKV_ST_F64 */
            uint64_t w = word(p + 8 * i, 8);
            memcpy(&d, &w, 8);
            out[i] = (qkv_real)d;
        }
        }
    }
    return 0;
}
