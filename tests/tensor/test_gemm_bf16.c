/* The bf16 rounding against a definition written from the values (nearest
 * bf16, ties to the even one, overflow past half a step beyond the largest),
 * and qkv__gemm_bf16 against a plain loop that rounds its inputs the same way
 * and sums in double: every transpose form, shapes that reach every block,
 * tail and edge of the blocking, every bf16 path this CPU runs at 1 and 2
 * threads (each the same bits at both; all but ARM BF16, which rounds its
 * sums to odd, the same bits as one another), and its distance from the fp32
 * GEMM. Under qemu-aarch64 (make test-aarch64) it runs twice: on a CPU with
 * BF16 and on one without, told by QKV_TEST_BF16_PATH which path each must
 * choose by default. */
#include <float.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qkv/gemm.h"
#include "tensor/kernels/cpu.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/gemm_bf16.h"
#include "testing.h"

static qkv_rng rng;

static float bits_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint32_t float_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* The value of bf16 h, with h = infinity standing for 2^128, the next step
 * past the largest bf16: where IEEE's round to nearest puts the overflow. */
static double step_value(uint32_t h)
{
    double v = (h & 0x7FFF) == 0x7F80 ? ldexp(1, 128) : (double)qkv__bf16_float((qkv__bf16)h);
    return h & 0x8000 ? -fabs(v) : v;
}

/* The definition: for finite x, of the two bf16 on either side of x (x's
 * upper half, and one step further from zero), the nearer; on a tie the one
 * whose last bit is 0. Infinities stay; a NaN gives some NaN of x's sign. */
static bool rounds_as_defined(float x, qkv__bf16 got, char *why, size_t len)
{
    uint32_t u = float_bits(x);
    if (isnan(x)) {
        bool ok = isnan(qkv__bf16_float(got)) && (got >> 15) == (u >> 31);
        snprintf(why, len, "NaN 0x%08x gave 0x%04x", u, got);
        return ok;
    }
    uint32_t down = u >> 16, up = down + 1; /* toward zero, away from zero */
    qkv__bf16 want;
    if (isinf(x) || (u & 0xFFFF) == 0) {
        want = (qkv__bf16)down;
    } else {
        double dd = fabs((double)x - step_value(down)), du = fabs(step_value(up) - (double)x);
        want = (qkv__bf16)(dd < du ? down : du < dd ? up : (down & 1) ? up : down);
    }
    snprintf(why, len, "0x%08x (%.9g) gave 0x%04x, want 0x%04x", u, (double)x, got, want);
    return got == want;
}

START_TEST(test_round_edge_cases)
{
    static const uint32_t cases[] = {
        0x00000000, 0x3F800000,             /* zero, one: exact */
        0x3F808000, 0x3F818000,             /* ties: 1 + 2^-8 down to 1 (even), 1 + 3·2^-8 up */
        0x3F807FFF, 0x3F808001, 0x3F817FFF, /* just below and above the ties */
        0x00000001, 0x00008000, 0x00008001, /* subnormals: the smallest; a tie to 0; past it */
        0x00018000, 0x007FFFFF, 0x00800000, /* a tie up to 0x0002; the largest (to the smallest normal) */
        0x7F7F0000, 0x7F7F7FFF, 0x7F7F8000, /* the largest bf16; just under half a step past it; the tie: inf */
        0x7F7FFFFF, 0x7F800000,             /* FLT_MAX: inf; inf */
        0x7FC00000, 0x7F800001, 0x7F80FFFF, /* quiet NaN; signalling NaNs whose carry would give inf */
        0x7FFFFFFF, 0x7FBFFFFF,             /* NaN all ones; the largest signalling NaN */
        0x40490FDB, 0x3EAAAAAB, 0x33800000, /* pi, 1/3, 2^-24 */
    };
    char why[160];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (uint32_t sign = 0; sign <= 1; sign++) {
            float x = bits_float(cases[i] | sign << 31);
            ck_assert_msg(rounds_as_defined(x, qkv__bf16_round(x), why, sizeof why), "%s", why);
        }
    /* the named ones, spelled out */
    ck_assert_uint_eq(qkv__bf16_round(bits_float(0x3F808000)), 0x3F80);
    ck_assert_uint_eq(qkv__bf16_round(bits_float(0x3F818000)), 0x3F82);
    ck_assert_uint_eq(qkv__bf16_round(bits_float(0x00018000)), 0x0002);
    ck_assert_uint_eq(qkv__bf16_round(bits_float(0x7F7F8000)), 0x7F80);
    ck_assert_uint_eq(qkv__bf16_round(bits_float(0xFF7FFFFF)), 0xFF80);
    ck_assert(isnan(qkv__bf16_float(qkv__bf16_round(bits_float(0x7F800001)))));
}
END_TEST

START_TEST(test_round_random_and_every_bf16)
{
    char why[160];
    qkv_rng_seed(&rng, 1);
    for (int i = 0; i < 1000000; i++) {
        uint32_t u = (uint32_t)qkv_rng_below(&rng, 1ull << 32);
        if (i % 4 == 0) /* many ties and near-ties */
            u = (u & 0xFFFF0000) | (0x8000 + (uint32_t)qkv_rng_below(&rng, 3) - 1);
        float x = bits_float(u);
        ck_assert_msg(rounds_as_defined(x, qkv__bf16_round(x), why, sizeof why), "%s", why);
    }
    for (uint32_t h = 0; h <= 0xFFFF; h++) { /* a bf16 rounds to itself */
        float x = qkv__bf16_float((qkv__bf16)h);
        ck_assert_uint_eq(float_bits(x), h << 16);
        if (!isnan(x))
            ck_assert_uint_eq(qkv__bf16_round(x), h);
    }
}
END_TEST

/* ---- the GEMM ---- */

/* One call of qkv__gemm_bf16 to check. */
typedef struct gemm_case {
    int M, N, K;
    bool ta, tb;
    int pad; /* extra elements per row of A, B and C */
    float alpha, beta;
} gemm_case;

static float uniform(void) { return (float)(2 * qkv_rng_uniform(&rng) - 1); }

/* n floats from fill, one past an aligned block: no operand is vector-aligned. */
static float *buffer(size_t n, float (*fill)(void), float **base)
{
    *base = malloc((n + 1) * sizeof **base);
    ck_assert_ptr_nonnull(*base);
    for (size_t i = 0; i < n; i++)
        (*base)[i + 1] = fill();
    return *base + 1;
}

static double op_at(const float *x, int ld, bool trans, int r, int c)
{
    return trans ? x[(size_t)c * ld + r] : x[(size_t)r * ld + c];
}

static double rounded(double x) { return qkv__bf16_float(qkv__bf16_round((float)x)); }

/* The operands of a case, and what its C should be. */
typedef struct operands {
    const float *A, *B, *C0;
    int lda, ldb, ldc;
    double *want, *tol;  /* the plain loop's result and tolerance, per element */
    double *fp32_bound;  /* how far from the unrounded product the rounding may take it */
} operands;

static operands make_operands(const gemm_case *c, float **mem)
{
    int ra = c->ta ? c->K : c->M, ca = c->ta ? c->M : c->K;
    int rb = c->tb ? c->N : c->K, cb = c->tb ? c->K : c->N;
    operands o = {0};
    o.lda = ca + c->pad, o.ldb = cb + c->pad, o.ldc = c->N + c->pad;
    size_t nc = (size_t)c->M * o.ldc;
    o.A = buffer((size_t)ra * o.lda, uniform, &mem[0]);
    o.B = buffer((size_t)rb * o.ldb, uniform, &mem[1]);
    float *C0 = buffer(nc, uniform, &mem[2]);
    if (c->beta == 0) /* beta = 0 must ignore C, NaN included */
        for (size_t i = 0; i < nc; i++)
            C0[i] = NAN;
    o.C0 = C0;
    o.want = calloc(nc, sizeof *o.want), o.tol = calloc(nc, sizeof *o.tol);
    o.fp32_bound = calloc(nc, sizeof *o.fp32_bound);
    ck_assert(o.want && o.tol && o.fp32_bound);
    const double u = ldexp(1, -8); /* bf16's unit roundoff: 8 significant bits */
    /* op(A) (M×K) and op(B)ᵀ (N×K) rounded, once */
    double *ra16 = malloc(((size_t)c->M * c->K + 1) * sizeof *ra16);
    double *rb16 = malloc(((size_t)c->N * c->K + 1) * sizeof *rb16);
    ck_assert(ra16 && rb16);
    for (int p = 0; p < c->K; p++) {
        for (int i = 0; i < c->M; i++)
            ra16[(size_t)i * c->K + p] = rounded(op_at(o.A, o.lda, c->ta, i, p));
        for (int j = 0; j < c->N; j++)
            rb16[(size_t)j * c->K + p] = rounded(op_at(o.B, o.ldb, c->tb, p, j));
    }
    for (int i = 0; i < c->M; i++)
        for (int j = 0; j < c->N; j++) {
            size_t at = (size_t)i * o.ldc + j;
            double s = 0, mag = 0;
            for (int p = 0; p < c->K; p++) {
                double x = ra16[(size_t)i * c->K + p], y = rb16[(size_t)j * c->K + p];
                s += x * y;
                mag += fabs(x * y);
            }
            double old = c->beta == 0 ? 0 : (double)c->beta * C0[at];
            double acc = 4.0 * (c->K + 2) * FLT_EPSILON * (fabs(c->alpha) * mag + fabs(old)) + 1e-30;
            o.want[at] = c->alpha * s + old;
            o.tol[at] = acc;
            /* each rounded input is within u of its value: a product within 2u + u² */
            o.fp32_bound[at] = (2 * u + u * u) * fabs(c->alpha) * mag * (1 + 2 * u) + 2 * acc;
        }
    free(ra16), free(rb16);
    return o;
}

static void free_operands(operands *o, float **mem)
{
    free(mem[0]), free(mem[1]), free(mem[2]);
    free(o->want), free(o->tol), free(o->fp32_bound);
}

static const char *describe(const gemm_case *c, int threads)
{
    static char s[160];
    snprintf(s, sizeof s, "%s %s%s M %d N %d K %d pad %d alpha %g beta %g, %d thread(s)",
             qkv__gemm_bf16_name(qkv__gemm_bf16_path()), c->ta ? "T" : "N", c->tb ? "T" : "N",
             c->M, c->N, c->K, c->pad, (double)c->alpha, (double)c->beta, threads);
    return s;
}

/* C after one call of c, on the active path and `threads` threads. */
static void run(const gemm_case *c, const operands *o, float *C, int threads)
{
    memcpy(C, o->C0, (size_t)c->M * o->ldc * sizeof *C);
    omp_set_num_threads(threads);
    qkv__gemm_bf16(c->ta, c->tb, c->M, c->N, c->K, c->alpha, o->A, o->lda, o->B, o->ldb, c->beta,
                   C, o->ldc);
}

/* Every element of C within tolerance of the plain loop, the padding untouched. */
static void verify(const gemm_case *c, const operands *o, const float *C, int threads)
{
    for (int i = 0; i < c->M; i++)
        for (int j = 0; j < o->ldc; j++) {
            size_t at = (size_t)i * o->ldc + j;
            if (j >= c->N)
                ck_assert_msg(memcmp(&C[at], &o->C0[at], sizeof *C) == 0,
                              "%s: padding C[%d][%d] written", describe(c, threads), i, j);
            else
                ck_assert_msg(fabs(C[at] - o->want[at]) <= o->tol[at],
                              "%s: C[%d][%d] = %.9g, want %.9g (tolerance %g)",
                              describe(c, threads), i, j, (double)C[at], o->want[at], o->tol[at]);
        }
}

/* Whether path's sums are vdpbf16ps's, as the portable path's are: all but
 * ARM BF16's BFDOT, which adds a pair's products first and rounds to odd. */
static bool sums_as_vdpbf16ps(int path) { return path != QKV__BF16_NEON; }

/* c on every bf16 path this CPU has, at 1 and 2 threads: each within
 * tolerance of the plain loop, the same bits at 2 threads as at 1, and the
 * paths that sum as vdpbf16ps does the same bits as one another. */
static void check_case(const gemm_case *c)
{
    float *mem[3];
    operands o = make_operands(c, mem);
    size_t nc = (size_t)c->M * o.ldc;
    float *first = malloc(nc * sizeof *first), *one = malloc(nc * sizeof *one);
    float *C = malloc(nc * sizeof *C);
    ck_assert(first && one && C);
    bool have_first = false;
    for (int path = 0; path < QKV__BF16_N_PATHS; path++) {
        if (qkv__gemm_bf16_force(path) != 0)
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            run(c, &o, C, threads);
            verify(c, &o, C, threads);
            if (threads == 1)
                memcpy(one, C, nc * sizeof *C);
            ck_assert_msg(memcmp(one, C, nc * sizeof *C) == 0,
                          "%s: not the same bits as at 1 thread", describe(c, threads));
            if (!sums_as_vdpbf16ps(path))
                continue;
            if (!have_first)
                memcpy(first, C, nc * sizeof *C), have_first = true;
            ck_assert_msg(memcmp(first, C, nc * sizeof *C) == 0,
                          "%s: not the same bits as the first path at 1 thread",
                          describe(c, threads));
        }
    }
    qkv__gemm_bf16_force(-1);
    free(first), free(one), free(C);
    free_operands(&o, mem);
}

static void check_all_forms(gemm_case c)
{
    for (int form = 0; form < 4; form++) {
        c.ta = form & 1, c.tb = form & 2;
        check_case(&c);
    }
}

START_TEST(test_tiles_and_tails)
{
    qkv_rng_seed(&rng, 2);
    /* every row count of the 12- and 4-row tiles' edges, every column count
     * of the 32- and 16-column ones, K odd and even, 1 to past a vector of pairs */
    static const int shapes[][3] = {
        {1, 1, 1},   {1, 1, 2},   {2, 3, 3},    {4, 16, 4},   {5, 17, 5},   {8, 31, 7},
        {11, 32, 33}, {12, 33, 31}, {13, 47, 32}, {23, 48, 65}, {24, 64, 64}, {25, 65, 63},
        {3, 100, 9},  {37, 7, 100}, {64, 63, 1},  {7, 1, 129},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        gemm_case c = {shapes[s][0], shapes[s][1], shapes[s][2], false, false, 0, 1, 0};
        check_all_forms(c);
        c.pad = 3, c.alpha = -0.5f, c.beta = 1;
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_blocks)
{
    qkv_rng_seed(&rng, 3);
    /* K past one and two blocks of 768 steps (odd: an odd last block), N past
     * one and two 512-column blocks, M past the 192-row block, with ragged ends */
    static const int shapes[][3] = {{13, 40, 385}, {30, 33, 769}, {7, 20, 1537}, {5, 1061, 20},
                                    {4, 600, 9},   {203, 20, 30}, {197, 50, 400}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        gemm_case c = {shapes[s][0], shapes[s][1], shapes[s][2], false, false, 1, 1, 0};
        check_all_forms(c);
        c.alpha = 2, c.beta = 0.5f;
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_alpha_beta_and_empty)
{
    qkv_rng_seed(&rng, 4);
    static const float values[][2] = {{1, 0}, {2.5f, 0}, {-1, 1}, {0.5f, -0.75f}, {1, 2}};
    for (size_t v = 0; v < sizeof values / sizeof *values; v++)
        check_all_forms((gemm_case){29, 45, 23, false, false, 1, values[v][0], values[v][1]});
    check_all_forms((gemm_case){9, 10, 0, false, false, 2, 1, 0.5f}); /* K = 0: C = beta·C */
    check_all_forms((gemm_case){9, 10, 0, false, false, 2, 1, 0});    /* ... 0 for beta = 0 */
    check_all_forms((gemm_case){9, 10, 5, false, false, 2, 0, -2});   /* alpha = 0 */
}
END_TEST

START_TEST(test_random_shapes)
{
    qkv_rng_seed(&rng, 5);
    for (int trial = 0; trial < 25; trial++) {
        gemm_case c = {1 + (int)qkv_rng_below(&rng, 90), 1 + (int)qkv_rng_below(&rng, 90),
                       1 + (int)qkv_rng_below(&rng, 90), false, false,
                       (int)qkv_rng_below(&rng, 3), uniform(), 0};
        c.beta = qkv_rng_below(&rng, 2) ? 0 : uniform();
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_within_rounding_of_fp32)
{
    /* the bf16 product is the fp32 product of rounded inputs: within
     * (2u + u²)·Σ|a·b| of the exact one (u = 2^-8), and visibly not it */
    qkv_rng_seed(&rng, 6);
    gemm_case c = {70, 90, 300, false, true, 0, 1, 0};
    float *mem[3], *fa, *fb;
    operands o = make_operands(&c, mem);
    float *C16 = buffer((size_t)c.M * c.N, uniform, &fa), *C32 = buffer((size_t)c.M * c.N, uniform, &fb);
    for (int path = 0; path < QKV__BF16_N_PATHS; path++) {
        if (qkv__gemm_bf16_force(path) != 0)
            continue;
        qkv__gemm_bf16(c.ta, c.tb, c.M, c.N, c.K, 1, o.A, o.lda, o.B, o.ldb, 0, C16, c.N);
        qkv__gemm(1, c.ta, c.tb, c.M, c.N, c.K, 1, o.A, o.lda, 0, o.B, o.ldb, 0, 0, C32, c.N, 0);
        double worst = 0; /* the largest difference as a share of its bound */
        for (int at = 0; at < c.M * c.N; at++) {
            double d = fabs((double)C16[at] - C32[at]);
            ck_assert_msg(d <= o.fp32_bound[at], "%s: C[%d] = %.9g, fp32 %.9g, bound %g",
                          qkv__gemm_bf16_name(path), at, (double)C16[at], (double)C32[at],
                          o.fp32_bound[at]);
            worst = fmax(worst, d / o.fp32_bound[at]);
        }
        /* random rounding errors add up like a random walk: far under the
         * worst case, but not nothing */
        ck_assert_msg(worst > 0.01, "%s: bf16 within %g of its bound: inputs not rounded?",
                      qkv__gemm_bf16_name(path), worst);
    }
    qkv__gemm_bf16_force(-1);
    free(fa), free(fb);
    free_operands(&o, mem);
}
END_TEST

START_TEST(test_nan_inf_and_subnormals)
{
    /* a NaN or an infinity in A reaches its row of C, whichever way A is
     * stored (each path packs a transposed A its own way); the NaN has only
     * its lowest payload bit, which rounding's carry would turn into an
     * infinity; a subnormal bf16 is a number on the portable and AVX2
     * paths, zero on AVX512_BF16 (vdpbf16ps's DAZ) and ARM BF16 (BFDOT
     * flushes its inputs) */
    const uint32_t nan_bits = 0x7F800001u;
    float nan_low;
    memcpy(&nan_low, &nan_bits, sizeof nan_low);
    const float tiny = ldexpf(1, -130), big = ldexpf(1, 10);
    float A[2][3] = {{nan_low, 1, 1}, {tiny, 0, 0}}, B[3][2] = {{1, big}, {1, 1}, {1, 1}};
    float Ainf[2][3] = {{INFINITY, 1, 1}, {1, 1, 1}};
    float At[3][2], Ainf_t[3][2]; /* the same, stored transposed */
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 3; p++)
            At[p][i] = A[i][p], Ainf_t[p][i] = Ainf[i][p];
    for (int path = 0; path < QKV__BF16_N_PATHS; path++) {
        if (qkv__gemm_bf16_force(path) != 0)
            continue;
        for (int trans = 0; trans < 2; trans++) {
            float C[2][2];
            qkv__gemm_bf16(trans, false, 2, 2, 3, 1, trans ? &At[0][0] : &A[0][0], trans ? 2 : 3,
                           &B[0][0], 2, 0, &C[0][0], 2);
            ck_assert_msg(isnan(C[0][0]) && isnan(C[0][1]), "%s, A%s: %g %g",
                          qkv__gemm_bf16_name(path), trans ? "ᵀ" : "", (double)C[0][0],
                          (double)C[0][1]);
            ck_assert_float_eq(C[1][1], path == QKV__BF16_PORTABLE || path == QKV__BF16_AVX2
                                            ? ldexpf(1, -120)
                                            : 0);
            qkv__gemm_bf16(trans, false, 2, 2, 3, 1, trans ? &Ainf_t[0][0] : &Ainf[0][0],
                           trans ? 2 : 3, &B[0][0], 2, 0, &C[0][0], 2);
            ck_assert(isinf(C[0][0]) && C[0][0] > 0 && C[1][0] == 3);
        }
    }
    qkv__gemm_bf16_force(-1);
}
END_TEST

static void check_all_forms_of(void *c) { check_all_forms(*(const gemm_case *)c); }

START_TEST(test_works_without_memory)
{
    /* No memory for the packing buffers: a stack buffer, the same KC, the same sums. */
    qkv_rng_seed(&rng, 7);
    gemm_case c = {40, 70, 400, false, false, 1, 1, 0.5f};
    qkv_test_without_memory(check_all_forms_of, &c);
}
END_TEST

START_TEST(test_paths)
{
    /* the default follows the vector path: AVX512_BF16 only on avx512, ARM
     * BF16 only on neon, AVX2 on avx512 without AVX512_BF16 and on avx2 */
    bool has = qkv__gemm_bf16_supported(QKV__BF16_AVX512);
    bool has_arm = qkv__gemm_bf16_supported(QKV__BF16_NEON);
    ck_assert(qkv__gemm_bf16_supported(QKV__BF16_AVX2) == qkv_cpu_supported(QKV_CPU_AVX2));
    ck_assert(qkv__gemm_bf16_supported(QKV__BF16_PORTABLE));
    ck_assert(!qkv__gemm_bf16_supported(QKV__BF16_N_PATHS) && !qkv__gemm_bf16_name(-1));
    for (int cpu = 0; cpu < QKV__CPU_N_PATHS; cpu++)
        if (qkv_cpu_use(cpu) == 0)
            ck_assert_int_eq(qkv__gemm_bf16_path(),
                             cpu == QKV__CPU_AVX512 && has     ? QKV__BF16_AVX512
                             : cpu == QKV__CPU_NEON && has_arm ? QKV__BF16_NEON
                             : cpu == QKV__CPU_AVX512 || cpu == QKV__CPU_AVX2
                                 ? QKV__BF16_AVX2
                                 : QKV__BF16_PORTABLE);
    qkv_cpu_use(QKV_CPU_DEFAULT);
    /* the path the CPU we run on must choose (the Makefile's qemu CPUs: one
     * with BF16, one without), so that detection can fail this test */
    const char *want = getenv("QKV_TEST_BF16_PATH");
    if (want)
        ck_assert_str_eq(qkv__gemm_bf16_name(qkv__gemm_bf16_path()), want);
    /* forced, and refused with what is missing */
    ck_assert_int_eq(qkv__gemm_bf16_use("--bf16 ", "portable"), 0);
    ck_assert_int_eq(qkv__gemm_bf16_path(), QKV__BF16_PORTABLE);
    ck_assert_int_eq(qkv__gemm_bf16_use("--bf16 ", "fp8"), -1);
    ck_assert_str_eq(qkv_last_error(),
                     "--bf16 fp8: no such bf16 path (avx512_bf16, neon_bf16, avx2 or portable)");
    ck_assert_int_eq(qkv__gemm_bf16_use("--bf16 ", "avx512_bf16"), has ? 0 : -1);
    if (!has)
        ck_assert_msg(strstr(qkv_last_error(), "lacks AVX512_BF16") != NULL, "%s", qkv_last_error());
    qkv__gemm_bf16_force(-1);
    ck_assert_int_eq(qkv__gemm_bf16_use("--bf16 ", "neon_bf16"), has_arm ? 0 : -1);
    if (!has_arm) { /* refused, and the path in use is unchanged */
        ck_assert_msg(strstr(qkv_last_error(), "lacks ARM's BF16 (the bfdot instruction)") != NULL,
                      "%s", qkv_last_error());
        ck_assert_int_eq(qkv__gemm_bf16_force(QKV__BF16_NEON), -1);
        ck_assert_int_ne(qkv__gemm_bf16_path(), QKV__BF16_NEON);
    }
    ck_assert_int_eq(qkv__gemm_bf16_use("--bf16 ", ""), 0);
    printf("test_gemm_bf16: bf16 paths run here:");
    for (int path = 0; path < QKV__BF16_N_PATHS; path++)
        if (qkv__gemm_bf16_supported(path))
            printf(" %s", qkv__gemm_bf16_name(path));
    printf("\n");
}
END_TEST

/* The public entry (qkv/gemm.h) is the kernel on each batch entry, bit for
 * bit, with strides that leave gaps between the entries, at 1 thread and at
 * 2 (where products this small go one to a thread). */
START_TEST(test_public_entry_is_the_kernel)
{
    enum { BATCH = 5, M = 5, N = 7, K = 9, SA = M * K + 2, SB = N * K + 3, SC = M * N + 4 };
    float *ma, *mb, *mc, *md, *me;
    const float *A = buffer(BATCH * SA, uniform, &ma), *B = buffer(BATCH * SB, uniform, &mb);
    const float *C0 = buffer(BATCH * SC, uniform, &mc);
    float *C = buffer(BATCH * SC, uniform, &md), *D = buffer(BATCH * SC, uniform, &me);
    memcpy(D, C0, BATCH * SC * sizeof *C);
    for (int b = 0; b < BATCH; b++)
        qkv__gemm_bf16(false, true, M, N, K, 0.5f, A + b * SA, K, B + b * SB, K, 0.25f, D + b * SC,
                       N);
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        memcpy(C, C0, BATCH * SC * sizeof *C);
        ck_assert_int_eq(qkv_gemm_bf16(BATCH, false, true, M, N, K, 0.5f, A, K, SA, B, K, SB,
                                       0.25f, C, N, SC), 0);
        ck_assert_msg(memcmp(C, D, BATCH * SC * sizeof *C) == 0,
                      "qkv_gemm_bf16 is not the kernel at %d thread(s)", threads);
    }
    free(ma), free(mb), free(mc), free(md), free(me);
}
END_TEST

static Suite *gemm_bf16_suite(void)
{
    Suite *s = suite_create("gemm_bf16");
    TCase *tc = tcase_create("gemm_bf16");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_round_edge_cases);
    tcase_add_test(tc, test_round_random_and_every_bf16);
    tcase_add_test(tc, test_tiles_and_tails);
    tcase_add_test(tc, test_blocks);
    tcase_add_test(tc, test_alpha_beta_and_empty);
    tcase_add_test(tc, test_random_shapes);
    tcase_add_test(tc, test_within_rounding_of_fp32);
    tcase_add_test(tc, test_nan_inf_and_subnormals);
    tcase_add_test(tc, test_works_without_memory);
    tcase_add_test(tc, test_public_entry_is_the_kernel);
    suite_add_tcase(s, tc);
    /* a case of its own: make test-aarch64 runs it alone (CK_RUN_CASE) on a CPU without BF16 */
    TCase *paths = tcase_create("paths");
    tcase_add_test(paths, test_paths);
    suite_add_tcase(s, paths);
    return s;
}

QKV_TEST_MAIN(gemm_bf16_suite)
