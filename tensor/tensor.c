/* Tensor creation and shape helpers (see qkv/tensor.h). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "graph.h"

static int check_shape(const char *fn, int ndim, const int *shape, size_t *size)
{
    if (ndim < 1 || ndim > QKV_MAX_DIMS)
        return qkv_set_error("%s: a tensor has 1 to %d dimensions, not %d", fn, QKV_MAX_DIMS, ndim);
    if (qkv__null(fn, "shape", shape))
        return -1;
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return qkv_set_error("%s: dimension %d of a tensor shape is %d; extents must be >= 1",
                                 fn, i, shape[i]);
        if (n > SIZE_MAX / sizeof(qkv_real) / (size_t)shape[i])
            return qkv_set_error("%s: tensor shape is too large", fn);
        n *= (size_t)shape[i];
    }
    *size = n;
    return 0;
}

/* qkv_tensor_new, with fn naming the public function in a message. */
static qkv_tensor *tensor_new(const char *fn, qkv_arena *a, int ndim, const int *shape)
{
    size_t size = 0;
    if (qkv__null(fn, "arena", a) || check_shape(fn, ndim, shape, &size) < 0)
        return NULL;
    qkv_tensor *t = qkv_arena_calloc(a, sizeof *t);
    if (!t)
        return NULL;
    t->data = qkv_arena_alloc(a, size * sizeof(qkv_real));
    if (!t->data)
        return NULL;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof(int));
    t->size = size;
    t->arena = a;
    t->generation = qkv__arena_generation(a);
    return t;
}

qkv_tensor *qkv_tensor_new(qkv_arena *a, int ndim, const int *shape)
{
    return tensor_new("qkv_tensor_new", a, ndim, shape);
}

qkv_tensor *qkv_zeros(qkv_arena *a, int ndim, const int *shape)
{
    qkv_tensor *t = tensor_new("qkv_zeros", a, ndim, shape);
    if (t)
        memset(t->data, 0, t->size * sizeof(qkv_real));
    return t;
}

qkv_tensor *qkv_ones(qkv_arena *a, int ndim, const int *shape)
{
    qkv_tensor *t = tensor_new("qkv_ones", a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = 1;
    return t;
}

qkv_tensor *qkv_from_array(qkv_arena *a, int ndim, const int *shape, const qkv_real *values)
{
    if (qkv__null("qkv_from_array", "values", values))
        return NULL;
    qkv_tensor *t = tensor_new("qkv_from_array", a, ndim, shape);
    if (t)
        memcpy(t->data, values, t->size * sizeof(qkv_real));
    return t;
}

qkv_tensor *qkv_randn(qkv_arena *a, int ndim, const int *shape, qkv_real std, qkv_rng *rng)
{
    if (qkv__null("qkv_randn", "rng", rng) || qkv__not_finite("qkv_randn", "std", (double)std))
        return NULL;
    qkv_tensor *t = tensor_new("qkv_randn", a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = (qkv_real)(std * qkv__rng_normal(rng));
    return t;
}

qkv_tensor *qkv_rand_uniform(qkv_arena *a, int ndim, const int *shape, qkv_real lo, qkv_real hi,
                             qkv_rng *rng)
{
    const char *fn = "qkv_rand_uniform";
    if (qkv__null(fn, "rng", rng) || qkv__not_finite(fn, "lo", (double)lo) ||
        qkv__not_finite(fn, "hi", (double)hi))
        return NULL;
    qkv_tensor *t = tensor_new(fn, a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = (qkv_real)(lo + (hi - lo) * qkv__rng_uniform(rng));
    return t;
}

void qkv_set_requires_grad(qkv_tensor *t, bool on)
{
    if (!qkv__null("qkv_set_requires_grad", "t", t))
        t->requires_grad = on;
}

bool qkv_same_shape(const qkv_tensor *a, const qkv_tensor *b)
{
    if (qkv__null("qkv_same_shape", "a", a) || qkv__null("qkv_same_shape", "b", b))
        return false;
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

char *qkv_shape_str(const qkv_tensor *t, char *buf, size_t len)
{
    if (qkv__null("qkv_shape_str", "buf", buf))
        return NULL;
    if (len == 0) {
        qkv_set_error("qkv_shape_str: len is 0; buf needs room for the text");
        return NULL;
    }
    if (qkv__null("qkv_shape_str", "t", t)) {
        snprintf(buf, len, "(NULL)");
        return buf;
    }
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < t->ndim && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ",%d" : "%d", t->shape[i]);
    if (n < len)
        snprintf(buf + n, len - n, ")");
    return buf;
}

/* Whether t comes from an arena that has been reset since t was made. One
 * load and compare per input of an op: cheap enough for every call. */
static inline bool stale(const qkv_tensor *t)
{
    return t->arena && t->generation != qkv__arena_generation(t->arena);
}

int qkv__check_input(const char *fn, const char *arg, const qkv_tensor *t)
{
    if (!t)
        return qkv__null_input(fn, arg);
    if (stale(t))
        return qkv_set_error("%s: input %s is from before its arena's reset (made after %llu "
                             "resets, the arena has had %llu): a tensor lives until the next "
                             "qkv_arena_reset of its arena",
                             fn, arg, (unsigned long long)t->generation,
                             (unsigned long long)qkv__arena_generation(t->arena));
    if (!t->data)
        return qkv_set_error("%s: input %s%s%s has no values yet: declare its parameters, then "
                             "call qkv_params_alloc before using them",
                             fn, arg, t->name ? " " : "", t->name ? t->name : "");
    return 0;
}

qkv_tensor *qkv__result(const char *fn, qkv_tensor *y)
{
    if (!y)
        qkv__fail_in(fn);
    return y;
}

int qkv__check_inputs(const char *fn, const qkv_arena *a, const char *names, int n,
                      qkv_tensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (!ts[i] || !ts[i]->data || stale(ts[i])) {
            /* the i-th space-separated name, found only on failure */
            const char *p = names;
            for (int j = 0; j < i && (p = strchr(p, ' ')); j++)
                p++;
            char arg[32] = "?";
            if (p)
                snprintf(arg, sizeof arg, "%.*s", (int)strcspn(p, " "), p);
            return qkv__check_input(fn, arg, ts[i]);
        }
    return qkv__null(fn, "arena", a) ? -1 : 0;
}

qkv_tensor *qkv__like(qkv_arena *a, const qkv_tensor *t) { return qkv_tensor_new(a, t->ndim, t->shape); }

qkv_tensor *qkv__shape_error(const char *op, const char *what, const qkv_tensor *a,
                             const qkv_tensor *b)
{
    char sa[64], sb[64];
    qkv_set_error("%s: %s: shapes %s and %s", op, what, qkv_shape_str(a, sa, sizeof sa),
                  qkv_shape_str(b, sb, sizeof sb));
    return NULL;
}
