/* Global-norm gradient clipping (see qkv/optim.h). */
#include "qkv/optim.h"

#include "../tensor/check.h"

#include <math.h>

/* The sum of squares is split into this many fixed chunks, each summed in
 * order, then the chunk sums in order: the result depends only on the data,
 * never on how many threads shared the chunks. */
#define CLIP_CHUNKS 64

double qkv_clip_grad_norm(qkv_params *p, double max_norm)
{
    if (qkv__null("qkv_clip_grad_norm", "p", p))
        return -1;
    if (!(max_norm >= 0))
        return qkv_set_error("qkv_clip_grad_norm: max_norm %g must be >= 0", max_norm);
    if (!p->grad)
        return qkv_set_error(
            "qkv_clip_grad_norm: the parameters have no gradients (not allocated)");
    const qkv_real *g = p->grad;
    size_t n = p->total;
    double partial[CLIP_CHUNKS];
#pragma omp parallel for schedule(static)
    for (int c = 0; c < CLIP_CHUNKS; c++) {
        size_t lo = n * (size_t)c / CLIP_CHUNKS, hi = n * (size_t)(c + 1) / CLIP_CHUNKS;
        double s = 0;
        for (size_t i = lo; i < hi; i++)
            s += (double)g[i] * (double)g[i];
        partial[c] = s;
    }
    double sum = 0;
    for (int c = 0; c < CLIP_CHUNKS; c++)
        sum += partial[c];
    double norm = sqrt(sum);
    /* PyTorch's coefficient: the 1e-6 keeps a zero norm from dividing by 0. */
    double coef = max_norm / (norm + 1e-6);
    if (isfinite(norm) && coef < 1) {
        qkv_real k = (qkv_real)coef;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            p->grad[i] *= k;
    }
    return norm;
}
