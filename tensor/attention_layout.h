/* Internal: where the fast attention core (op_attention.c) finds its
 * matrices, and how it splits the work: the layouts of the attention
 * problems, the causal block skipping, the per-head gemms and the OpenMP
 * policy. The formula itself, as plain loops, is attention_plain.c. Not
 * installed. */
#ifndef QKV_ATTENTION_LAYOUT_H
#define QKV_ATTENTION_LAYOUT_H

#include <omp.h>
#include <tgmath.h>

#include "graph.h"
#include "kernels/gemm.h"
#include "softmax_kernel.h"

/* Where the matrices of the attention problems sit: problem (b, h), batch
 * entry b and head h, has its first row at b·batch + h·head, rows ld apart. */
typedef struct layout {
    size_t batch, head; /* strides between batch entries and between heads */
    int ld;             /* row pitch */
} layout;

/* The sizes of one attention call and the layouts of its operands. */
typedef struct problem {
    int nb, nh;        /* batch entries and heads: nb·nh independent attentions */
    int tq, tk, d;     /* queries, keys, size of a query/key/value vector */
    bool causal;       /* query i sees only keys j <= i + (tk - tq) */
    layout lq, lkv, lp; /* of q and the output; of k and v; of the weights p */
} problem;

/* What backward needs. */
typedef struct attn_ctx {
    problem pr;
    const qkv_real *p;      /* (nb, nh, tq, tk) attention weights, the softmax output */
    const qkv_real *p_used; /* the weights that multiplied V: p after dropout, or p itself */
    const uint8_t *keep;    /* (nb, nh, tq, tk) 1 where dropout kept a weight; NULL without dropout */
    qkv_real keep_scale;    /* 1/(1 - dropout): the factor on kept weights */
} attn_ctx;

/* The scores' factor, 1/√d (why √d: attention_plain.c, step 1). */
static inline qkv_real score_scale(int d) { return 1 / sqrt((qkv_real)d); }

/* For each problem: C = alpha · op(A) · op(B) + beta · C, where op(A) is m×k
 * and op(B) is k×n, each operand where its layout puts it. */
static inline void per_head_gemm(const problem *pr, bool ta, bool tb, int m, int n, int k,
                                 qkv_real alpha, const qkv_real *A, layout la, const qkv_real *B,
                                 layout lb, qkv_real beta, qkv_real *C, layout lc)
{
    qkv__gemm_heads(pr->nb, pr->nh, ta, tb, m, n, k, alpha, A, la.ld, la.batch, la.head, B, lb.ld,
                    lb.batch, lb.head, beta, C, lc.ld, lc.batch, lc.head);
}

/* Under a causal mask the queries are taken QUERY_BLOCK rows at a time, and
 * each block's products stop at the last key its last query may see: the
 * masked upper triangle of the scores is never computed (about half of it
 * for long sequences), and its weights are exactly 0 all the same. */
enum { QUERY_BLOCK = 32 };

static inline int block_rows(const problem *pr) { return pr->causal ? QUERY_BLOCK : pr->tq; }

/* The end of the block of queries that starts at (or holds) row i. */
static inline int block_end(const problem *pr, int i)
{
    int end = (i / block_rows(pr) + 1) * block_rows(pr);
    return end < pr->tq ? end : pr->tq;
}

/* How many leading keys the queries before row i1 (>= 1) may see: as many as the last one. */
static inline int keys_seen(const problem *pr, int i1)
{
    return qkv__visible_keys(pr->causal, i1 - 1, pr->tq, pr->tk);
}

/* S = alpha · X·Yᵀ, (queries × keys) like the weights: the scores Q·Kᵀ/√d,
 * or dP = dO·Vᵀ. X is laid out like q, Y like k. */
static inline void queries_by_keys(const problem *pr, qkv_real alpha, const qkv_real *X,
                                   const qkv_real *Y, qkv_real *S)
{
    for (int i0 = 0; i0 < pr->tq; i0 += block_rows(pr)) {
        int m = block_end(pr, i0) - i0;
        per_head_gemm(pr, false, true, m, keys_seen(pr, i0 + m), pr->d, alpha,
                      X + (size_t)i0 * pr->lq.ld, pr->lq, Y, pr->lkv, 0, S + (size_t)i0 * pr->tk,
                      pr->lp);
    }
}

/* Z = alpha · W·Y + beta · Z, (queries × d) laid out like q, from W like the
 * weights and Y like v: the output P·V, or dQ += dS·K/√d. */
static inline void queries_by_d(const problem *pr, qkv_real alpha, const qkv_real *W,
                                const qkv_real *Y, qkv_real beta, qkv_real *Z)
{
    for (int i0 = 0; i0 < pr->tq; i0 += block_rows(pr)) {
        int m = block_end(pr, i0) - i0;
        per_head_gemm(pr, false, false, m, pr->d, keys_seen(pr, i0 + m), alpha,
                      W + (size_t)i0 * pr->tk, pr->lp, Y, pr->lkv, beta,
                      Z + (size_t)i0 * pr->lq.ld, pr->lq);
    }
}

/* Z += alpha · Wᵀ·X, (keys × d) laid out like k, from W like the weights
 * and X like q: dV += Pᵀ·dO, or dK += dSᵀ·Q/√d. */
static inline void keys_by_d(const problem *pr, qkv_real alpha, const qkv_real *W,
                             const qkv_real *X, qkv_real *Z)
{
    for (int i0 = 0; i0 < pr->tq; i0 += block_rows(pr)) {
        int m = block_end(pr, i0) - i0;
        per_head_gemm(pr, true, false, keys_seen(pr, i0 + m), pr->d, m, alpha,
                      W + (size_t)i0 * pr->tk, pr->lp, X + (size_t)i0 * pr->lq.ld, pr->lq, 1, Z,
                      pr->lkv);
    }
}

/* Row r of softmax_backward_rows. */
static inline void softmax_backward_row(const problem *pr, qkv_real *ds, const qkv_real *p,
                                        size_t r)
{
    int tk = pr->tk, i = (int)(r % (size_t)pr->tq);
    qkv__softmax_backward_row(ds + r * tk, ds + r * tk, p + r * tk, 1, false,
                              keys_seen(pr, block_end(pr, i)));
}

/* dS = P ⊙ (dP − Σ P·dP) over each query's row (ds holds dP and receives
 * dS), as far as the row's block of queries computed: the products read no
 * further, so the skipped triangle of ds is never touched. */
static inline void softmax_backward_rows(const problem *pr, qkv_real *ds, const qkv_real *p)
{
    int tq = pr->tq, tk = pr->tk;
    size_t rows = (size_t)pr->nb * pr->nh * tq;
    /* Inside a parallel region (an attention problem per thread) this thread does every row. */
    if (rows * (size_t)tk < QKV__PAR_MIN || omp_in_parallel()) {
        for (size_t r = 0; r < rows; r++)
            softmax_backward_row(pr, ds, p, r);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t r = 0; r < rows; r++)
        softmax_backward_row(pr, ds, p, r);
}

/* Where problem e = (b, h) of pr starts in each layout. */
typedef struct offsets {
    size_t q, kv, p; /* in tensors laid out like q (and the output), like k and v, like p */
} offsets;

static inline offsets offsets_of(const problem *pr, int e)
{
    size_t b = (size_t)(e / pr->nh), h = (size_t)(e % pr->nh);
    return (offsets){b * pr->lq.batch + h * pr->lq.head, b * pr->lkv.batch + h * pr->lkv.head,
                     b * pr->lp.batch + h * pr->lp.head};
}

/* pr cut down to one of its problems (the layouts' strides stay). */
static inline problem one_problem(const problem *pr)
{
    problem one = *pr;
    one.nb = one.nh = 1;
    return one;
}

/* Whether the problems are shared out among the threads, each thread taking
 * whole problems through every step while their scores stay in its cache
 * (one parallel region per attention call), rather than every step being a
 * parallel gemm or loop over all problems. Each value is computed the same
 * way in both, so the choice never changes a bit. */
static inline bool per_problem(const problem *pr)
{
    int products = pr->nb * pr->nh, threads = omp_get_max_threads();
    return threads > 1 && products >= 2 * threads && !omp_in_parallel() &&
           (size_t)products * pr->tq * pr->tk >= QKV__PAR_MIN;
}

#endif
