/* Drawing one token from logits: temperature, top-k, top-p (see qkv/generate.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/check.h"
#include "decode/decode.h"

int qkv__check_sample_opts(const char *fn, const qkv_sample_opts *o)
{
    if (qkv__null(fn, "opts", o))
        return -1;
    if (!(o->temperature >= 0) || !isfinite(o->temperature))
        return qkv_set_error("%s: temperature %g must be >= 0", fn, o->temperature);
    if (o->top_k < 0)
        return qkv_set_error("%s: top_k %d must be >= 0", fn, o->top_k);
    if (!(o->top_p >= 0 && o->top_p <= 1))
        return qkv_set_error("%s: top_p %g must be in [0, 1] (0 = 1 = keep all)", fn, o->top_p);
    return 0;
}

int qkv_sample_opts_check(const qkv_sample_opts *o)
{
    return qkv__check_sample_opts("qkv_sample_opts_check", o);
}

static int descending(const void *x, const void *y)
{
    qkv_real a = *(const qkv_real *)x, b = *(const qkv_real *)y;
    return (a < b) - (a > b);
}

/* tmp = v[0..n) sorted from largest to smallest. */
static void sorted_descending(qkv_real *tmp, const qkv_real *v, int n)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, descending);
}

int32_t qkv__argmax(const qkv_real *x, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

int32_t qkv_sample_token(const qkv_real *logits, int V, const qkv_sample_opts *o, qkv_rng *rng,
                         qkv_real *scratch)
{
    const char *fn = "qkv_sample_token";
    if (qkv__null(fn, "logits", logits) || qkv__check_sample_opts(fn, o) < 0 ||
        qkv__null(fn, "scratch", scratch) || (o->temperature > 0 && qkv__null(fn, "rng", rng)))
        return -1;
    if (V < 1)
        return qkv_set_error("%s: V %d must be >= 1", fn, V);
    qkv_real *p = scratch, *tmp = scratch + V;
    int32_t best = qkv__argmax(logits, V);
    if (o->temperature == 0)
        return best;
    double top_p = o->top_p == 0 ? 1 : o->top_p;
    /* top-k: only logits at or above the k-th largest survive (ties may keep a few more). */
    qkv_real floor = -INFINITY;
    if (o->top_k > 0 && o->top_k < V) {
        sorted_descending(tmp, logits, V);
        floor = tmp[o->top_k - 1];
    }
    double sum = 0;
    for (int i = 0; i < V; i++) {
        p[i] = logits[i] >= floor ? (qkv_real)exp((logits[i] - logits[best]) / o->temperature) : 0;
        sum += p[i];
    }
    if (!(sum > 0 && isfinite(sum))) /* NaN or inf logits: no distribution to draw from */
        return qkv_set_error("%s: the logits are not finite numbers (NaN or inf)", fn);
    for (int i = 0; i < V; i++)
        p[i] = (qkv_real)(p[i] / sum);
    sum = 1;
    /* top-p: keep the most likely tokens until their mass reaches top_p. */
    if (top_p < 1) {
        sorted_descending(tmp, p, V);
        double mass = 0;
        qkv_real cut = tmp[0];
        for (int i = 0; i < V && mass < top_p; i++) {
            mass += tmp[i];
            cut = tmp[i];
        }
        sum = 0;
        for (int i = 0; i < V; i++) {
            if (p[i] < cut)
                p[i] = 0;
            sum += p[i];
        }
    }
    /* One uniform draw, walked through the cumulative distribution in id order. */
    double u = qkv_rng_uniform(rng) * sum, c = 0;
    int last = best;
    for (int i = 0; i < V; i++) {
        if (p[i] == 0)
            continue;
        c += p[i];
        last = i;
        if (u < c)
            return i;
    }
    return last; /* u landed in the rounding gap at the very top */
}
