/* Looking at a tensor: one line of its values and statistics, and one value
 * by index (see qkv/tensor.h). */
#include <math.h>

#include "check.h"

enum { SHOWN = 8 }; /* values printed: all of a tensor this small, else the first and last 3 */

int qkv_tensor_print(const qkv_tensor *t, const char *name, FILE *f)
{
    const char *fn = "qkv_tensor_print";
    if (qkv__check_input(fn, "t", t) < 0 || qkv__null(fn, "f", f))
        return -1;
    char shape[64];
    fprintf(f, "%s %s: [", name ? name : t->name ? t->name : "tensor",
            qkv_shape_str(t, shape, sizeof shape));
    for (size_t i = 0; i < t->size; i++) {
        if (t->size > SHOWN && i == 3) {
            fprintf(f, ", ...");
            i = t->size - 4;
            continue;
        }
        fprintf(f, "%s%.6g", i ? ", " : "", (double)t->data[i]);
    }
    /* The statistics of the finite values, in double; NaN and inf counted apart. */
    double lo = INFINITY, hi = -INFINITY, s = 0, ss = 0;
    size_t n = 0, nan = 0, inf = 0;
    for (size_t i = 0; i < t->size; i++) {
        double v = (double)t->data[i];
        if (isnan(v) || isinf(v)) {
            *(isnan(v) ? &nan : &inf) += 1;
            continue;
        }
        lo = fmin(lo, v), hi = fmax(hi, v), s += v, n++;
    }
    double mean = n ? s / (double)n : NAN;
    for (size_t i = 0; i < t->size; i++)
        if (isfinite((double)t->data[i]))
            ss += ((double)t->data[i] - mean) * ((double)t->data[i] - mean);
    fprintf(f, "]");
    if (n)
        fprintf(f, " min %.6g max %.6g mean %.6g std %.6g", lo, hi, mean, sqrt(ss / (double)n));
    if (nan || inf)
        fprintf(f, " (%zu NaN, %zu inf)", nan, inf);
    fprintf(f, "\n");
    if (ferror(f))
        return qkv_set_error("%s: writing to f failed", fn);
    return 0;
}

int qkv_tensor_get(const qkv_tensor *t, int ndim, const int *index, qkv_real *value)
{
    const char *fn = "qkv_tensor_get";
    if (qkv__check_input(fn, "t", t) < 0 || qkv__null(fn, "index", index) ||
        qkv__null(fn, "value", value))
        return -1;
    char shape[64];
    if (ndim != t->ndim)
        return qkv_set_error("%s: ndim %d: t of shape %s takes %d indices", fn, ndim,
                             qkv_shape_str(t, shape, sizeof shape), t->ndim);
    size_t at = 0;
    for (int d = 0; d < ndim; d++) {
        int e = t->shape[d], i = index[d];
        if (i < -e || i >= e)
            return qkv_set_error("%s: index[%d] = %d is out of range for dim %d of shape %s: "
                                 "0..%d, or -%d..-1 from the end",
                                 fn, d, i, d, qkv_shape_str(t, shape, sizeof shape), e - 1, e);
        at = at * (size_t)e + (size_t)(i < 0 ? i + e : i);
    }
    *value = t->data[at];
    return 0;
}
