/* The gemm driver: a packed, cache-blocked matrix product in the BLIS /
 * GotoBLAS layout, split across threads, with the micro-kernel chosen at run
 * time: the active path's (cpu.h).
 *
 * For one product C = alpha·op(A)·op(B) + beta·C the loops are, outermost first:
 *   j0: NC columns of C at a time;
 *   p0: KC steps of k at a time; op(B)'s kc×nc block is packed into kc×NR
 *       panels (contiguous, zero-padded), sized to stay in L2;
 *   i0: MC rows at a time; a transposed A is packed here, reading its
 *       stored rows in order, on a path that does not read it in place;
 *   ir: MR rows at a time; these rows of op(A) (packed, or read in place:
 *       MR stored rows, or MR columns of a transposed A's stored rows where
 *       the path's in_place_t_n allows) stay in L1 while...
 *   jr: ...the micro-kernel sweeps them across the NR-column panels of B.
 * Packing absorbs the transposes, so NN, NT, TN and TT run the same kernel. */
#include "gemm.h"

#include <omp.h>
#include <string.h>

#include "cpu.h"
#include "gemm_kernel.h"

/* Cache blocking, in elements, for the AVX-512 12×32 kernel on a 48 KB L1 /
 * 1 MB L2 core (the other kernels have smaller tiles, so they fit too):
 * KC·MR·4 B = 18 KB of A rows sit in L1 beside the B panel being streamed;
 * the packed KC×NC block of B, 768 KB, stays in L2 for a whole pass over M.
 * A transposed A is packed MC rows at a time (MC a multiple of every MR). */
enum { KC_MAX = 384, NC_MAX = 512, MC_MAX = 192 };

/* Elements of the per-thread packing buffer: a B block and an A block. */
#define BUFFER_SIZE ((size_t)KC_MAX * (NC_MAX + MC_MAX))

/* If the per-thread buffer cannot be allocated, a small stack buffer with
 * this KC and one B panel keeps gemm working, only slower. */
enum { KC_FALLBACK = 64 };

/* Below this many flops a product runs on one thread: waking the team costs more. */
#define PARALLEL_MIN_FLOPS 2e6

const qkv__gemm_path *qkv__gemm_active_path(void)
{
    switch (qkv__cpu_active()) {
#if QKV__CPU_X86
    case QKV__CPU_AVX512:
        return &qkv__gemm_avx512;
    case QKV__CPU_AVX2:
        return &qkv__gemm_avx2;
#endif
#if QKV__CPU_AARCH64
    case QKV__CPU_NEON:
        return &qkv__gemm_neon;
#endif
    default:
        return &qkv__gemm_portable;
    }
}

/* This thread's packing buffer (BUFFER_SIZE elements), allocated on its
 * first use and kept for the life of the thread, so steady-state calls do
 * not allocate. NULL if the allocation failed. */
static qkv_real *thread_buffer(void)
{
    static _Thread_local qkv_real *buffer;
    if (!buffer)
        buffer = qkv_alloc(BUFFER_SIZE * sizeof *buffer);
    return buffer;
}

/* One matrix product, or a rectangle of one: C = alpha·op(A)·op(B) + beta·C
 * with op(A) M×K and op(B) K×N (see gemm.h for the layouts). */
typedef struct product {
    bool ta, tb;
    bool dot; /* the path's few-rows NT form: decided on the whole product, so
               * that every thread count computes each element the same way */
    int M, N, K;
    qkv_real alpha, beta;
    const qkv_real *A, *B;
    qkv_real *C;
    int lda, ldb, ldc;
    const qkv__gemm_epilogue *ep; /* NULL, or run on each block of C once it is complete */
    int row0, col0;               /* where this product's C sits in the epilogue's C */
} product;

/* The epilogue, if any, on C's block of rows [i, i + m) and columns [j, j + n). */
static void finish(const product *g, int i, int j, int m, int n)
{
    if (g->ep)
        g->ep->fn(g->ep->ctx, g->C + (size_t)i * g->ldc + j, g->ldc, g->row0 + i, g->col0 + j, m, n);
}

static int min_int(int a, int b) { return a < b ? a : b; }
static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* Block size for n split into equal blocks of at most max (rounded up to a
 * multiple of unit), so no block is a thin leftover. */
static int balanced_block(int n, int max, int unit)
{
    int size = ceil_div(n, ceil_div(n, max));
    return ceil_div(size, unit) * unit;
}

/* C = beta·C: what is left of the product when K == 0 or alpha == 0. */
static void scale_c(const product *g)
{
    for (int i = 0; i < g->M; i++) {
        qkv_real *c = g->C + (size_t)i * g->ldc;
        if (g->beta == 0)
            memset(c, 0, (size_t)g->N * sizeof *c);
        else if (g->beta != 1)
            for (int j = 0; j < g->N; j++)
                c[j] *= g->beta;
    }
}

/* How one thread cuts a product into cache blocks (elements). */
typedef struct blocking {
    int kc, nc, mc; /* steps of k, columns of B and rows of A packed per block */
} blocking;

/* For rows [i0, i0 + mb) of C: add op(A)'s rows × columns [p0, p0 + kb) times
 * the packed kb×nb block of B (bp) into C's columns [j0, j0 + nb), one MR-row
 * panel of A at a time, each swept across every NR-column panel of B. */
static void row_block(const qkv__gemm_path *path, const product *g, int i0, int mb, int p0,
                      int kb, int j0, int nb, const qkv_real *bp, qkv_real *ap, qkv_real beta)
{
    const int mr = path->mr, nr = path->nr;
    /* A transposed A is read in place where the path says it pays: packing
     * it costs more than the reads it saves (see in_place_t_n's values); only
     * a ragged bottom edge is packed then. */
    const bool in_place_t = g->ta && nb <= path->in_place_t_n;
    if (g->ta && !in_place_t) /* transposed: pack the whole block, reading A's stored rows in order */
        path->pack_a(ap, g->A + (size_t)p0 * g->lda + i0, g->lda, true, mb, kb, mr);
    for (int ir = 0; ir < mb; ir += mr) {
        const int m = min_int(mr, mb - ir);
        /* this panel of op(A) where A is stored: its rows, or a transposed A's columns */
        const qkv_real *stored = g->ta ? g->A + (size_t)p0 * g->lda + i0 + ir
                                       : g->A + (size_t)(i0 + ir) * g->lda + p0;
        const qkv_real *a = stored;
        ptrdiff_t rs = 1, cs = mr; /* a packed panel... */
        if (g->ta && !in_place_t)
            a = ap + (size_t)ir * kb; /* ...of the block packed above */
        else if (m < mr) {
            path->pack_a(ap, stored, g->lda, g->ta, m, kb, mr); /* ...of the bottom edge */
            a = ap;
        } else if (g->ta)
            cs = g->lda; /* or full columns of a transposed A, read in place */
        else
            rs = g->lda, cs = 1; /* or full rows of an untransposed A, read in place */
        qkv_real *c = g->C + (size_t)(i0 + ir) * g->ldc + j0;
        for (int jr = 0; jr < nb; jr += nr)
            path->kernel(kb, a, rs, cs, bp + (size_t)jr * kb, c + jr, g->ldc, m,
                         min_int(nr, nb - jr), g->alpha, beta);
    }
}

/* The blocked loops on one thread, packing into buf: a max.kc×max.nc block of
 * B, then a max.kc×max.mc block of A. */
static void run_blocked(const qkv__gemm_path *path, const product *g, qkv_real *buf,
                        blocking max)
{
    const int kc = balanced_block(g->K, max.kc, 1), nc = balanced_block(g->N, max.nc, path->nr);
    const int mc = balanced_block(g->M, max.mc, path->mr);
    qkv_real *bp = buf, *ap = buf + (size_t)kc * nc;
    for (int j0 = 0; j0 < g->N; j0 += nc) {
        const int nb = min_int(nc, g->N - j0);
        for (int p0 = 0; p0 < g->K; p0 += kc) {
            const int kb = min_int(kc, g->K - p0);
            const qkv_real *b = g->tb ? g->B + (size_t)j0 * g->ldb + p0
                                      : g->B + (size_t)p0 * g->ldb + j0;
            path->pack_b(bp, b, g->ldb, g->tb, kb, nb, path->nr);
            const qkv_real beta = p0 == 0 ? g->beta : 1; /* later passes accumulate */
            for (int i0 = 0; i0 < g->M; i0 += mc) {
                const int mb = min_int(mc, g->M - i0);
                row_block(path, g, i0, mb, p0, kb, j0, nb, bp, ap, beta);
                if (p0 + kb == g->K) /* the block's last pass: it is complete and in cache */
                    finish(g, i0, j0, mb, nb);
            }
        }
    }
}

static void run_product(const qkv__gemm_path *path, const product *g)
{
    if (g->M == 0 || g->N == 0)
        return;
    if (g->K == 0 || g->alpha == 0) {
        scale_c(g);
        finish(g, 0, 0, g->M, g->N);
        return;
    }
    if (g->dot) {
        path->dot(g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc);
        finish(g, 0, 0, g->M, g->N);
        return;
    }
    qkv_real *buf = thread_buffer();
    if (buf) {
        run_blocked(path, g, buf, (blocking){KC_MAX, NC_MAX, MC_MAX});
    } else {
        _Alignas(QKV_ALIGN) qkv_real small[KC_FALLBACK * (QKV__GEMM_NR_MAX + QKV__GEMM_MR_MAX)];
        run_blocked(path, g, small, (blocking){KC_FALLBACK, path->nr, path->mr});
    }
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* Cut one M×N product into pm×pn rectangles for `parts` threads, choosing the
 * cut that makes each thread read the least of A and B (rows + columns). */
static void choose_grid(int parts, int M, int N, int mr, int nr, int *pm, int *pn)
{
    int best = -1;
    for (int d = 1; d <= parts; d++) {
        if (parts % d)
            continue;
        int rows = ceil_div(ceil_div(M, mr), d) * mr, cols = ceil_div(ceil_div(N, nr), parts / d) * nr;
        if (best < 0 || rows + cols < best)
            best = rows + cols, *pm = d, *pn = parts / d;
    }
}

/* [*lo, *hi) of part r of n elements cut into `parts` runs of whole tiles. */
static void part_range(int r, int parts, int n, int tile, int *lo, int *hi)
{
    int tiles = ceil_div(n, tile);
    *lo = min_int(r * tiles / parts * tile, n);
    *hi = min_int((r + 1) * tiles / parts * tile, n);
}

/* One qkv__gemm_heads call, cut into items: each of its products in `parts`
 * rectangles, pm rows by pn columns of them. */
typedef struct heads_call {
    const qkv__gemm_path *path;
    int heads, parts, pm, pn;
    bool ta, tb, dot;
    int M, N, K;
    qkv_real alpha, beta;
    const qkv_real *A, *B;
    qkv_real *C;
    int lda, ldb, ldc;
    size_t a_batch, a_head, b_batch, b_head, c_batch, c_head;
    const qkv__gemm_epilogue *ep;
} heads_call;

/* Item `item` of call c: rectangle item % parts of product item / parts. */
static void run_item(const heads_call *c, int item)
{
    int e = item / c->parts, b = e / c->heads, h = e % c->heads, r = item % c->parts, i0, i1, j0, j1;
    part_range(r / c->pn, c->pm, c->M, c->path->mr, &i0, &i1);
    part_range(r % c->pn, c->pn, c->N, c->path->nr, &j0, &j1);
    const qkv_real *a = c->A + b * c->a_batch + h * c->a_head +
                        (c->ta ? (size_t)i0 : (size_t)i0 * c->lda);
    const qkv_real *bb = c->B + b * c->b_batch + h * c->b_head +
                         (c->tb ? (size_t)j0 * c->ldb : (size_t)j0);
    product g = {c->ta, c->tb, c->dot, i1 - i0, j1 - j0, c->K, c->alpha, c->beta, a, bb,
                 c->C + b * c->c_batch + h * c->c_head + (size_t)i0 * c->ldc + j0, c->lda, c->ldb,
                 c->ldc, c->ep, i0, j0};
    run_product(c->path, &g);
}

/* One qkv__gemm_heads call as a heads_call, not yet cut (parts = pm = pn = 1). */
static heads_call make_call(int heads, bool trans_a, bool trans_b, int M, int N,
                            int K, qkv_real alpha, const qkv_real *A, int lda, size_t a_batch,
                            size_t a_head, const qkv_real *B, int ldb, size_t b_batch,
                            size_t b_head, qkv_real beta, qkv_real *C, int ldc, size_t c_batch,
                            size_t c_head, const qkv__gemm_epilogue *ep)
{
    const qkv__gemm_path *path = qkv__gemm_active_path();
    /* A few rows times a transposed B (one position through a Linear):
     * packing B would cost more than the product. */
    bool dot = path->dot && !trans_a && trans_b && M <= QKV__GEMM_DOT_M_MAX;
    return (heads_call){path, heads, 1, 1, 1, trans_a, trans_b, dot,
                        M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, a_batch, a_head,
                        b_batch, b_head, c_batch, c_head, ep};
}

/* The products of one heads_call (none if it is empty). */
static int products_of(const heads_call *c, int batch)
{
    return batch <= 0 || c->heads <= 0 || c->M <= 0 || c->N <= 0 ? 0 : batch * c->heads;
}

/* Item `item` of the calls[0..n) taken one after the other, calls[i] having items[i]. */
static void run_any_item(const heads_call *calls, const int *items, int n, int item)
{
    for (int i = 0; i < n - 1 && item >= items[i]; i++)
        item -= items[i], calls++;
    run_item(calls, item);
}

/* Runs n calls (n <= 2) of batch[i] products each in one parallel region:
 * the threads are shared out over all their products, so that independent
 * products of about the same size (a Linear's dx and dW) each go whole to a
 * thread rather than each being cut, packed twice, in a region of its own.
 * How a product is cut never changes its result. */
static void run_calls(heads_call *calls, const int *batch, int n)
{
    int products = 0, items[2];
    double flops = 0;
    for (int i = 0; i < n; i++) {
        products += products_of(&calls[i], batch[i]);
        flops += 2.0 * products_of(&calls[i], batch[i]) * calls[i].M * calls[i].N * calls[i].K;
    }
    if (products == 0)
        return;
    /* Inside a parallel region (one per attention problem) the caller's thread does it all. */
    int threads = flops < PARALLEL_MIN_FLOPS || omp_in_parallel() ? 1 : omp_get_max_threads();
    /* Whole products per thread when they share out evenly; otherwise each
     * product is also cut into `parts` rectangles so they do. */
    int parts = threads / gcd(products, threads), total = 0;
    for (int i = 0; i < n; i++) {
        heads_call *c = &calls[i];
        c->parts = parts;
        choose_grid(parts, c->M, c->N, c->path->mr, c->path->nr, &c->pm, &c->pn);
        items[i] = products_of(c, batch[i]) * parts;
        total += items[i];
    }
    if (threads == 1) { /* no parallel region at all: it would cost more than a small product */
        for (int item = 0; item < total; item++)
            run_any_item(calls, items, n, item);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int item = 0; item < total; item++)
        run_any_item(calls, items, n, item);
}

/* qkv__gemm_heads with an epilogue (only for batch = heads = 1: ep may be NULL otherwise). */
static void gemm_heads(int batch, int heads, bool trans_a, bool trans_b, int M, int N, int K,
                       qkv_real alpha, const qkv_real *A, int lda, size_t a_batch, size_t a_head,
                       const qkv_real *B, int ldb, size_t b_batch, size_t b_head, qkv_real beta,
                       qkv_real *C, int ldc, size_t c_batch, size_t c_head,
                       const qkv__gemm_epilogue *ep)
{
    heads_call c = make_call(heads, trans_a, trans_b, M, N, K, alpha, A, lda, a_batch,
                             a_head, B, ldb, b_batch, b_head, beta, C, ldc, c_batch, c_head, ep);
    run_calls(&c, &batch, 1);
}

void qkv__gemm_heads(int batch, int heads, bool trans_a, bool trans_b, int M, int N, int K,
                     qkv_real alpha, const qkv_real *A, int lda, size_t a_batch, size_t a_head,
                     const qkv_real *B, int ldb, size_t b_batch, size_t b_head, qkv_real beta,
                     qkv_real *C, int ldc, size_t c_batch, size_t c_head)
{
    gemm_heads(batch, heads, trans_a, trans_b, M, N, K, alpha, A, lda, a_batch, a_head, B, ldb,
               b_batch, b_head, beta, C, ldc, c_batch, c_head, NULL);
}

void qkv__gemm_then(bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
                    const qkv_real *A, int lda, const qkv_real *B, int ldb, qkv_real beta,
                    qkv_real *C, int ldc, const qkv__gemm_epilogue *ep)
{
    gemm_heads(1, 1, trans_a, trans_b, M, N, K, alpha, A, lda, 0, 0, B, ldb, 0, 0, beta, C, ldc, 0,
               0, ep);
}

void qkv__gemm(int batch, bool trans_a, bool trans_b, int M, int N, int K, qkv_real alpha,
               const qkv_real *A, int lda, size_t stride_a, const qkv_real *B, int ldb,
               size_t stride_b, qkv_real beta, qkv_real *C, int ldc, size_t stride_c)
{
    qkv__gemm_heads(batch, 1, trans_a, trans_b, M, N, K, alpha, A, lda, stride_a, 0, B, ldb,
                    stride_b, 0, beta, C, ldc, stride_c, 0);
}

void qkv__gemm_two(const qkv__gemm_product *x, const qkv__gemm_product *y)
{
    const qkv__gemm_product *p[2] = {x, y};
    heads_call calls[2];
    int batch[2] = {1, 1};
    for (int i = 0; i < 2; i++)
        calls[i] = make_call(1, p[i]->trans_a, p[i]->trans_b, p[i]->M, p[i]->N, p[i]->K,
                             p[i]->alpha, p[i]->A, p[i]->lda, 0, 0, p[i]->B, p[i]->ldb, 0, 0,
                             p[i]->beta, p[i]->C, p[i]->ldc, 0, 0, NULL);
    run_calls(calls, batch, 2);
}
