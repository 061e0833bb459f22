/* Tensor creation and shape helpers (see qkv/tensor.h). */
#include <stdio.h>
#include <string.h>

#include "graph.h"

static int check_shape(int ndim, const int *shape, size_t *size)
{
    if (ndim < 1 || ndim > QKV_MAX_DIMS)
        return qkv_set_error("a tensor has 1 to %d dimensions, not %d", QKV_MAX_DIMS, ndim);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1)
            return qkv_set_error("dimension %d of a tensor shape is %d; extents must be >= 1", i,
                                 shape[i]);
        if (n > SIZE_MAX / sizeof(qkv_real) / (size_t)shape[i])
            return qkv_set_error("tensor shape is too large");
        n *= (size_t)shape[i];
    }
    *size = n;
    return 0;
}

qkv_tensor *qkv_tensor_new(qkv_arena *a, int ndim, const int *shape)
{
    size_t size = 0;
    if (check_shape(ndim, shape, &size) < 0)
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
    return t;
}

qkv_tensor *qkv_zeros(qkv_arena *a, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_tensor_new(a, ndim, shape);
    if (t)
        memset(t->data, 0, t->size * sizeof(qkv_real));
    return t;
}

qkv_tensor *qkv_ones(qkv_arena *a, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_tensor_new(a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = 1;
    return t;
}

qkv_tensor *qkv_from_array(qkv_arena *a, int ndim, const int *shape, const qkv_real *values)
{
    qkv_tensor *t = qkv_tensor_new(a, ndim, shape);
    if (t)
        memcpy(t->data, values, t->size * sizeof(qkv_real));
    return t;
}

qkv_tensor *qkv_randn(qkv_arena *a, int ndim, const int *shape, qkv_real std, qkv_rng *rng)
{
    qkv_tensor *t = qkv_tensor_new(a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = (qkv_real)(std * qkv_rng_normal(rng));
    return t;
}

qkv_tensor *qkv_rand_uniform(qkv_arena *a, int ndim, const int *shape, qkv_real lo, qkv_real hi,
                             qkv_rng *rng)
{
    qkv_tensor *t = qkv_tensor_new(a, ndim, shape);
    if (t)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = (qkv_real)(lo + (hi - lo) * qkv_rng_uniform(rng));
    return t;
}

void qkv_set_requires_grad(qkv_tensor *t, bool on) { t->requires_grad = on; }

bool qkv_same_shape(const qkv_tensor *a, const qkv_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

char *qkv_shape_str(const qkv_tensor *t, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < t->ndim && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ",%d" : "%d", t->shape[i]);
    if (n < len)
        snprintf(buf + n, len - n, ")");
    return buf;
}

bool qkv__any_null(int n, qkv_tensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (!ts[i])
            return true;
    return false;
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
