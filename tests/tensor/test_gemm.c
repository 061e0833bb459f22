/* qkv_gemm, and so qkv__gemm (float build), against a double-accumulating reference: every
 * transpose form, edge sizes, padded leading dimensions, batches with strides
 * (including a shared B), alpha/beta values, 1 and 2 threads, and every
 * micro-kernel this CPU can run. */
#include <float.h>
#include <omp.h>
#include <stdlib.h>

#include "qkv/gemm.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/gemm_kernel.h"
#include "testing.h"

/* One call of qkv__gemm to check. */
typedef struct gemm_case {
    int batch, M, N, K;
    bool ta, tb;
    int pad;             /* extra elements per row of A, B and C (ld = width + pad) */
    size_t gap;          /* extra elements between batch entries */
    bool shared_b;       /* stride_b = 0: one B for every entry */
    qkv_real alpha, beta;
} gemm_case;

/* Written into C's padding and gaps: a gemm that touches them is caught. */
#define SENTINEL 12345.0f

static qkv_rng rng;

static float uniform(void) { return (float)(2 * qkv_rng_uniform(&rng) - 1); }

/* op(X)(r, c) of a matrix stored rows×cols (not transposed) or cols×rows. */
static double op_at(const float *x, int ld, bool trans, int r, int c)
{
    return trans ? x[(size_t)c * ld + r] : x[(size_t)r * ld + c];
}

/* A buffer of n floats, one element past an aligned block so that no
 * operand is vector-aligned, filled with values from fill(). */
static float *buffer(size_t n, float (*fill)(void), float **base)
{
    *base = malloc((n + 1) * sizeof **base);
    ck_assert_ptr_nonnull(*base);
    float *x = *base + 1;
    for (size_t i = 0; i < n; i++)
        x[i] = fill();
    return x;
}

static float sentinel(void) { return SENTINEL; }
static float nan_value(void) { return NAN; }

/* The matrices of one case and what C should become. */
typedef struct operands {
    const float *A, *B; /* inputs, leading dims lda, ldb, batch strides sa, sb */
    int lda, ldb, ldc;
    size_t sa, sb, sc;
    const float *C0;    /* C before the call (NaN where beta = 0) */
    float *C;           /* the output under test */
    const double *want; /* the reference result, and its tolerance, per element */
    const double *tol;
} operands;

/* Run c with `threads` threads and check every element of C (started from
 * C0) against want within tol, and that padding and gaps are untouched. */
static void run_and_verify(const gemm_case *c, const operands *o, int threads)
{
    const size_t sc = o->sc, ldc = o->ldc, nc = sc * c->batch;
    float *C = o->C;
    memcpy(C, o->C0, nc * sizeof *C);
    omp_set_num_threads(threads);
    /* Through the public entry (qkv/gemm.h), whose checks let every case pass. */
    ck_assert_msg(qkv_gemm(c->batch, c->ta, c->tb, c->M, c->N, c->K, c->alpha, o->A, o->lda, o->sa,
                           o->B, o->ldb, o->sb, c->beta, C, o->ldc, sc) == 0,
                  "%s", qkv_last_error());
    for (size_t at = 0; at < nc; at++) {
        size_t b = at / sc, i = at % sc / ldc, j = at % sc % ldc;
        bool inside = i < (size_t)c->M && j < (size_t)c->N;
        bool ok = inside ? fabs(C[at] - o->want[at]) <= o->tol[at]
                         : (c->beta == 0 ? isnan(C[at]) : C[at] == SENTINEL);
        if (!ok)
            ck_abort_msg("%s %s%s batch %d M %d N %d K %d pad %d gap %zu%s alpha %g beta %g, "
                         "%d threads: C[%zu][%zu][%zu] = %.9g, want %s%.9g (tolerance %g)",
                         qkv__gemm_active_path()->name, c->ta ? "T" : "N", c->tb ? "T" : "N",
                         c->batch, c->M, c->N, c->K, c->pad, c->gap,
                         c->shared_b ? " shared B" : "", (double)c->alpha, (double)c->beta,
                         threads, b, i, j, (double)C[at], inside ? "" : "untouched ",
                         inside ? o->want[at] : (double)C[at], inside ? o->tol[at] : 0);
    }
}

/* Check c, as given, on every path the CPU has at 1 and 2 threads against a
 * double reference, within 4(K+2)·eps·(|alpha|·Σ|a·b| + |beta·c|). */
static void check_case(const gemm_case *c)
{
    int ra = c->ta ? c->K : c->M, ca = c->ta ? c->M : c->K; /* A stored ra×ca */
    int rb = c->tb ? c->N : c->K, cb = c->tb ? c->K : c->N;
    int lda = ca + c->pad, ldb = cb + c->pad, ldc = c->N + c->pad;
    size_t sa = (size_t)ra * lda + c->gap, sb = c->shared_b ? 0 : (size_t)rb * ldb + c->gap;
    size_t sc = (size_t)c->M * ldc + c->gap;
    size_t na = sa * c->batch, nb = c->shared_b ? (size_t)rb * ldb : sb * c->batch;
    size_t nc = sc * c->batch;
    float *fa, *fb, *fc, *f0;
    float *A = buffer(na, uniform, &fa), *B = buffer(nb, uniform, &fb);
    /* beta = 0 must ignore C entirely, NaN included */
    float *C0 = buffer(nc, c->beta == 0 ? nan_value : sentinel, &f0), *C = buffer(nc, nan_value, &fc);
    double *want = calloc(nc, sizeof *want), *tol = calloc(nc, sizeof *tol);
    ck_assert(want && tol);
    for (int b = 0; b < c->batch; b++)
        for (int i = 0; i < c->M; i++)
            for (int j = 0; j < c->N; j++) {
                size_t at = b * sc + (size_t)i * ldc + j;
                C0[at] = c->beta == 0 ? NAN : uniform();
                double s = 0, mag = 0;
                for (int p = 0; p < c->K; p++) {
                    double x = op_at(A + b * sa, lda, c->ta, i, p);
                    double y = op_at(B + b * sb, ldb, c->tb, p, j);
                    s += x * y;
                    mag += fabs(x * y);
                }
                double old = c->beta == 0 ? 0 : (double)c->beta * C0[at];
                want[at] = c->alpha * s + old;
                tol[at] = 4.0 * (c->K + 2) * FLT_EPSILON * (fabs(c->alpha) * mag + fabs(old)) + 1e-30;
            }
    operands o = {A, B, lda, ldb, ldc, sa, sb, sc, C0, C, want, tol};
    for (int path = 0; path < QKV__CPU_N_PATHS; path++)
        if (qkv_cpu_use(path) == 0)
            for (int threads = 1; threads <= 2; threads++)
                run_and_verify(c, &o, threads);
    qkv_cpu_use(QKV_CPU_DEFAULT);
    free(fa), free(fb), free(fc), free(f0), free(want), free(tol);
}

/* Check c in all four transpose forms. */
static void check_all_forms(gemm_case c)
{
    for (int form = 0; form < 4; form++) {
        c.ta = form & 1, c.tb = form & 2;
        check_case(&c);
    }
}

START_TEST(test_edge_sizes)
{
    qkv_rng_seed(&rng, 1);
    /* 1×1, K = 1, odd sizes, sizes one off every tile size (4, 6, 8, 12, 16, 32) */
    static const int shapes[][3] = {
        {1, 1, 1},   {1, 1, 7},    {7, 1, 1},    {1, 9, 1},    {3, 5, 1},     {13, 17, 19},
        {12, 32, 8}, {11, 31, 9},  {13, 33, 10}, {6, 16, 5},   {7, 17, 3},    {5, 15, 2},
        {4, 8, 4},   {25, 65, 40}, {64, 64, 32}, {65, 63, 31}, {37, 100, 70}, {100, 5, 33},
        /* up to 4 rows: the NT form's dot products (K with and without a vector tail) */
        {1, 65, 128}, {2, 70, 130}, {3, 9, 33},   {4, 40, 16},  {4, 13, 200},  {5, 21, 48},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        gemm_case c = {1, shapes[s][0], shapes[s][1], shapes[s][2], false, false, 0, 0, false, 1, 0};
        check_all_forms(c);
        c.pad = 3; /* lda, ldb, ldc larger than the rows */
        c.alpha = -0.5f, c.beta = 1;
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_alpha_beta)
{
    qkv_rng_seed(&rng, 2);
    static const float values[][2] = {{1, 0}, {1, 1}, {2.5f, 0}, {-1, 1}, {0.5f, -0.75f}, {1, 2}};
    for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
        gemm_case c = {1, 29, 45, 23, false, false, 1, 0, false, values[v][0], values[v][1]};
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_zero_k_or_alpha_scales_c)
{
    qkv_rng_seed(&rng, 3);
    gemm_case c = {2, 9, 10, 0, false, false, 2, 3, false, 1, 0.5f}; /* K = 0: C = beta·C */
    check_all_forms(c);
    c.beta = 0; /* ... and beta = 0 zeroes it, NaN or not */
    check_all_forms(c);
    c.K = 5, c.alpha = 0, c.beta = -2; /* alpha = 0: A·B is not even read */
    check_all_forms(c);
}
END_TEST

START_TEST(test_blocking_passes)
{
    /* K and N beyond one cache block: several passes over k accumulate into C */
    qkv_rng_seed(&rng, 4);
    gemm_case c = {1, 50, 600, 900, false, false, 1, 0, false, 1, 0};
    check_all_forms(c);
    c.beta = 0.5f, c.alpha = 2;
    check_all_forms(c);
    /* few columns and two passes over k of at most 256: a transposed A read
     * in place from the second pass's rows (AVX-512, AVX2), a ragged bottom edge */
    gemm_case d = {1, 29, 100, 500, false, false, 1, 0, false, 1, 0.5f};
    check_all_forms(d);
}
END_TEST

START_TEST(test_thread_split)
{
    /* big enough to be split across threads, by rows, by columns, or by batch */
    qkv_rng_seed(&rng, 5);
    static const int shapes[][4] = {
        {1, 200, 60, 100}, {1, 5, 700, 300}, {3, 70, 50, 120}, {4, 64, 64, 96}, {2, 1, 2000, 600},
        /* the lm head: two full panels and a one-column (narrow) tile, cut by rows or columns */
        {1, 768, 65, 128}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        gemm_case c = {shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], false, false, 2, 5,
                       false, 1, 0.25f};
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_same_bits_on_any_thread_count)
{
    /* Each element sums over k in the same order however C is cut, so a run
     * is reproducible bit for bit whatever the thread count. */
    static const int shapes[][4] = {{1, 203, 61, 700}, {1, 7, 1650, 190}, {3, 70, 50, 120},
                                    /* few rows, cut by columns; 14 rows cut 12 + 2 */
                                    {1, 2, 5000, 130}, {1, 14, 32, 3000},
                                    /* the lm head's 65 columns: the narrow tile on the right */
                                    {1, 768, 65, 128}};
    qkv_rng_seed(&rng, 9);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int batch = shapes[s][0], M = shapes[s][1], N = shapes[s][2], K = shapes[s][3];
        size_t na = (size_t)batch * M * K, nb = (size_t)batch * K * N, nc = (size_t)batch * M * N;
        float *fa, *fb, *f1, *f2;
        float *A = buffer(na, uniform, &fa), *B = buffer(nb, uniform, &fb);
        float *C1 = buffer(nc, uniform, &f1), *C2 = buffer(nc, sentinel, &f2);
        memcpy(C2, C1, nc * sizeof *C2);
        for (int form = 0; form < 4; form++) {
            bool ta = form & 1, tb = form & 2;
            for (int t = 1; t <= 2; t++) {
                omp_set_num_threads(t);
                qkv__gemm(batch, ta, tb, M, N, K, 0.5f, A, ta ? M : K, (size_t)M * K, B, tb ? K : N,
                          (size_t)K * N, 1, t == 1 ? C1 : C2, N, (size_t)M * N);
            }
            ck_assert_msg(memcmp(C1, C2, nc * sizeof *C1) == 0, "shape %zu form %d differs", s, form);
        }
        free(fa), free(fb), free(f1), free(f2);
    }
}
END_TEST

START_TEST(test_batched_strides)
{
    qkv_rng_seed(&rng, 6);
    gemm_case c = {5, 17, 40, 12, false, false, 1, 7, false, 1, 0}; /* gaps between entries */
    check_all_forms(c);
    c.shared_b = true; /* stride_b = 0 */
    check_all_forms(c);
    c = (gemm_case){48, 64, 64, 32, false, false, 0, 0, false, 0.125f, 0}; /* attention heads */
    check_all_forms(c);
}
END_TEST

START_TEST(test_random_shapes)
{
    qkv_rng_seed(&rng, 7);
    for (int trial = 0; trial < 30; trial++) {
        gemm_case c = {1, 1, 1, 1, false, false, 0, 0, false, 1, 0};
        c.batch = 1 + (int)qkv_rng_below(&rng, 3);
        c.M = 1 + (int)qkv_rng_below(&rng, 80);
        c.N = 1 + (int)qkv_rng_below(&rng, 80);
        c.K = 1 + (int)qkv_rng_below(&rng, 80);
        c.pad = (int)qkv_rng_below(&rng, 3);
        c.gap = qkv_rng_below(&rng, 4);
        c.shared_b = qkv_rng_below(&rng, 2) == 0;
        c.alpha = uniform();
        c.beta = qkv_rng_below(&rng, 2) ? 0 : uniform();
        check_all_forms(c);
    }
}
END_TEST

START_TEST(test_no_allocation_after_first_call)
{
    enum { M = 300, N = 200, K = 500 };
    float *A = calloc((size_t)M * K, sizeof *A), *B = calloc((size_t)K * N, sizeof *B);
    float *C = calloc((size_t)M * N, sizeof *C);
    ck_assert(A && B && C);
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        qkv__gemm(1, false, true, M, N, K, 1, A, K, 0, B, K, 0, 0, C, N, 0);
        uint64_t before = qkv_alloc_count();
        for (int rep = 0; rep < 5; rep++) {
            qkv__gemm(1, false, true, M, N, K, 1, A, K, 0, B, K, 0, 0, C, N, 0);
            qkv__gemm(1, true, false, M / 2, N, K, 1, A, M / 2, 0, B, N, 0, 1, C, N, 0);
            qkv__gemm(4, false, false, 16, 16, 16, 1, A, 16, 256, B, 16, 256, 0, C, 16, 256);
        }
        ck_assert_uint_eq(qkv_alloc_count(), before);
    }
    free(A), free(B), free(C);
}
END_TEST

static void check_all_forms_of(void *c) { check_all_forms(*(const gemm_case *)c); }

START_TEST(test_works_without_memory)
{
    /* With no memory for packing buffers gemm falls back to a small stack buffer. */
    qkv_rng_seed(&rng, 8);
    gemm_case c = {2, 40, 70, 150, false, false, 1, 0, false, 1, 0.5f};
    qkv_test_without_memory(check_all_forms_of, &c);
}
END_TEST

START_TEST(test_force_path)
{
    ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
    ck_assert_str_eq(qkv__gemm_active_path()->name, "portable");
    ck_assert_int_eq(qkv_cpu_use(QKV__CPU_N_PATHS), -1);
    ck_assert_int_eq(qkv_cpu_use(QKV_CPU_DEFAULT), 0);
    int fastest = 0; /* the default is the fastest path the CPU supports */
    while (!qkv_cpu_supported(fastest))
        fastest++;
    const char *name = qkv__gemm_active_path()->name;
    qkv_cpu_use(fastest);
    ck_assert_str_eq(qkv__gemm_active_path()->name, name);
    printf("test_gemm: kernels run here:");
    for (int path = 0; path < QKV__CPU_N_PATHS; path++)
        if (qkv_cpu_use(path) == 0)
            printf(" %s", qkv__gemm_active_path()->name);
    printf("\n");
    qkv_cpu_use(QKV_CPU_DEFAULT);
}
END_TEST

static Suite *gemm_suite(void)
{
    Suite *s = suite_create("gemm");
    TCase *tc = tcase_create("gemm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_edge_sizes);
    tcase_add_test(tc, test_alpha_beta);
    tcase_add_test(tc, test_zero_k_or_alpha_scales_c);
    tcase_add_test(tc, test_blocking_passes);
    tcase_add_test(tc, test_thread_split);
    tcase_add_test(tc, test_batched_strides);
    tcase_add_test(tc, test_same_bits_on_any_thread_count);
    tcase_add_test(tc, test_random_shapes);
    tcase_add_test(tc, test_no_allocation_after_first_call);
    tcase_add_test(tc, test_works_without_memory);
    tcase_add_test(tc, test_force_path);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(gemm_suite)
