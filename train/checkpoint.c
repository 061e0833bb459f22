/* Checkpoint files: an atomic save, a two-phase load that checks every
 * field (see qkv/checkpoint.h for the format). */
#include "qkv/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "train/bytes.h"
#include "io/internal.h"
#include "data/internal.h"
#include "train/internal.h"
#include "qkv/file.h"
#include "qkv/precision.h"
#include "tensor/kernels/gemm_bf16_held.h"

static const char MAGIC[8] = "QKVCKPT"; /* seven letters and the NUL */

/* The format version of a file saved in fp32 (read by every qkv), and of one
 * saved in another precision, which ends with the precision's id. */
enum { VERSION_FP32 = 1, VERSION_PRECISION = 2 };

/* Magic, version and file size: the fields read before anything else. */
#define PREAMBLE_BYTES 20

/* The smallest parameter record: name length, a 1-byte name, ndim, one extent, one value. */
#define MIN_PARAM_BYTES (4 + 1 + 4 + 4 + 4)

/* More float32 values than any file in memory can hold (4·2^62 bytes). */
#define VALUES_CAP ((uint64_t)1 << 62)

/* ======================================================== saving */

/* Writes fields to a FILE, keeping their size and CRC. With f NULL it only
 * counts bytes: that is how the file size is known before writing the file. */
typedef struct writer {
    FILE *f;       /* destination, or NULL to count only */
    uint64_t size; /* bytes so far */
    uint32_t crc;  /* CRC-32 of those bytes (when writing) */
    int err;       /* errno of the first failed fwrite, or 0 */
} writer;

static void put(writer *w, const void *p, size_t n)
{
    w->size += n;
    if (!w->f || w->err || n == 0)
        return;
    w->crc = qkv_crc32(w->crc, p, n);
    errno = 0;
    if (fwrite(p, 1, n, w->f) != n)
        w->err = errno ? errno : EIO;
}

/* x as 4 little-endian bytes. */
static void put_u32(writer *w, uint32_t x)
{
    unsigned char b[4];
    qkv__put_u32(b, x);
    put(w, b, 4);
}

/* x as 8 little-endian bytes. */
static void put_u64(writer *w, uint64_t x)
{
    unsigned char b[8];
    qkv__put_u64(b, x);
    put(w, b, 8);
}

/* n values as float32, converted a buffer at a time. */
static void put_f32s(writer *w, const qkv_real *x, size_t n)
{
    if (!w->f) {
        w->size += 4 * (uint64_t)n;
        return;
    }
    unsigned char buf[4096];
    while (n > 0) {
        size_t k = n < sizeof buf / 4 ? n : sizeof buf / 4;
        for (size_t i = 0; i < k; i++)
            qkv__put_f32(buf + 4 * i, (float)x[i]);
        put(w, buf, 4 * k);
        x += k;
        n -= k;
    }
}

/* Every field of the file but the final checksum, in order. */
static void put_fields(writer *w, uint64_t file_size, const qkv_ckpt_model *model,
                       const qkv_params *p, const qkv_optim *opt, const qkv_ckpt_progress *prog)
{
    const int precision = qkv_precision_active();
    put(w, MAGIC, 8);
    put_u32(w, precision == QKV_PRECISION_FP32 ? VERSION_FP32 : VERSION_PRECISION);
    put_u64(w, file_size);
    size_t k = strlen(model->kind);
    put_u32(w, (uint32_t)k);
    put(w, model->kind, k);
    put_u64(w, model->config_len);
    put(w, model->config, model->config_len);
    int v = model->vocab ? model->vocab->size : 0;
    put_u32(w, (uint32_t)v);
    put(w, model->vocab ? model->vocab->byte : NULL, (size_t)v);

    put_u32(w, (uint32_t)p->count);
    for (int i = 0; i < p->count; i++) {
        const qkv_tensor *t = p->items[i].t;
        size_t len = strlen(p->items[i].name);
        put_u32(w, (uint32_t)len);
        put(w, p->items[i].name, len);
        put_u32(w, (uint32_t)t->ndim);
        for (int d = 0; d < t->ndim; d++)
            put_u32(w, (uint32_t)t->shape[d]);
        put_f32s(w, t->data, t->size);
    }

    const qkv_real *moments[2] = {opt ? opt->m : NULL, opt ? opt->v : NULL};
    put_u32(w, opt ? (uint32_t)opt->cfg.kind : 0);
    put_u64(w, opt ? (uint64_t)opt->step : 0);
    for (int j = 0; j < (opt ? opt->n_moments : 0); j++)
        for (int i = 0; i < p->count; i++)
            put_f32s(w, moments[j] + p->items[i].offset, p->items[i].t->size);

    put_u64(w, prog ? (uint64_t)prog->step : 0);
    int n_rngs = prog ? prog->n_rngs : 0;
    put_u32(w, (uint32_t)n_rngs);
    for (int r = 0; r < n_rngs; r++)
        for (int s = 0; s < 4; s++)
            put_u64(w, prog->rngs[r]->s[s]);
    if (precision != QKV_PRECISION_FP32)
        put_u32(w, (uint32_t)precision);
}

/* ---- the rules a file must follow: save refuses what open would refuse ---- */

/* The index of the first byte of s[0..n) that is not printable ASCII, or n. */
static size_t first_unprintable(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= 0x20 && s[i] <= 0x7e)
        i++;
    return i;
}

/* True when a stored RNG state is all zero: xoshiro would return 0 for ever. */
static bool rng_state_zero(const uint64_t s[4]) { return !(s[0] | s[1] | s[2] | s[3]); }

/* The index of the first of x[0..n) that is not finite as a float32 (what the
 * file stores: a double build's 1e300 would become inf), or negative when
 * nonneg, else n. */
static size_t first_bad_value(const qkv_real *x, size_t n, bool nonneg)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite((float)x[i]) || (nonneg && x[i] < 0))
            return i;
    return n;
}

/* 0 when the values of p (or, with moment j >= 0, that optimizer moment) are
 * storable; else -1 naming the parameter, the index and the value. */
static int check_values(const qkv_params *p, const qkv_real *base, int j, const char *what)
{
    for (int i = 0; i < p->count; i++) {
        const qkv_real *x = base + p->items[i].offset;
        size_t n = p->items[i].t->size, k = first_bad_value(x, n, j == 1);
        if (k < n)
            return qkv_set_error("%s of parameter '%s' holds %g at index %zu; a checkpoint holds "
                                 "only finite values%s",
                                 what, p->items[i].name, (double)x[k], k,
                                 j == 1 ? " (and second moments >= 0)" : "");
    }
    return 0;
}

/* 0 when prog (or NULL) lists its RNGs properly, else -1. */
static int check_progress(const qkv_ckpt_progress *prog)
{
    if (prog && (prog->n_rngs < 0 || (prog->n_rngs > 0 && !prog->rngs)))
        return qkv_set_error("the progress lists %d RNGs%s", prog->n_rngs,
                             prog->n_rngs > 0 ? " but no pointers to them (rngs is NULL)" : "");
    for (int r = 0; prog && r < prog->n_rngs; r++)
        if (!prog->rngs[r])
            return qkv_set_error("progress->rngs[%d] is NULL", r);
    return 0;
}

/* 0 when prog (or NULL), which check_progress passed, can be saved: a step
 * >= 0 and RNG states that are not all zero (the loader refuses those). */
static int check_progress_saved(const qkv_ckpt_progress *prog)
{
    if (!prog)
        return 0;
    if (prog->step < 0)
        return qkv_set_error("the training step %lld is negative", (long long)prog->step);
    for (int r = 0; r < prog->n_rngs; r++) {
        if (rng_state_zero(prog->rngs[r]->s))
            return qkv_set_error("RNG state %d is all zero (never seeded?); the loader would "
                                 "refuse it",
                                 r);
    }
    return 0;
}

/* 0 when the arguments of a save make a valid file, else -1. */
static int check_save(const qkv_ckpt_model *model, const qkv_params *p, const qkv_optim *opt,
                      const qkv_ckpt_progress *prog)
{
    size_t k = model->kind ? strlen(model->kind) : 0;
    if (k < 1 || k > QKV_CKPT_KIND_MAX)
        return qkv_set_error("the model kind must have 1 to %d characters, not %zu",
                             QKV_CKPT_KIND_MAX, k);
    if (first_unprintable(model->kind, k) < k)
        return qkv_set_error("the model kind must be printable ASCII");
    if (model->config_len > 0 && !model->config)
        return qkv_set_error("a config of %zu bytes at NULL", model->config_len);
    if (model->vocab && qkv__vocab_check(model->vocab->byte, model->vocab->size) < 0)
        return qkv__error_prefix("model->vocab");
    if (!p->data)
        return qkv_set_error("the parameters are not allocated");
    for (int i = 0; i < p->count; i++) {
        size_t n = strlen(p->items[i].name);
        if (n < 1 || n >= QKV_PARAM_NAME_MAX || first_unprintable(p->items[i].name, n) < n)
            return qkv_set_error("parameter %d's name must have 1 to %d printable ASCII "
                                 "characters", i, QKV_PARAM_NAME_MAX - 1);
    }
    if (check_values(p, p->data, -1, "the value") < 0)
        return -1;
    if (opt && opt->n != p->total)
        return qkv_set_error("the optimizer holds %zu values, the parameters %zu", opt->n,
                             p->total);
    if (opt && opt->step < 0)
        return qkv_set_error("the optimizer step %lld is negative", (long long)opt->step);
    const qkv_real *moments[2] = {opt ? opt->m : NULL, opt ? opt->v : NULL};
    for (int j = 0; j < (opt ? opt->n_moments : 0); j++)
        if (check_values(p, moments[j], j, j ? "the second moment" : "the first moment") < 0)
            return -1;
    if (check_progress(prog) < 0)
        return -1;
    return check_progress_saved(prog);
}

/* Write the file of size bytes through the safe-output path: a temporary
 * beside path, renamed onto it once every byte is on disk. */
static int write_file(const char *path, uint64_t size, const qkv_ckpt_model *model,
                      const qkv_params *p, const qkv_optim *opt, const qkv_ckpt_progress *prog)
{
    qkv_output *o = qkv_output_open(path);
    if (!o)
        return -1;
    writer w = {.f = qkv_output_file(o)};
    put_fields(&w, size, model, p, opt, prog);
    put_u32(&w, w.crc);
    if (w.err) {
        qkv_output_abort(o);
        return qkv_set_error("cannot write '%s': %s (the file there, if any, is left as it was)",
                             path, strerror(w.err));
    }
    return qkv_output_commit(o);
}

static int save(const char *path, const qkv_ckpt_model *model, const qkv_params *p,
                const qkv_optim *opt, const qkv_ckpt_progress *prog)
{
    if (check_save(model, p, opt, prog) < 0)
        return qkv__error_prefix("checkpoint save '%s'", path);
    writer count = {0};
    put_fields(&count, 0, model, p, opt, prog);
    /* The lock for this save, unless the program holds it for its whole run. */
    bool taken;
    int rc = qkv__lock_take(path, &taken);
    if (rc == 0)
        rc = write_file(path, count.size + 4, model, p, opt, prog);
    if (taken)
        qkv__lock_give(path);
    return rc < 0 ? qkv__error_prefix("checkpoint save") : 0;
}

int qkv_checkpoint_save(const char *path, const qkv_ckpt_model *model, const qkv_params *p,
                        const qkv_optim *opt, const qkv_ckpt_progress *progress)
{
    const char *fn = "qkv_checkpoint_save";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "model", model) || qkv__null(fn, "p", p))
        return -1;
    return save(path, model, p, opt, progress) < 0 ? qkv__fail_in(fn) : 0;
}

/* ======================================================== loading */

/* One stored parameter. */
typedef struct ckpt_entry {
    char name[QKV_PARAM_NAME_MAX]; /* its name */
    qkv_tensor shape;              /* ndim, shape and size only (no data) */
    size_t values;                 /* byte offset of its float32 values in the file */
    size_t first;                  /* index of its first value among all parameters' */
} ckpt_entry;

/* The part of an opened checkpoint its user does not see. */
struct qkv_checkpoint_body {
    char *name;           /* the path (or the caller's name), for messages */
    unsigned char *bytes; /* the whole file */
    size_t len;           /* its length */
    ckpt_entry *params;   /* n_params entries, in file order */
    size_t moments;       /* byte offset of the first moment buffer */
    size_t rngs;          /* byte offset of the first RNG state */
    uint32_t version;     /* the format version */
    int precision;        /* the products' precision when saved (qkv/precision.h) */
};

/* A cursor over the file that says which field it ran out in. */
typedef struct reader {
    const unsigned char *p; /* the bytes */
    size_t len;             /* how many may be read */
    size_t pos;             /* the next to read */
    char what[400];         /* starts every message: "checkpoint 'x' is truncated" */
} reader;

/* n items of elem bytes at the cursor, for field; NULL, with a message,
 * when fewer bytes are left (checked without overflow, before any use). */
static const unsigned char *take(reader *r, uint64_t n, size_t elem, const char *field)
{
    size_t left = r->len - r->pos;
    if (n > left / elem) {
        if (elem == 1)
            qkv_set_error("%s: %s needs %llu bytes at offset %zu, but %zu are left", r->what, field,
                          (unsigned long long)n, r->pos, left);
        else
            qkv_set_error("%s: %s needs %llu × %zu bytes at offset %zu, but %zu are left", r->what,
                          field, (unsigned long long)n, elem, r->pos, left);
        return NULL;
    }
    const unsigned char *at = r->p + r->pos;
    r->pos += (size_t)n * elem;
    return at;
}

/* The 4-byte little-endian field at the cursor into *out; 0, or -1 when it is cut off. */
static int get_u32(reader *r, const char *field, uint32_t *out)
{
    const unsigned char *b = take(r, 4, 1, field);
    if (!b)
        return -1;
    *out = qkv__get_u32(b);
    return 0;
}

/* The 8-byte little-endian field at the cursor into *out; 0, or -1 when it is cut off. */
static int get_u64(reader *r, const char *field, uint64_t *out)
{
    const unsigned char *b = take(r, 8, 1, field);
    if (!b)
        return -1;
    *out = qkv__get_u64(b);
    return 0;
}

/* One parameter record (the index-th) into e; total counts values so far. */
static int parse_param(reader *r, uint32_t index, ckpt_entry *e, size_t *total)
{
    char field[128];
    uint32_t len, ndim, extent;
    snprintf(field, sizeof field, "the name length of parameter %u", index);
    if (get_u32(r, field, &len) < 0)
        return -1;
    if (len < 1 || len >= QKV_PARAM_NAME_MAX)
        return qkv_set_error("%s: parameter %u has a name of %u bytes; 1 to %d allowed", r->what,
                             index, len, QKV_PARAM_NAME_MAX - 1);
    snprintf(field, sizeof field, "the name of parameter %u", index);
    const unsigned char *s = take(r, len, 1, field);
    if (!s)
        return -1;
    if (first_unprintable((const char *)s, len) < len)
        return qkv_set_error("%s: the name of parameter %u holds byte 0x%02x at %zu; names are "
                             "printable ASCII",
                             r->what, index, s[first_unprintable((const char *)s, len)],
                             first_unprintable((const char *)s, len));
    memcpy(e->name, s, len);
    e->name[len] = 0;
    snprintf(field, sizeof field, "the number of dimensions of parameter '%s'", e->name);
    if (get_u32(r, field, &ndim) < 0)
        return -1;
    if (ndim < 1 || ndim > QKV_MAX_DIMS)
        return qkv_set_error("%s: parameter '%s' has %u dimensions; 1 to %d allowed", r->what,
                             e->name, ndim, QKV_MAX_DIMS);
    e->shape.ndim = (int)ndim;
    uint64_t size = 1;
    for (uint32_t d = 0; d < ndim; d++) {
        snprintf(field, sizeof field, "the shape of parameter '%s'", e->name);
        if (get_u32(r, field, &extent) < 0)
            return -1;
        if (extent < 1 || extent > (1u << 30))
            return qkv_set_error("%s: parameter '%s' has extent %u in dimension %u", r->what,
                                 e->name, extent, d);
        e->shape.shape[d] = (int)extent;
        /* Four extents could reach 2^120: saturate at 2^62, which take() always rejects. */
        size = size > VALUES_CAP / extent ? VALUES_CAP : size * extent;
    }
    snprintf(field, sizeof field, "the values of parameter '%s'", e->name);
    e->values = r->pos;
    if (!take(r, size, 4, field))
        return -1;
    e->shape.size = (size_t)size;
    e->first = *total;
    *total += (size_t)size;
    return 0;
}

/* Every field after the preamble, into ck and its body. 0 or -1. */
static int parse(reader *r, qkv_checkpoint *ck)
{
    struct qkv_checkpoint_body *b = ck->body;
    const unsigned char *s;
    uint32_t u;
    uint64_t len;

    if (get_u32(r, "the length of the model kind", &u) < 0)
        return -1;
    if (u < 1 || u > QKV_CKPT_KIND_MAX)
        return qkv_set_error("%s: the model kind has %u bytes; 1 to %d allowed", r->what, u,
                             QKV_CKPT_KIND_MAX);
    if (!(s = take(r, u, 1, "the model kind")))
        return -1;
    size_t bad = first_unprintable((const char *)s, u);
    if (bad < u)
        return qkv_set_error("%s: the model kind holds byte 0x%02x at %zu; a kind is printable "
                             "ASCII",
                             r->what, s[bad], bad);
    memcpy(ck->kind, s, u);
    ck->kind[u] = 0;

    if (get_u64(r, "the length of the model config", &len) < 0 ||
        !(s = take(r, len, 1, "the model config")))
        return -1;
    ck->config = s;
    ck->config_len = (size_t)len;

    if (get_u32(r, "the vocabulary size", &u) < 0 || !(s = take(r, u, 1, "the vocabulary")))
        return -1;
    if (qkv__vocab_check(s, u) < 0)
        return qkv__error_prefix("%s", r->what);
    qkv_tokenizer_from_bytes(&ck->vocab, s, (int)u);

    /* Check the count against the bytes left before allocating its table. */
    if (get_u32(r, "the number of parameters", &u) < 0)
        return -1;
    if (u > (r->len - r->pos) / MIN_PARAM_BYTES || u > INT32_MAX)
        return qkv_set_error("%s: the %u parameters need at least %llu bytes at offset %zu, but "
                             "%zu are left",
                             r->what, u, (unsigned long long)u * MIN_PARAM_BYTES, r->pos,
                             r->len - r->pos);
    if (!(b->params = qkv_calloc((u ? u : 1) * sizeof *b->params)))
        return -1;
    ck->n_params = (int)u;
    for (uint32_t i = 0; i < u; i++)
        if (parse_param(r, i, &b->params[i], &ck->n_values) < 0)
            return -1;

    if (get_u32(r, "the optimizer kind", &u) < 0)
        return -1;
    if (u != 0 && qkv__optim_moments((int)u) == 0)
        return qkv_set_error("%s: unknown optimizer kind %u", r->what, u);
    ck->optim_kind = (int)u;
    if (get_u64(r, "the optimizer step", &len) < 0)
        return -1;
    if (len > INT64_MAX)
        return qkv_set_error("%s: the optimizer step %lld is negative", r->what, (long long)len);
    ck->optim_step = (int64_t)len;
    b->moments = r->pos;
    if (!take(r, (uint64_t)qkv__optim_moments((int)u) * ck->n_values, 4, "the optimizer moments"))
        return -1;

    if (get_u64(r, "the training step", &len) < 0)
        return -1;
    if (len > INT64_MAX)
        return qkv_set_error("%s: the training step %lld is negative", r->what, (long long)len);
    ck->step = (int64_t)len;
    if (get_u32(r, "the number of RNG states", &u) < 0)
        return -1;
    b->rngs = r->pos;
    if (!take(r, u, 32, "the RNG states"))
        return -1;
    if (u > INT32_MAX)
        return qkv_set_error("%s: %u RNG states", r->what, u);
    ck->n_rngs = (int)u;
    for (uint32_t i = 0; i < u; i++) {
        uint64_t state[4];
        for (int k = 0; k < 4; k++)
            state[k] = qkv__get_u64(b->bytes + b->rngs + 32 * i + 8 * (size_t)k);
        if (rng_state_zero(state))
            return qkv_set_error("%s: RNG state %u is all zero", r->what, i);
    }

    b->precision = QKV_PRECISION_FP32; /* version 1 has no field: it was fp32 */
    if (b->version >= VERSION_PRECISION) {
        if (get_u32(r, "the precision", &u) < 0)
            return -1;
        if (u >= QKV_PRECISIONS)
            return qkv_set_error("%s: unknown precision %u (0 fp32, 1 bf16)", r->what, u);
        b->precision = (int)u;
    }
    return 0;
}

/* The index of the first of the n float32 values at src that is not finite
 * (or negative when nonneg), else n. */
static size_t first_bad_stored(const unsigned char *src, size_t n, bool nonneg)
{
    for (size_t i = 0; i < n; i++) {
        float x = qkv__get_f32(src + 4 * i);
        if (!isfinite(x) || (nonneg && x < 0))
            return i;
    }
    return n;
}

/* 0 when every stored value and moment is finite (and AdamW's second moments
 * >= 0): a file that passes its checksum can still hold NaN weights, which
 * would sample garbage or resume into NaN. Else -1 naming the first. */
static int check_stored_values(const qkv_checkpoint *ck, const char *what)
{
    const struct qkv_checkpoint_body *b = ck->body;
    int n_moments = qkv__optim_moments(ck->optim_kind);
    static const char *names[3] = {"value", "first moment", "second moment"};
    for (int j = -1; j < n_moments; j++)
        for (int i = 0; i < ck->n_params; i++) {
            const ckpt_entry *e = &b->params[i];
            const unsigned char *src =
                j < 0 ? b->bytes + e->values
                      : b->bytes + b->moments + 4 * ((size_t)j * ck->n_values + e->first);
            bool nonneg = j == 1; /* AdamW's and Muon's second moments */
            size_t k = first_bad_stored(src, e->shape.size, nonneg);
            if (k < e->shape.size)
                return qkv_set_error("%s: the %s %zu of parameter '%s' is %g; a checkpoint holds "
                                     "only finite values%s",
                                     what, names[j + 1], k, e->name,
                                     (double)qkv__get_f32(src + 4 * k),
                                     nonneg ? " (and second moments >= 0)" : "");
        }
    return 0;
}

/* Phase one's checks, in the order that gives the most precise message. */
static int check_file(qkv_checkpoint *ck, const char *kind)
{
    const struct qkv_checkpoint_body *b = ck->body;
    reader r = {.p = b->bytes, .len = b->len};
    snprintf(r.what, sizeof r.what, "checkpoint '%s' is truncated (%zu bytes)", b->name, b->len);
    const unsigned char *magic = take(&r, 8, 1, "the magic");
    if (!magic)
        return -1;
    if (memcmp(magic, MAGIC, 8) != 0)
        return qkv_set_error("'%s' is not a qkv checkpoint: bad magic (it does not start with "
                             "\"QKVCKPT\\0\")",
                             b->name);
    uint32_t version;
    uint64_t size;
    if (get_u32(&r, "the format version", &version) < 0)
        return -1;
    if (version == 0 || version > QKV_CKPT_VERSION)
        return qkv_set_error("checkpoint '%s' has format version %u; this qkv reads versions 1 to "
                             "%d%s",
                             b->name, version, QKV_CKPT_VERSION,
                             version > QKV_CKPT_VERSION ? " (it was written by a newer qkv)" : "");
    ck->body->version = version;
    if (get_u64(&r, "the file size", &size) < 0)
        return -1;
    if (size != b->len) {
        if (size > b->len) {
            /* Walk the fields that are there to say which one the file ends in. */
            snprintf(r.what, sizeof r.what, "checkpoint '%s' is truncated (%zu of %llu bytes)",
                     b->name, b->len, (unsigned long long)size);
            if (parse(&r, ck) < 0)
                return -1;
            if (r.len - r.pos < 4)
                return qkv_set_error("%s: it ends in the checksum", r.what);
        }
        /* Every field is there: the size itself is wrong, or bytes were appended. */
        return qkv_set_error("checkpoint '%s' has %zu bytes but its header says %llu: a corrupt "
                             "header or trailing bytes",
                             b->name, b->len, (unsigned long long)size);
    }
    if (b->len < PREAMBLE_BYTES + 4)
        return qkv_set_error("checkpoint '%s' is malformed: %zu bytes leave no room for a checksum",
                             b->name, b->len);
    uint32_t stored = qkv__get_u32(b->bytes + b->len - 4);
    uint32_t computed = qkv_crc32(0, b->bytes, b->len - 4);
    if (stored != computed)
        return qkv_set_error("checkpoint '%s' is corrupt: checksum mismatch (stored %08x, computed "
                             "%08x)",
                             b->name, stored, computed);
    /* The checksum is right, so a field that does not fit was written wrong. */
    snprintf(r.what, sizeof r.what, "checkpoint '%s' is malformed", b->name);
    r.len = b->len - 4;
    if (parse(&r, ck) < 0)
        return -1;
    if (r.pos != r.len)
        return qkv_set_error("%s: %zu unexplained bytes before the checksum", r.what,
                             r.len - r.pos);
    if (check_stored_values(ck, r.what) < 0)
        return -1;
    if (kind && strcmp(kind, ck->kind) != 0)
        return qkv_set_error("checkpoint '%s' holds a '%s' model, not the expected '%s'", b->name,
                             ck->kind, kind);
    return 0;
}

/* Open the len bytes at bytes (taken over: freed on failure or at close). */
static qkv_checkpoint *open_owned(unsigned char *bytes, size_t len, const char *name,
                                  const char *kind)
{
    qkv_checkpoint *ck = qkv_calloc(sizeof *ck);
    struct qkv_checkpoint_body *b = ck ? qkv_calloc(sizeof *b) : NULL;
    char *nm = b ? qkv_alloc(strlen(name) + 1) : NULL;
    if (!nm) {
        qkv_free(b);
        qkv_free(ck);
        qkv_free(bytes);
        return NULL;
    }
    strcpy(nm, name);
    *b = (struct qkv_checkpoint_body){.name = nm, .bytes = bytes, .len = len};
    ck->body = b;
    if (check_file(ck, kind) < 0) {
        qkv_checkpoint_close(ck);
        return NULL;
    }
    return ck;
}

qkv_checkpoint *qkv_checkpoint_open(const char *path, const char *kind)
{
    if (qkv__null("qkv_checkpoint_open", "path", path))
        return NULL;
    size_t len;
    unsigned char *bytes = qkv__read_file(path, &len);
    if (!bytes) {
        qkv__fail_in("qkv_checkpoint_open");
        return NULL;
    }
    qkv_checkpoint *ck = open_owned(bytes, len, path, kind);
    if (!ck)
        qkv__fail_in("qkv_checkpoint_open");
    return ck;
}

qkv_checkpoint *qkv_checkpoint_open_bytes(const void *bytes, size_t len, const char *name,
                                          const char *kind)
{
    const char *fn = "qkv_checkpoint_open_bytes";
    if (len > 0 && qkv__null(fn, "bytes", bytes))
        return NULL;
    unsigned char *copy = qkv_alloc(len ? len : 1);
    if (!copy) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (len)
        memcpy(copy, bytes, len);
    qkv_checkpoint *ck = open_owned(copy, len, name ? name : "(unnamed bytes)", kind);
    if (!ck)
        qkv__fail_in(fn);
    return ck;
}

void qkv_checkpoint_close(qkv_checkpoint *ck)
{
    if (!ck)
        return;
    if (ck->body) {
        qkv_free(ck->body->name);
        qkv_free(ck->body->bytes);
        qkv_free(ck->body->params);
        qkv_free(ck->body);
    }
    qkv_free(ck);
}

/* The stored entry called name, or NULL. */
static const ckpt_entry *find_entry(const qkv_checkpoint *ck, const char *name)
{
    for (int i = 0; i < ck->n_params; i++)
        if (strcmp(ck->body->params[i].name, name) == 0)
            return &ck->body->params[i];
    return NULL;
}

/* 0 when the stored parameters and p's have the same names and shapes. */
static int match_params(const qkv_checkpoint *ck, const qkv_params *p)
{
    const char *name = ck->body->name;
    for (int i = 0; i < ck->n_params; i++) {
        const ckpt_entry *e = &ck->body->params[i];
        const qkv_param *it = qkv_params_find(p, e->name);
        if (!it)
            return qkv_set_error("checkpoint '%s' has a parameter '%s' that the model does not",
                                 name, e->name);
        if (!qkv_same_shape(&e->shape, it->t)) {
            char sf[64], sm[64];
            return qkv_set_error("parameter '%s' has shape %s in checkpoint '%s' but %s in the "
                                 "model",
                                 e->name, qkv_shape_str(&e->shape, sf, sizeof sf), name,
                                 qkv_shape_str(it->t, sm, sizeof sm));
        }
    }
    for (int i = 0; i < p->count; i++)
        if (!find_entry(ck, p->items[i].name))
            return qkv_set_error("the model's parameter '%s' is not in checkpoint '%s'",
                                 p->items[i].name, name);
    if (ck->n_params != p->count)
        return qkv_set_error("checkpoint '%s' lists %d parameters for the model's %d: a name "
                             "appears twice",
                             name, ck->n_params, p->count);
    return 0;
}

/* The optimizer kind as messages name it. */
static const char *optim_name(int kind)
{
    return kind == QKV_OPTIM_ADAMW ? "AdamW"
           : kind == QKV_OPTIM_SGD ? "SGD"
           : kind == QKV_OPTIM_MUON ? "Muon"
                                    : "no optimizer";
}

/* n float32 values at src into x. */
static void get_f32s(qkv_real *x, const unsigned char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (qkv_real)qkv__get_f32(src + 4 * i);
}

static int load(const qkv_checkpoint *ck, qkv_params *p, qkv_optim *opt, qkv_ckpt_progress *prog)
{
    const struct qkv_checkpoint_body *b = ck->body;
    if (!p->data)
        return qkv_set_error("checkpoint load: the parameters are not allocated");
    if (match_params(ck, p) < 0)
        return -1;
    qkv__bf16_held_changed(); /* new weights: a generation's bf16 copies are stale */
    if (opt && (int)opt->cfg.kind != ck->optim_kind)
        return qkv_set_error("checkpoint '%s' holds %s state, but the optimizer is %s", b->name,
                             optim_name(ck->optim_kind), optim_name(opt->cfg.kind));
    if (opt && opt->n != p->total)
        return qkv_set_error("checkpoint load: the optimizer holds %zu values, the parameters %zu",
                             opt->n, p->total);
    if (check_progress(prog) < 0)
        return qkv__error_prefix("checkpoint load");
    if (prog && prog->n_rngs != ck->n_rngs)
        return qkv_set_error("checkpoint '%s' holds %d RNG states, the program has %d", b->name,
                             ck->n_rngs, prog->n_rngs);

    /* Everything matches: from here on nothing can fail. */
    qkv_real *moments[2] = {opt ? opt->m : NULL, opt ? opt->v : NULL};
    for (int i = 0; i < ck->n_params; i++) {
        const ckpt_entry *e = &b->params[i];
        const qkv_param *it = qkv_params_find(p, e->name);
        get_f32s(it->t->data, b->bytes + e->values, e->shape.size);
        for (int j = 0; j < (opt ? opt->n_moments : 0); j++)
            get_f32s(moments[j] + it->offset,
                     b->bytes + b->moments + 4 * (j * ck->n_values + e->first), e->shape.size);
    }
    if (opt)
        opt->step = ck->optim_step;
    if (prog) {
        prog->step = ck->step;
        for (int r = 0; r < ck->n_rngs; r++)
            for (int s = 0; s < 4; s++)
                prog->rngs[r]->s[s] =
                    qkv__get_u64(b->bytes + b->rngs + 32 * (size_t)r + 8 * (size_t)s);
    }
    return 0;
}

int qkv_checkpoint_load(const qkv_checkpoint *ck, qkv_params *p, qkv_optim *opt,
                        qkv_ckpt_progress *progress)
{
    const char *fn = "qkv_checkpoint_load";
    if (qkv__null(fn, "ck", ck) || qkv__null(fn, "p", p))
        return -1;
    if (!ck->body)
        return qkv_set_error("%s: ck was not made by qkv_checkpoint_open", fn);
    return load(ck, p, opt, progress) < 0 ? qkv__fail_in(fn) : 0;
}

int qkv_checkpoint_precision(const qkv_checkpoint *ck)
{
    if (qkv__null("qkv_checkpoint_precision", "ck", ck) ||
        qkv__null("qkv_checkpoint_precision", "ck->body", ck->body))
        return -1;
    return ck->body->precision;
}
