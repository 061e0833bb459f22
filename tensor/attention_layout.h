/* Internal: where the fast attention core (op_attention.c) finds its
 * matrices and how it cuts the work: the layouts of the attention problems,
 * the tiles of queries and keys, the causal skipping and the OpenMP policy,
 * shared by the forward (attention_forward.c) and the backward
 * (attention_backward.c). The formula itself, as plain loops, is
 * attention_plain.c. Not installed. */
#ifndef QKV_ATTENTION_LAYOUT_H
#define QKV_ATTENTION_LAYOUT_H

#include <omp.h>
#include <tgmath.h>

#include "attention_rows.h"
#include "graph.h"
#include "kernels/gemm.h"
#include "softmax_kernel.h"

/* Where the matrices of the attention problems sit: problem (b, h), batch
 * entry b and head h, has its first row at b·batch + h·head, rows ld apart. */
typedef struct layout {
    size_t batch, head; /* strides between batch entries and between heads */
    int ld;             /* row pitch */
} layout;

/* The sizes of one attention call, its mask and the layouts of its operands. */
typedef struct problem {
    int nb, nh;                /* batch entries and heads: nb·nh independent attentions */
    int tq, tk, d;             /* queries, keys, size of a query/key/value vector */
    bool causal;               /* query i sees only keys j <= i + (tk - tq) */
    const uint8_t *key_valid;  /* (B, tk) padding mask, or NULL */
    int per_entry;             /* problems per batch entry (which key_valid row is theirs) */
    layout lq, lkv, lp;        /* of q and the output; of k and v; of the weights */
} problem;

/* What backward needs beside the node's inputs and output. */
typedef struct attn_ctx {
    problem pr;
    const qkv_real *lse; /* (nb·nh·tq) each query's log-sum-exp of its visible scores; +inf: none */
    qkv__attn_drop drop; /* the dropout of the weights, or off */
    int workers;         /* threads the backward's scratch has room for */
} attn_ctx;

/* The scores' factor, 1/√d (why √d: attention_plain.c, step 1). */
static inline qkv_real score_scale(int d) { return 1 / sqrt((qkv_real)d); }

/* The tiles. The forward takes QUERY_TILE queries at a time through all
 * their keys, KEY_TILE keys at a time. On this machine's cores (Zen 4:
 * 32 KB L1d, 1 MB L2) a tile's scores, 32×256 floats = 32 KB, with the
 * keys' and values' 256×d (32 KB each at d = 32, 64 KB at 64) and the
 * queries' and outputs' 32×d, stay in L2 while the gemm streams its L1
 * through them; the backward keeps three such tiles (weights, the weights
 * after dropout, dP/dS) beside the same rows, about 200 KB. 256 keys make
 * each product long enough (K = 256 for P·V, N = 256 for Q·Kᵀ) that the
 * gemm's call and packing costs are small beside its multiply-adds. 32
 * queries: under a causal mask a tile stops at the last key its last query
 * sees, so at most 31 hidden keys per row are computed (and masked), which
 * at T = 64 ... 256 matters more than the per-gemm cost of small tiles
 * (measured against 64: baby B12×T64's attention forward at 2 threads
 * 2.2 → 1.5 ms, backward at 1 thread 6.0 → 5.9 ms; T = 2048 the same).
 * On an Intel Xeon (48 KB L1d, 2 MB L2) the same sizes win: baby B4×T2048
 * at 2 threads, a step of 516 ms at 32×256, 520 at 64×256, 523 at 32×512,
 * 543 at 64×128 and 565 at 32×128 (medians of three runs in turns); B12×T64
 * at 1 thread 37–41 ms whichever. */
enum { QUERY_TILE = 32, KEY_TILE = 256 };

/* The queries of the tile that starts at row i0: QUERY_TILE, fewer in the last. */
static inline int tile_rows(const problem *pr, int i0)
{
    return pr->tq - i0 < QUERY_TILE ? pr->tq - i0 : QUERY_TILE;
}

/* How many leading keys the queries before row i1 (>= 1) may see: as many as the last one. */
static inline int keys_seen(const problem *pr, int i1)
{
    return qkv__visible_keys(pr->causal, i1 - 1, pr->tq, pr->tk);
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

/* Problem e's row of the padding mask, or NULL. */
static inline const uint8_t *valid_of(const problem *pr, int e)
{
    return pr->key_valid ? pr->key_valid + (size_t)(e / pr->per_entry) * pr->tk : NULL;
}

/* How many of the n keys [j0, j0 + n) query i sees by the causal rule. */
static inline int seen_in(const problem *pr, int i, int j0, int n)
{
    int s = qkv__visible_keys(pr->causal, i, pr->tq, pr->tk) - j0;
    return s < 0 ? 0 : s > n ? n : s;
}

/* C = alpha · op(A)·op(B) + beta · C for one tile's product (m×n from k). */
static inline void tile_gemm(bool ta, bool tb, int m, int n, int k, qkv_real alpha,
                             const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                             qkv_real *C, int ldc)
{
    qkv__gemm(1, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0);
}

/* The threads that share out `items` pieces of `work` scores: one when a
 * team would cost more than the work, or when already inside a parallel
 * region (an outer loop of the caller's). Every piece is computed the same
 * way on any thread, so the choice never changes a bit. */
static inline int attention_workers(int items, size_t work)
{
    int threads = omp_get_max_threads();
    if (threads < 2 || items < 2 || omp_in_parallel() || work < QKV__PAR_MIN)
        return 1;
    return threads < items ? threads : items;
}

/* The forward of every problem of pr: out (laid out like q) and lse
 * (nb·nh·tq), dropout d, with scratch of `workers` × forward_scratch()
 * values (attention_forward.c). */
size_t qkv__attention_forward_scratch(void);
void qkv__attention_forward(const problem *pr, const qkv_real *q, const qkv_real *k,
                            const qkv_real *v, qkv_real *out, qkv_real *lse,
                            const qkv__attn_drop *d, qkv_real *scratch, int workers);

/* The attention weights of query rows [row0, row0 + n_rows) of every problem,
 * softmax(q·kᵀ/√d + mask), into p laid out as pr->lp for n_rows rows a
 * problem: what an inspector asks for, at n_rows·tk values a problem; tile
 * is room for QUERY_TILE × tk scores. */
void qkv__attention_weight_rows(const problem *pr, const qkv_real *q, const qkv_real *k,
                                int row0, int n_rows, qkv_real *p, qkv_real *tile);

/* Values of backward scratch per worker for problems of pr (attention_backward.c). */
size_t qkv__attention_backward_scratch(const problem *pr);

/* The attention node's backward (its ctx an attn_ctx). */
void qkv__attention_backward(qkv_node *n);

#endif
