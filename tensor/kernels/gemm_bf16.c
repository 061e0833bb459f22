/* The bf16 GEMM's driver: which path runs, and the blocked loops around its
 * micro-kernel, split across threads.
 *
 * The loops are the fp32 driver's (gemm.c), outermost first: NC columns of
 * C; KC steps of k, op(B)'s kc×nc block rounded and packed as pairs; MC rows,
 * op(A)'s mc×kc block likewise (always packed: it must be rounded); then MR
 * rows against every NR-column panel of B. Packed bf16 take half an fp32's
 * bytes, so KC is twice the fp32 one (768 steps, 384 pairs) for the same
 * bytes: a 12-row A panel of 18 KB in L1, a 384×512 B block of 768 KB in
 * L2. Half the k blocks is half the passes over C: 1.69x -> 1.74x fp32 on
 * 4096x384x1536 TN (KC 384 and NC 1024 before; 5 December 2026, Zen 4).
 *
 * The sum order is fixed by K alone (blocks of KC steps, pairs from each
 * block's start), never by the path's tile, the thread count or how C is cut:
 * every path and thread count gives the same bits (gemm_bf16.h). */
#include <omp.h>
#include <string.h>

#include "gemm_bf16_held.h"
#include "gemm_bf16_kernel.h"
#include "qkv/base.h"
#include "qkv/cpu.h"

/* KC is even, so that every block but the last holds whole pairs. */
enum { KC_MAX = 768, NC_MAX = 512, MC_MAX = 192 };

/* Words of the per-thread packing buffer: a B block and an A block. */
#define BUFFER_WORDS ((size_t)KC_MAX / 2 * (NC_MAX + MC_MAX))

/* Below this many flops a product runs on one thread: waking the team costs more. */
#define PARALLEL_MIN_FLOPS 2e6

static const char *const names[QKV__BF16_N_PATHS] = {
    [QKV__BF16_AVX512] = "avx512_bf16",
    [QKV__BF16_NEON] = "neon_bf16",
    [QKV__BF16_AVX2] = "avx2",
    [QKV__BF16_PORTABLE] = "portable",
};

/* The path qkv__gemm_bf16_force chose, or -1: follow the vector path. */
static int forced = -1;

const char *qkv__gemm_bf16_name(int path)
{
    return path >= 0 && path < QKV__BF16_N_PATHS ? names[path] : NULL;
}

bool qkv__gemm_bf16_supported(int path)
{
    switch (path) {
    case QKV__BF16_PORTABLE:
        return true;
    case QKV__BF16_AVX512:
        return qkv__cpu_has_avx512_bf16();
    case QKV__BF16_NEON:
        return qkv__cpu_has_arm_bf16();
    case QKV__BF16_AVX2:
        return QKV__CPU_X86 && qkv_cpu_supported(QKV_CPU_AVX2);
    default:
        return false;
    }
}

qkv__bf16_path qkv__gemm_bf16_path(void)
{
    if (forced >= 0)
        return (qkv__bf16_path)forced;
    if (qkv__cpu_active() == QKV__CPU_AVX512 && qkv__cpu_has_avx512_bf16())
        return QKV__BF16_AVX512;
    if (qkv__cpu_active() == QKV__CPU_NEON && qkv__cpu_has_arm_bf16())
        return QKV__BF16_NEON;
    if (QKV__CPU_X86 &&
        (qkv__cpu_active() == QKV__CPU_AVX512 || qkv__cpu_active() == QKV__CPU_AVX2))
        return QKV__BF16_AVX2;
    return QKV__BF16_PORTABLE;
}

int qkv__gemm_bf16_force(int path)
{
    if (path != -1 && !qkv__gemm_bf16_supported(path))
        return -1;
    forced = path;
    return 0;
}

int qkv__gemm_bf16_use(const char *what, const char *name)
{
    if (!name || !*name)
        return qkv__gemm_bf16_force(-1);
    for (int p = 0; p < QKV__BF16_N_PATHS; p++)
        if (strcmp(name, names[p]) == 0) {
            if (qkv__gemm_bf16_force(p) == 0)
                return 0;
            if (p == QKV__BF16_NEON)
                return qkv_set_error("%s%s: this CPU%s lacks ARM's BF16 (the bfdot "
                                     "instruction); the bf16 path it runs is %s",
                                     what, name, QKV__CPU_AARCH64 ? "" : " (not aarch64)",
                                     names[qkv__gemm_bf16_path()]);
            if (p == QKV__BF16_AVX2)
                return qkv_set_error("%s%s: this CPU%s lacks AVX2 and FMA; the bf16 path it "
                                     "runs is %s", what, name, QKV__CPU_X86 ? "" : " (not x86-64)",
                                     names[qkv__gemm_bf16_path()]);
            return qkv_set_error("%s%s: this CPU%s lacks AVX512_BF16 (the vdpbf16ps "
                                 "instruction); the bf16 path it runs is %s",
                                 what, name, QKV__CPU_X86 ? "" : " (not x86-64)",
                                 names[qkv__gemm_bf16_path()]);
        }
    return qkv_set_error("%s%s: no such bf16 path (avx512_bf16, neon_bf16, avx2 or portable)",
                         what, name);
}

static const qkv__gemm_bf16_kernel *active_kernel(void)
{
#if QKV__CPU_X86
    if (qkv__gemm_bf16_path() == QKV__BF16_AVX512)
        return &qkv__gemm_bf16_avx512;
    if (qkv__gemm_bf16_path() == QKV__BF16_AVX2)
        return &qkv__gemm_bf16_avx2;
#endif
#if QKV__CPU_AARCH64
    if (qkv__gemm_bf16_path() == QKV__BF16_NEON)
        return &qkv__gemm_bf16_neon;
#endif
    return &qkv__gemm_bf16_portable;
}

/* One product as the threads see it: qkv__gemm_bf16's arguments. */
typedef struct product {
    const qkv__gemm_bf16_kernel *path;
    bool ta, tb;
    int M, N, K;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
    int kc;                 /* steps of k per block: even, fixed by K alone */
    const uint32_t *held_b; /* all of op(B) packed (gemm_bf16_held.h), or NULL: pack per block */
} product;

static int min_int(int a, int b) { return a < b ? a : b; }
static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* The size of n cut into equal blocks of at most max, rounded up to a
 * multiple of unit: no thin leftover block. */
static int even_block(int n, int max, int unit)
{
    return ceil_div(ceil_div(n, ceil_div(n, max)), unit) * unit;
}

/* Where element (r, c) of op(X) sits, X stored with row pitch ld (at (c, r) when trans). */
static const float *at(const float *x, int ld, bool trans, int r, int c)
{
    return trans ? x + (size_t)c * ld + r : x + (size_t)r * ld + c;
}

/* C's rows [i_lo, i_hi) × columns [j_lo, j_hi), packing into buf: blocks of
 * at most kc2 pairs × nc columns of B, then kc2 pairs × mc rows of A. */
static void run_block(const product *g, int i_lo, int i_hi, int j_lo, int j_hi, uint32_t *buf,
                      int nc_max, int mc_max)
{
    const int mr = g->path->mr, nr = g->path->nr;
    const int kc = g->kc, nc = even_block(j_hi - j_lo, nc_max, nr);
    const size_t held_row = (size_t)ceil_div(g->N, nr) * nr; /* held_b's words per pair */
    const int mc = even_block(i_hi - i_lo, mc_max, mr);
    uint32_t *bp = buf, *ap = buf + (size_t)ceil_div(kc, 2) * nc;
    for (int j0 = j_lo; j0 < j_hi; j0 += nc) {
        const int nb = min_int(nc, j_hi - j0);
        for (int p0 = 0; p0 < g->K; p0 += kc) {
            const int kb = min_int(kc, g->K - p0), kp = ceil_div(kb, 2);
            const uint32_t *b = bp;
            if (g->held_b) /* j0 is a whole number of panels in */
                b = g->held_b + (size_t)p0 / 2 * held_row + (size_t)j0 * kp;
            else
                g->path->pack_b(bp, at(g->B, g->ldb, g->tb, p0, j0), g->ldb, g->tb, kb, nb, nr);
            const float beta = p0 == 0 ? g->beta : 1; /* later passes accumulate */
            for (int i0 = i_lo; i0 < i_hi; i0 += mc) {
                const int mb = min_int(mc, i_hi - i0);
                g->path->pack_a(ap, at(g->A, g->lda, g->ta, i0, p0), g->lda, g->ta, mb, kb, mr);
                for (int ir = 0; ir < mb; ir += mr)
                    for (int jr = 0; jr < nb; jr += nr)
                        g->path->kernel(kp, ap + (size_t)ir * kp, b + (size_t)jr * kp,
                                        g->C + (size_t)(i0 + ir) * g->ldc + j0 + jr, g->ldc,
                                        min_int(mr, mb - ir), min_int(nr, nb - jr), g->alpha, beta);
            }
        }
    }
}

/* This thread's packing buffer (BUFFER_WORDS), allocated on first use and
 * kept for the thread's life; NULL if that failed. */
static uint32_t *thread_buffer(void)
{
    static _Thread_local uint32_t *buffer;
    if (!buffer)
        buffer = qkv_alloc(BUFFER_WORDS * sizeof *buffer);
    return buffer;
}

/* Part `part` of `parts`: rows or columns of C, in whole tiles. */
static void run_part(const product *g, int part, int parts, bool by_rows)
{
    const int n = by_rows ? g->M : g->N, tile = by_rows ? g->path->mr : g->path->nr;
    const int tiles = ceil_div(n, tile);
    const int lo = min_int(part * tiles / parts * tile, n);
    const int hi = min_int((part + 1) * tiles / parts * tile, n);
    if (lo == hi)
        return;
    const int i_lo = by_rows ? lo : 0, i_hi = by_rows ? hi : g->M;
    const int j_lo = by_rows ? 0 : lo, j_hi = by_rows ? g->N : hi;
    uint32_t *buf = thread_buffer();
    if (buf) {
        run_block(g, i_lo, i_hi, j_lo, j_hi, buf, NC_MAX, MC_MAX);
    } else { /* no memory: one panel of each on the stack, the same KC, so the same sums */
        _Alignas(QKV_ALIGN) uint32_t small[KC_MAX / 2 * (QKV__GEMM_BF16_NR_MAX + QKV__GEMM_BF16_MR_MAX)];
        run_block(g, i_lo, i_hi, j_lo, j_hi, small, g->path->nr, g->path->mr);
    }
}

/* C = beta·C: all that is left when K == 0 or alpha == 0. */
static void scale(const product *g)
{
    for (int i = 0; i < g->M; i++)
        for (int j = 0; j < g->N; j++) {
            float *c = g->C + (size_t)i * g->ldc + j;
            *c = g->beta == 0 ? 0 : g->beta * *c;
        }
}

/* qkv__gemm_bf16, op(B) read from a held copy when held (and one is open). */
static void gemm(bool held, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                 const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    product g = {active_kernel(), trans_a, trans_b, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc,
                 0, NULL};
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0 || alpha == 0) {
        scale(&g);
        return;
    }
    g.kc = even_block(K, KC_MAX, 2);
    if (held)
        g.held_b = qkv__bf16_held(g.path, trans_b, K, N, g.kc, B, ldb);
    double flops = 2.0 * M * N * K;
    int threads = flops < PARALLEL_MIN_FLOPS || omp_in_parallel() ? 1 : omp_get_max_threads();
    /* Cut the longer side: each thread then reads the least of A and B. */
    const bool by_rows = M >= N;
    if (threads == 1) {
        run_part(&g, 0, 1, by_rows);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int part = 0; part < threads; part++)
        run_part(&g, part, threads, by_rows);
}

void qkv__gemm_bf16(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float *A,
                    int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    gemm(false, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void qkv__gemm_bf16_weight(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                           const float *A, int lda, const float *B, int ldb, float beta, float *C,
                           int ldc)
{
    gemm(true, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Entry b of a batch (strides s[0..2] of A, B and C), as one qkv__gemm_bf16. */
static void batch_entry(const product *g, const size_t s[3], int b)
{
    qkv__gemm_bf16(g->ta, g->tb, g->M, g->N, g->K, g->alpha, g->A + b * s[0], g->lda,
                   g->B + b * s[1], g->ldb, g->beta, g->C + b * s[2], g->ldc);
}

void qkv__gemm_bf16_batch(int batch, bool trans_a, bool trans_b, int M, int N, int K, float alpha,
                          const float *A, int lda, size_t stride_a, const float *B, int ldb,
                          size_t stride_b, float beta, float *C, int ldc, size_t stride_c)
{
    const product g = {NULL, trans_a, trans_b, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc, 0,
                       NULL};
    const size_t strides[3] = {stride_a, stride_b, stride_c};
    /* Products too small to split (attention's, a head each) go one to a
     * thread; each is still computed whole, so the bits do not change. */
    if (batch > 1 && 2.0 * M * N * K < PARALLEL_MIN_FLOPS && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
        for (int b = 0; b < batch; b++)
            batch_entry(&g, strides, b);
        return;
    }
    /* Not `parallel if (false)`: each product's own team would then be a
     * nested one, which libgomp starts afresh for every product. */
    for (int b = 0; b < batch; b++)
        batch_entry(&g, strides, b);
}
