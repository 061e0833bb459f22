/* min_axis (see qkv/ops.h): -max_axis(-x), negation being exact, so it is
 * qkv_max_axis's node (its first-largest rule becomes first-smallest) rather
 * than a second copy of its loops. */
#include "axis.h"
#include "graph.h"

qkv_tensor *qkv_min_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim)
{
    const char *fn = "qkv_min_axis";
    if (qkv__check_inputs(fn, a, "x", 1, &x) < 0 || qkv__axis(fn, "axis", x, axis) < 0)
        return NULL;
    qkv_tensor *m = qkv_max_axis(a, qkv_scale(a, x, -1), axis, keepdim);
    return qkv__result(fn, qkv_scale(a, m, -1));
}
