/* Internal: the attention core that runs, part 1 of 4. Not installed.
 *
 *     O = dropout(softmax(Q·Kᵀ/√d + mask)) · V
 *
 * The formula as plain loops, one head, is attention_plain.c: read it
 * before. The core takes the same steps on many heads at once with gemms,
 * in tiles, and reads in four files, top to bottom:
 *
 *   attention.h           this header: the causal rule, where the matrices
 *                         are (layouts), the tiles, dropout by hash, the
 *                         threads, and the pieces the next files define;
 *   op_attention.c        the public calls: checks, the problem, the node;
 *   attention_forward.c   the forward tile (online softmax) and the weights;
 *   attention_backward.c  the backward tile (weights recomputed from lse).
 *
 * qkv_softmax_masked (op_softmax.c) shares the mask rules below. */
#ifndef QKV_ATTENTION_H
#define QKV_ATTENTION_H

#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <tgmath.h>

#include "graph.h"
#include "kernels/gemm_mixed.h"
#include "qkv/ops.h"

/* ---- the mask rules (the checks defined in op_attention.c) ---- */

/* How many leading keys query i of tq may see: all tk without a causal
 * mask; under one the keys j <= i + (tk - tq), so the last query sees every
 * key (with tk > tq the extra keys are an earlier context); none when tk < tq
 * and i is early. Inline: the tiles ask it for every row. */
static inline int qkv__visible_keys(bool causal, int i, int tq, int tk)
{
    if (!causal)
        return tk;
    int n = i + (tk - tq) + 1;
    return n < 0 ? 0 : n;
}

/* -1 with a message naming op when a causal mask would leave queries with no
 * key at all: Tq > Tk (query i sees keys j <= i + Tk - Tq). */
int qkv__check_causal(const char *op, const qkv_mask *mask, int tq, int tk);

/* 0 when mask suits scores of t's number of dims; otherwise -1 with a message
 * naming op and t's shape. causal needs (..., Tq, Tk); key_valid needs a batch
 * dim first, (B, ..., Tq, Tk). mask may be NULL. */
int qkv__check_mask(const char *op, const qkv_mask *mask, const qkv_tensor *t);

/* ---- the problems and where their matrices are ---- */

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
    layout lq, lkv, lo, lp;    /* of q; of k and v; of the output; of the weights */
} problem;

/* Where problem e = (b, h) of pr starts in each layout. */
typedef struct offsets {
    size_t q, kv, o, p; /* in tensors laid out like q, like k and v, like the output, like p */
} offsets;

static inline offsets offsets_of(const problem *pr, int e)
{
    size_t b = (size_t)(e / pr->nh), h = (size_t)(e % pr->nh);
    return (offsets){b * pr->lq.batch + h * pr->lq.head, b * pr->lkv.batch + h * pr->lkv.head,
                     b * pr->lo.batch + h * pr->lo.head, b * pr->lp.batch + h * pr->lp.head};
}

/* The matrices of a call: q, k and v, and their gradients (NULL where none). */
typedef struct operands {
    const qkv_real *q, *k, *v;
    qkv_real *dq, *dk, *dv;
} operands;

/* The operands of a node's inputs: q, k and v, or (n_in 1, a packed call)
 * one tensor that holds them side by side, k from value k_at and v from v_at
 * of each row (B,T,3C: the columns [C, 2C) and [2C, 3C)). */
static inline operands operands_of(qkv_tensor *const *in, int n_in, size_t k_at, size_t v_at)
{
    const qkv_tensor *q = in[0], *k = in[n_in == 1 ? 0 : 1], *v = in[n_in == 1 ? 0 : 2];
    return (operands){q->data, k->data + k_at, v->data + v_at, q->grad,
                      k->grad ? k->grad + k_at : NULL, v->grad ? v->grad + v_at : NULL};
}

/* Problem e's row of the padding mask, or NULL. */
static inline const uint8_t *valid_of(const problem *pr, int e)
{
    return pr->key_valid ? pr->key_valid + (size_t)(e / pr->per_entry) * pr->tk : NULL;
}

/* The scores' factor, 1/√d (why √d: attention_plain.c, step 1). */
static inline qkv_real score_scale(int d) { return 1 / sqrt((qkv_real)d); }

/* ---- the tiles ---- */

/* The forward takes QUERY_TILE queries at a time through all
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

/* The causal skipping: a tile of queries stops at the last key its last
 * query sees. How many leading keys the queries before row i1 (>= 1) may
 * see: as many as the last one. */
static inline int keys_seen(const problem *pr, int i1)
{
    return qkv__visible_keys(pr->causal, i1 - 1, pr->tq, pr->tk);
}

/* How many of the n keys [j0, j0 + n) query i sees by the causal rule. */
static inline int seen_in(const problem *pr, int i, int j0, int n)
{
    int s = qkv__visible_keys(pr->causal, i, pr->tq, pr->tk) - j0;
    return s < 0 ? 0 : s > n ? n : s;
}

/* C = alpha · op(A)·op(B) + beta · C for one tile's product (m×n from k), in the
 * precision of the model's products (gemm_mixed.h). */
static inline void tile_gemm(bool ta, bool tb, int m, int n, int k, qkv_real alpha,
                             const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                             qkv_real *C, int ldc)
{
    qkv__gemm_mixed(1, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0);
}

/* ---- dropout by hash ---- */

/* Attention dropout of one call: weight (problem e, query i, key j) is kept
 * when a hash of (seed, e·tq + i, j) is >= threshold, with probability 1 − p;
 * the same element always gets the same verdict, on any thread, in forward
 * and in backward, so that the backward draws the very mask the forward drew
 * without storing it. */
typedef struct qkv__attn_drop {
    bool on;            /* false: no dropout (the other fields unused) */
    uint64_t seed;      /* drawn once per call from the caller's rng */
    uint32_t threshold; /* p·2³² */
    qkv_real scale;     /* 1/(1 − p), the factor on kept weights */
} qkv__attn_drop;

/* The dropout of probability p (0 <= p < 1) keyed by seed; off when p == 0. */
static inline qkv__attn_drop qkv__attn_drop_make(qkv_real p, uint64_t seed)
{
    if (!(p > 0))
        return (qkv__attn_drop){0};
    /* p < 1, so p·2³² < 2³²: the threshold fits, and P(hash >= it) = 1 − p. */
    double t = (double)p * 4294967296.0;
    return (qkv__attn_drop){true, seed, (uint32_t)t, 1 / (1 - p)};
}

/* The hash key of global query row `row` (e·tq + i) under d. */
static inline uint64_t qkv__attn_drop_row(const qkv__attn_drop *d, uint64_t row)
{
    /* splitmix64's finaliser of seed + row·φ: rows far apart in the key. */
    uint64_t z = d->seed + (row + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A bijective 32-bit mixer (Wellons' lowbias32): every input bit moves about
 * half the output bits. Multiplies and shifts of 32-bit lanes vectorize. */
static inline __attribute__((always_inline)) uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The dropout factor of key j in the row keyed key: two rounds of mix32, the
 * key's halves put in before each, so that two rows' streams never coincide
 * by a shift of j. Inside the row kernels' loops of both the forward and
 * the backward. */
static inline __attribute__((always_inline)) qkv_real drop_factor(uint64_t key, uint32_t threshold,
                                                                  qkv_real scale, int j)
{
    uint32_t h = mix32(mix32((uint32_t)j ^ (uint32_t)key) ^ (uint32_t)(key >> 32));
    return h >= threshold ? scale : 0;
}

/* ---- threads ---- */

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

/* ---- the calls (op_attention.c) ---- */

/* qkv_attention_heads (no dropout) with k and v (B,Tk,C) views
 * whose batch entries start kv_batch values apart rather than Tk·C: the
 * first Tk positions of each entry of a (B,Tmax,C) buffer, read in place,
 * the key/value cache of generation (nn/self_attn.c).
 * Such views are not contiguous tensors, so grad mode must be off (-1
 * otherwise); the result is an ordinary (B,Tq,C) tensor. */
qkv_tensor *qkv__attention_heads_view(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                      size_t kv_batch, int n_head, const qkv_mask *mask,
                                      qkv_tensor **weights);

/* The self-attention of a (B,T,3C) tensor that holds each position's
 * query, key and value side by side (the columns [0, C), [C, 2C), [2C, 3C)),
 * as one product makes them: qkv_attention_heads of those three column
 * blocks, read in place, with the same output (B,T,C) and values, bit for
 * bit, and the gradients in the matching columns of qkv's. The mask as
 * qkv_attention_heads takes it; no weights (ask qkv_attention_heads). */
qkv_tensor *qkv__attention_packed(qkv_arena *a, qkv_tensor *qkv, int n_head, const qkv_mask *mask,
                                  qkv_real dropout, qkv_rng *rng);

/* ---- the forward (attention_forward.c) ---- */

/* Mask one row of n scores s of the keys [j0, j0 + n): the first n_seen are
 * visible by the causal rule (0 <= n_seen <= n), valid (NULL: every key) is
 * the padding mask of those n keys. Every hidden score becomes -inf, so its
 * weight is exactly 0. The backward masks its recomputed scores with it too. */
void qkv__attn_hide(qkv_real *s, const uint8_t *valid, int n_seen, int n);

/* pz = p ⊙ z, z the dropout factor of keys [j0, j0 + n) of the row keyed
 * row_key (d->scale where kept, 0 where dropped). pz may be p. */
void qkv__attn_drop_apply(qkv_real *pz, const qkv_real *p, const qkv__attn_drop *d,
                          uint64_t row_key, int j0, int n);

/* Scratch values per worker of the forward. */
size_t qkv__attention_forward_scratch(void);

/* The forward of every problem of pr: out (laid out like q) and lse
 * (nb·nh·tq), dropout d, with scratch of `workers` × forward_scratch()
 * values. */
void qkv__attention_forward(const problem *pr, const qkv_real *q, const qkv_real *k,
                            const qkv_real *v, qkv_real *out, qkv_real *lse,
                            const qkv__attn_drop *d, qkv_real *scratch, int workers);

/* The attention weights of query rows [row0, row0 + n_rows) of every problem,
 * softmax(q·kᵀ/√d + mask), into p laid out as pr->lp for n_rows rows a
 * problem: what an inspector asks for, at n_rows·tk values a problem; tile
 * is room for QUERY_TILE × tk scores. */
void qkv__attention_weight_rows(const problem *pr, const qkv_real *q, const qkv_real *k,
                                int row0, int n_rows, qkv_real *p, qkv_real *tile);

/* ---- the backward (attention_backward.c) ---- */

/* What backward needs beside the node's inputs and output. */
typedef struct attn_ctx {
    problem pr;
    size_t k_at, v_at;   /* where k and v start in their inputs (operands_of) */
    const qkv_real *lse; /* (nb·nh·tq) each query's log-sum-exp of its visible scores; +inf: none */
    qkv__attn_drop drop; /* the dropout of the weights, or off */
    int workers;         /* threads the backward's scratch has room for */
} attn_ctx;

/* Values of backward scratch per worker for problems of pr. */
size_t qkv__attention_backward_scratch(const problem *pr);

/* The attention node's backward (its ctx an attn_ctx). */
void qkv__attention_backward(qkv_node *n);

#endif
