/* Axis arguments and the (outer, n, inner) view (see axis.h). */
#include "axis.h"

#include <string.h>

int qkv__axis(const char *fn, const char *arg, const qkv_tensor *x, int axis)
{
    if (axis >= -x->ndim && axis < x->ndim)
        return axis < 0 ? axis + x->ndim : axis;
    char s[64];
    return qkv_set_error("%s: %s %d is out of range for shape %s: 0..%d, or -%d..-1 from the end",
                         fn, arg, axis, qkv_shape_str(x, s, sizeof s), x->ndim - 1, x->ndim);
}

qkv__axis_view qkv__axis_view_of(const qkv_tensor *x, int axis)
{
    qkv__axis_view v = {1, (size_t)x->shape[axis], 1};
    for (int d = 0; d < axis; d++)
        v.outer *= (size_t)x->shape[d];
    for (int d = axis + 1; d < x->ndim; d++)
        v.inner *= (size_t)x->shape[d];
    return v;
}

int qkv__reduced_shape(const qkv_tensor *x, int axis, bool keepdim, int *shape)
{
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    if (keepdim) {
        shape[axis] = 1;
        return x->ndim;
    }
    if (x->ndim == 1) {
        shape[0] = 1;
        return 1;
    }
    memmove(shape + axis, shape + axis + 1, (size_t)(x->ndim - 1 - axis) * sizeof *shape);
    return x->ndim - 1;
}
