/* Named parameters in flat buffers (see qkv/params.h). */
#include "qkv/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "kernels/gemm_bf16_held.h"

/* The most values all parameters together may hold: far enough below
 * SIZE_MAX that no size or byte count computed from it can wrap around. */
#define MAX_VALUES (SIZE_MAX / 4 / sizeof(qkv_real))

qkv_params *qkv_params_new(void) { return qkv_calloc(sizeof(qkv_params)); }

void qkv_params_free(qkv_params **pp)
{
    if (!pp || !*pp)
        return;
    qkv_params *p = *pp;
    *pp = NULL; /* a second free of the same pointer finds NULL: harmless */
    for (int i = 0; i < p->count; i++)
        qkv_free(p->items[i].t);
    qkv_free(p->items);
    qkv_free(p->data);
    qkv_free(p->grad);
    qkv_free(p);
}

qkv_param *qkv_params_find(const qkv_params *p, const char *name)
{
    if (qkv__null("qkv_params_find", "p", p) || qkv__null("qkv_params_find", "name", name))
        return NULL;
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return &p->items[i];
    return NULL;
}

int qkv_params_freeze(qkv_params *p, const char *prefix, bool frozen)
{
    if (qkv__null("qkv_params_freeze", "p", p) || qkv__null("qkv_params_freeze", "prefix", prefix))
        return -1;
    int matched = 0;
    for (int i = 0; i < p->count; i++)
        if (strncmp(p->items[i].name, prefix, strlen(prefix)) == 0) {
            p->items[i].t->requires_grad = !frozen;
            matched++;
        }
    if (!matched)
        return qkv_set_error("qkv_params_freeze: no parameter's name starts with prefix '%s'",
                             prefix);
    return matched;
}

qkv_tensor *qkv_params_add(qkv_params *p, const char *name, int ndim, const int *shape,
                           qkv_init init, qkv_real std)
{
    const char *fn = "qkv_params_add";
    if (qkv__null(fn, "p", p) || qkv__null(fn, "name", name) || qkv__null(fn, "shape", shape))
        return NULL;
    if (p->data) {
        qkv_set_error("%s: parameter '%s' declared after qkv_params_alloc", fn, name);
        return NULL;
    }
    if (!name[0]) {
        qkv_set_error("%s: the parameter name is empty", fn);
        return NULL;
    }
    if (strlen(name) >= QKV_PARAM_NAME_MAX) {
        qkv_set_error("%s: parameter name '%s' is longer than %d characters", fn, name,
                      QKV_PARAM_NAME_MAX - 1);
        return NULL;
    }
    if (qkv_params_find(p, name)) {
        qkv_set_error("%s: parameter '%s' declared twice", fn, name);
        return NULL;
    }
    if (ndim < 1 || ndim > QKV_MAX_DIMS) {
        qkv_set_error("%s: parameter '%s' has %d dimensions; 1 to %d allowed", fn, name, ndim,
                      QKV_MAX_DIMS);
        return NULL;
    }
    if (init != QKV_INIT_ZEROS && init != QKV_INIT_ONES && init != QKV_INIT_NORMAL) {
        qkv_set_error("%s: parameter '%s' has init %d; not a qkv_init", fn, name, (int)init);
        return NULL;
    }
    if (init == QKV_INIT_NORMAL && !(std >= 0 && isfinite((double)std))) {
        qkv_set_error("%s: parameter '%s' has std %g; it must be finite and >= 0", fn, name,
                      (double)std);
        return NULL;
    }
    size_t size = 1;
    bool too_large = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1 || shape[i] > (1 << 30)) {
            qkv_set_error("%s: parameter '%s' has extent %d in dimension %d", fn, name, shape[i],
                          i);
            return NULL;
        }
        too_large |= size > MAX_VALUES / (size_t)shape[i];
        size *= (size_t)shape[i];
    }
    if (too_large || p->total + size > MAX_VALUES - 16) {
        qkv_set_error("%s: parameter '%s' would make the parameters too large", fn, name);
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
    if (qkv__null("qkv_params_alloc", "p", p))
        return -1;
    if (p->data)
        return qkv_set_error(
            "qkv_params_alloc: the parameters are already allocated (called twice)");
    if (p->total == 0)
        return qkv_set_error("qkv_params_alloc: no parameters declared");
    for (int i = 0; i < p->count && rng == NULL; i++)
        if (p->items[i].init == QKV_INIT_NORMAL)
            return qkv_set_error("qkv_params_alloc: rng is NULL, and parameter '%s' is drawn "
                                 "from N(0, std^2)",
                                 p->items[i].name);
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
                                                      : (qkv_real)(it->std * qkv__rng_normal(rng));
    }
    qkv__bf16_held_changed(); /* new values, maybe where freed ones were */
    return 0;
}

void qkv_params_zero_grad(qkv_params *p)
{
    if (qkv__null("qkv_params_zero_grad", "p", p))
        return;
    if (!p->grad)
        qkv_set_error("qkv_params_zero_grad: no gradients yet: call qkv_params_alloc first");
    else
        memset(p->grad, 0, p->total * sizeof(qkv_real));
}
