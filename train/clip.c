/* Global-norm gradient clipping (see qkv/optim.h). */
#include "qkv/optim.h"

#include "tensor/check.h"

#include <math.h>

#include "train/internal.h"

/* The sum of squares is split into this many fixed chunks, each summed in
 * order, then the chunk sums in order: the result depends only on the data,
 * never on how many threads shared the chunks. */
#define CLIP_CHUNKS 64

/* Chunks summed side by side: each is still one chain of additions in
 * order, but LANES independent chains keep the adder busy, where one chain
 * waits for every addition before the next. */
#define LANES 8

/* partial[c] = Σ g² over chunk c, in order, for the LANES chunks from c0. */
static void chunk_sums(const qkv_real *g, size_t n, int c0, double partial[CLIP_CHUNKS])
{
    size_t lo[LANES], len[LANES], longest = 0;
    double s[LANES];
    for (int l = 0; l < LANES; l++) {
        size_t c = (size_t)(c0 + l);
        lo[l] = n * c / CLIP_CHUNKS;
        len[l] = n * (c + 1) / CLIP_CHUNKS - lo[l];
        longest = len[l] > longest ? len[l] : longest;
        s[l] = 0;
    }
    size_t shortest = longest;
    for (int l = 0; l < LANES; l++)
        shortest = len[l] < shortest ? len[l] : shortest;
    for (size_t i = 0; i < shortest; i++)
        for (int l = 0; l < LANES; l++)
            s[l] += (double)g[lo[l] + i] * (double)g[lo[l] + i];
    for (int l = 0; l < LANES; l++) { /* chunk lengths differ by at most one value */
        for (size_t i = shortest; i < len[l]; i++)
            s[l] += (double)g[lo[l] + i] * (double)g[lo[l] + i];
        partial[c0 + l] = s[l];
    }
}

double qkv__grad_norm(const qkv_params *p)
{
    double partial[CLIP_CHUNKS];
#pragma omp parallel for schedule(static)
    for (int c = 0; c < CLIP_CHUNKS; c += LANES)
        chunk_sums(p->grad, p->total, c, partial);
    double sum = 0;
    for (int c = 0; c < CLIP_CHUNKS; c++)
        sum += partial[c];
    return sqrt(sum);
}

qkv_real qkv__clip_coef(double norm, double max_norm)
{
    /* PyTorch's coefficient: the 1e-6 keeps a zero norm from dividing by 0. */
    double coef = max_norm / (norm + 1e-6);
    return isfinite(norm) && coef < 1 ? (qkv_real)coef : 1;
}

double qkv_clip_grad_norm(qkv_params *p, double max_norm)
{
    if (qkv__null("qkv_clip_grad_norm", "p", p))
        return -1;
    if (!(max_norm >= 0))
        return qkv_set_error("qkv_clip_grad_norm: max_norm %g must be >= 0", max_norm);
    if (!p->grad)
        return qkv_set_error(
            "qkv_clip_grad_norm: the parameters have no gradients (not allocated)");
    double norm = qkv__grad_norm(p);
    qkv_real k = qkv__clip_coef(norm, max_norm);
    if (k != 1) {
        size_t n = p->total;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            p->grad[i] *= k;
    }
    return norm;
}
