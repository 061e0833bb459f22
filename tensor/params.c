/* Named parameters in flat buffers (see qkv/params.h). */
#include "qkv/params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most values all parameters together may hold: far enough below
 * SIZE_MAX that no size or byte count computed from it can wrap around. */
#define MAX_VALUES (SIZE_MAX / 4 / sizeof(qkv_real))

qkv_params *qkv_params_new(void) { return qkv_calloc(sizeof(qkv_params)); }

void qkv_params_free(qkv_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->count; i++)
        qkv_free(p->items[i].t);
    qkv_free(p->items);
    qkv_free(p->data);
    qkv_free(p->grad);
    qkv_free(p);
}

qkv_param *qkv_params_find(const qkv_params *p, const char *name)
{
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return &p->items[i];
    return NULL;
}

qkv_tensor *qkv_params_add(qkv_params *p, const char *name, int ndim, const int *shape,
                           qkv_init init, qkv_real std)
{
    if (p->data) {
        qkv_set_error("parameter '%s' declared after qkv_params_alloc", name);
        return NULL;
    }
    if (strlen(name) >= QKV_PARAM_NAME_MAX) {
        qkv_set_error("parameter name '%s' is longer than %d characters", name,
                      QKV_PARAM_NAME_MAX - 1);
        return NULL;
    }
    if (qkv_params_find(p, name)) {
        qkv_set_error("parameter '%s' declared twice", name);
        return NULL;
    }
    if (ndim < 1 || ndim > QKV_MAX_DIMS) {
        qkv_set_error("parameter '%s' has %d dimensions; 1 to %d allowed", name, ndim, QKV_MAX_DIMS);
        return NULL;
    }
    size_t size = 1;
    bool too_large = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1 || shape[i] > (1 << 30)) {
            qkv_set_error("parameter '%s' has extent %d in dimension %d", name, shape[i], i);
            return NULL;
        }
        too_large |= size > MAX_VALUES / (size_t)shape[i];
        size *= (size_t)shape[i];
    }
    if (too_large || p->total + size > MAX_VALUES - 16) {
        qkv_set_error("parameter '%s' would make the parameters too large", name);
        return NULL;
    }
    if (p->count == p->cap) {
        int cap = p->cap ? 2 * p->cap : 32;
        qkv_param *items = qkv_alloc((size_t)cap * sizeof *items);
        if (!items)
            return NULL;
        if (p->count)
            memcpy(items, p->items, (size_t)p->count * sizeof *items);
        qkv_free(p->items);
        p->items = items;
        p->cap = cap;
    }
    qkv_tensor *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    qkv_param *it = &p->items[p->count++];
    snprintf(it->name, sizeof it->name, "%s", name);
    it->t = t;
    it->offset = p->total;
    it->init = init;
    it->std = std;
    t->ndim = ndim;
    memcpy(t->shape, shape, (size_t)ndim * sizeof(int));
    t->size = size;
    t->requires_grad = true;
    t->name = it->name;
    /* Start each parameter on a cache line so kernels see aligned rows. */
    p->total += (size + 15) & ~(size_t)15;
    return t;
}

int qkv_params_alloc(qkv_params *p, qkv_rng *rng)
{
    if (p->data)
        return qkv_set_error("qkv_params_alloc called twice");
    if (p->total == 0)
        return qkv_set_error("no parameters declared");
    p->data = qkv_calloc(p->total * sizeof(qkv_real));
    p->grad = qkv_calloc(p->total * sizeof(qkv_real));
    if (!p->data || !p->grad) { /* leave p as before, so alloc can be retried */
        qkv_free(p->data);
        qkv_free(p->grad);
        p->data = p->grad = NULL;
        return -1;
    }
    for (int i = 0; i < p->count; i++) {
        qkv_param *it = &p->items[i];
        qkv_tensor *t = it->t;
        t->data = p->data + it->offset;
        t->grad = p->grad + it->offset;
        for (size_t j = 0; j < t->size; j++)
            t->data[j] = it->init == QKV_INIT_ONES    ? 1
                         : it->init == QKV_INIT_ZEROS ? 0
                                                      : (qkv_real)(it->std * qkv_rng_normal(rng));
    }
    return 0;
}

void qkv_params_zero_grad(qkv_params *p)
{
    if (p->grad)
        memset(p->grad, 0, p->total * sizeof(qkv_real));
}
