/* A model summary: its parameters, their shapes and counts (see qkv/params.h). */
#include "qkv/params.h"

#include <string.h>

#include "check.h"

int qkv_params_print(const qkv_params *p, FILE *f)
{
    const char *fn = "qkv_params_print";
    if (qkv__null(fn, "p", p) || qkv__null(fn, "f", f))
        return -1;
    size_t width = strlen("parameter"), trainable = 0, frozen = 0;
    for (int i = 0; i < p->count; i++) {
        size_t n = strlen(p->items[i].name);
        width = n > width ? n : width;
    }
    fprintf(f, "%-*s  %-16s %12s\n", (int)width, "parameter", "shape", "values");
    for (int i = 0; i < p->count; i++) {
        const qkv_param *it = &p->items[i];
        char shape[64];
        bool on = it->t->requires_grad;
        fprintf(f, "%-*s  %-16s %12zu%s\n", (int)width, it->name,
                qkv_shape_str(it->t, shape, sizeof shape), it->t->size, on ? "" : "  frozen");
        *(on ? &trainable : &frozen) += it->t->size;
    }
    fprintf(f, "%d parameters, %zu values: %zu trainable, %zu frozen\n", p->count,
            trainable + frozen, trainable, frozen);
    if (ferror(f))
        return qkv_set_error("%s: writing the summary failed", fn);
    return 0;
}
