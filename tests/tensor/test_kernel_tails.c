/* The kernels at sizes that reach every block, tail and thread split they
 * have (issue 33): widths one off each vector width (8 and 16 floats) and
 * the norms' 32-column blocks, rows that two threads split unevenly, on
 * every vector path this CPU runs. test_paths.c compares the paths at one
 * width of whole vectors (128); here each path's row kernels meet ragged
 * edges, and a graph of the fused ops runs forward and backward at 1 and 2
 * threads: the same bits on each path, the portable path's within float
 * rounding. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/kernels/cpu.h"
#include "tensor/kernels/hot.h"
#include "testing.h"

/* Widths around 8 and 16 lanes and 32-column blocks, and wider than two.
 * The hot kernels' buffers hold some things per row or per column (a
 * layernorm's mean and rstd, its bias after w, its dw and db blocks of 32),
 * so a width of 1 does not fit them. */
static const int widths[] = {2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 97, 129};

enum { GUARD = 32, BUFFERS = 5 };

/* Rows of `cols`: at least 5, and enough that those per-row and per-column
 * things fit in n = rows x cols (2 x rows, 2 x cols + 64). */
static int rows_of(int cols) { return 5 + 128 / cols; }

/* Values a guard holds: a kernel writing past its n values changes it. */
#define GUARD_VALUE ((qkv_real)-12345.5)

/* Five buffers of n values each, every one followed by GUARD guard values,
 * filled from one seed: a..d in [-1, 1), e in [0.1, 1) (hot.h). */
static void fill(qkv_real *mem, size_t n)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 33);
    for (int b = 0; b < BUFFERS; b++)
        for (size_t i = 0; i < n + GUARD; i++)
            mem[b * (n + GUARD) + i] = i >= n  ? GUARD_VALUE
                                       : b < 4 ? (qkv_real)(2 * qkv_rng_uniform(&rng) - 1)
                                               : (qkv_real)(0.1 + 0.9 * qkv_rng_uniform(&rng));
}

static qkv__hot_data data_in(qkv_real *mem, size_t n, int cols)
{
    size_t s = n + GUARD;
    return (qkv__hot_data){mem, mem + s, mem + 2 * s, mem + 3 * s, mem + 4 * s, n, cols};
}

/* Whether kernel k's work grows with n: the fixed-size product (64x64x64)
 * does not, and test_gemm.c checks its edges. */
static bool scales_with_n(const qkv__hot_kernel *k)
{
    qkv__hot_data one = {.n = 64, .cols = 8}, two = {.n = 128, .cols = 8};
    return k->work(&one) != k->work(&two);
}

START_TEST(test_row_kernels_at_ragged_widths)
{
    /* Every row kernel at every width, on every path, within float rounding
     * of the portable path's results, and nothing written past the rows. */
    size_t most = 0;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        if ((size_t)rows_of(widths[w]) * widths[w] > most)
            most = (size_t)rows_of(widths[w]) * widths[w];
    size_t words = BUFFERS * (most + GUARD);
    qkv_real *want = malloc(words * sizeof *want), *got = malloc(words * sizeof *got);
    ck_assert(want && got);
    int n_kernels, compared = 0;
    const qkv__hot_kernel *const *kernels = qkv__hot_kernels(&n_kernels);
    for (int ki = 0; ki < n_kernels; ki++) {
        const qkv__hot_kernel *k = kernels[ki];
        if (!scales_with_n(k))
            continue;
        for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
            int cols = widths[w];
            size_t n = (size_t)rows_of(cols) * cols, all = BUFFERS * (n + GUARD);
            fill(want, n);
            qkv__hot_data dw = data_in(want, n, cols);
            ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
            k->run(&dw);
            for (int p = 0; p < QKV__CPU_N_PATHS; p++) {
                if (qkv_cpu_use(p) != 0)
                    continue;
                fill(got, n);
                qkv__hot_data dg = data_in(got, n, cols);
                k->run(&dg);
                double worst = 0;
                size_t at = 0;
                for (size_t i = 0; i < all; i++) {
                    bool guard = i % (n + GUARD) >= n;
                    double err = guard ? (got[i] == GUARD_VALUE ? 0 : INFINITY)
                                       : fabs((double)got[i] - want[i]) / (1 + fabs((double)want[i]));
                    if (!(err <= worst)) /* NaN counts as the worst */
                        worst = err, at = i;
                }
                ck_assert_msg(worst <= 1e-5, "%s on %s, %d columns: value %zu (buffer %zu, %s) is "
                              "%g, portable %g", k->name, qkv_cpu_name(p), cols, at, at / (n + GUARD),
                              at % (n + GUARD) >= n ? "past its end" : "inside",
                              (double)got[at], (double)want[at]);
                compared++;
            }
        }
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    printf("test_kernel_tails: %d kernel x width x path runs matched the portable path\n",
           compared);
    free(want);
    free(got);
}
END_TEST

/* The fused ops' graph, made afresh: what one forward and backward computed. */
enum { N_PARAMS = 10 }; /* the graph's parameters */

typedef struct graph_out {
    double loss;
    qkv_real *values; /* every parameter's gradient, then the attention's output (malloc'd) */
    size_t n;
    size_t ends[N_PARAMS + 1]; /* where each of them ends in values */
} graph_out;

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    ck_assert_qkv(t);
    qkv_set_requires_grad(t, true);
    return t;
}

/* rows x cols through layernorm, rmsnorm, a Linear (bias, GELU), softmax,
 * SiLU and a Linear to `cols` logits, cross-entropy; and causal attention of
 * 2 x 3 heads, `rows` positions of `cols` features, into the same loss: the
 * gradients of every parameter and the attention's output. */
static graph_out run_graph(int rows, int cols)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 34);
    qkv_arena *a = qkv_arena_new(1 << 20);
    ck_assert_qkv(a);
    int hidden = cols + 13;
    qkv_tensor *p[] = {
        param(a, &rng, QKV_SHAPE(rows, cols)),    param(a, &rng, QKV_SHAPE(cols)),
        param(a, &rng, QKV_SHAPE(cols)),          param(a, &rng, QKV_SHAPE(cols)),
        param(a, &rng, QKV_SHAPE(hidden, cols)),  param(a, &rng, QKV_SHAPE(hidden)),
        param(a, &rng, QKV_SHAPE(cols, hidden)),  param(a, &rng, QKV_SHAPE(2, 3, rows, cols)),
        param(a, &rng, QKV_SHAPE(2, 3, rows, cols)), param(a, &rng, QKV_SHAPE(2, 3, rows, cols)),
    };
    _Static_assert(sizeof p / sizeof *p == N_PARAMS, "N_PARAMS counts the parameters");
    int32_t *targets = malloc((size_t)rows * sizeof *targets);
    ck_assert(targets);
    for (int i = 0; i < rows; i++)
        targets[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)cols);
    qkv_tensor *h = qkv_layernorm(a, p[0], p[1], p[2], (qkv_real)1e-5);
    h = qkv_rmsnorm(a, h, p[3], (qkv_real)1e-5);
    h = qkv_gelu(a, qkv_affine(a, h, p[4], p[5]));
    h = qkv_silu(a, qkv_softmax(a, h));
    qkv_tensor *logits = qkv_affine(a, h, p[6], NULL);
    qkv_tensor *att = qkv_attention(a, p[7], p[8], p[9], &(qkv_mask){.causal = true}, 0, NULL,
                                    NULL);
    qkv_tensor *loss = qkv_add(a, qkv_cross_entropy(a, logits, targets, -1),
                               qkv_mean(a, qkv_mul(a, att, att)));
    ck_assert_qkv(loss);
    ck_assert_msg(qkv_backward_retain_graph(a, loss) == 0, "%s", qkv_last_error());
    graph_out g = {.loss = loss->data[0]};
    for (int i = 0; i < N_PARAMS; i++)
        g.n += p[i]->size;
    g.n += att->size;
    g.values = malloc(g.n * sizeof *g.values);
    ck_assert(g.values);
    size_t at = 0;
    for (int i = 0; i < N_PARAMS; i++) {
        memcpy(g.values + at, p[i]->grad, p[i]->size * sizeof *g.values);
        g.ends[i] = at += p[i]->size;
    }
    memcpy(g.values + at, att->data, att->size * sizeof *g.values);
    g.ends[N_PARAMS] = g.n;
    free(targets);
    qkv_arena_free(&a);
    return g;
}

START_TEST(test_fused_ops_at_ragged_sizes_any_thread_count)
{
    /* On every path: 1 and 2 threads give the same bits; and every gradient
     * is the portable path's within float rounding, relative to the largest
     * of its tensor (a weight's gradient sums many rows, and small ones are
     * what is left of cancelling terms): 1e-4 allows the sums' order, not a
     * wrong tail. */
    static const int sizes[][2] = {{37, 33}, {23, 70}, {9, 129}, {64, 17}, {3, 5}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int rows = sizes[s][0], cols = sizes[s][1];
        ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
        omp_set_num_threads(1);
        graph_out want = run_graph(rows, cols);
        for (int p = 0; p < QKV__CPU_N_PATHS; p++) {
            if (qkv_cpu_use(p) != 0)
                continue;
            omp_set_num_threads(1);
            graph_out one = run_graph(rows, cols);
            omp_set_num_threads(2);
            graph_out two = run_graph(rows, cols);
            ck_assert_msg(one.n == two.n && memcmp(one.values, two.values,
                                                   one.n * sizeof *one.values) == 0 &&
                              one.loss == two.loss,
                          "%s, %d x %d: 1 and 2 threads differ", qkv_cpu_name(p), rows, cols);
            double worst = 0;
            size_t at = 0;
            for (size_t t = 0, i = 0; t <= N_PARAMS; t++) {
                double scale = 1e-30;
                for (size_t j = i; j < want.ends[t]; j++)
                    scale = fmax(scale, fabs((double)want.values[j]));
                for (; i < want.ends[t]; i++) {
                    double err = fabs((double)one.values[i] - want.values[i]) / scale;
                    if (!(err <= worst))
                        worst = err, at = i;
                }
            }
            ck_assert_msg(worst <= 1e-4 && fabs(one.loss - want.loss) <= 1e-5 * fabs(want.loss),
                          "%s, %d x %d: value %zu is %g, portable %g; loss %.9g, portable %.9g",
                          qkv_cpu_name(p), rows, cols, at, (double)one.values[at],
                          (double)want.values[at], one.loss, want.loss);
            free(one.values);
            free(two.values);
        }
        free(want.values);
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    omp_set_num_threads(omp_get_num_procs());
}
END_TEST

static Suite *kernel_tails_suite(void)
{
    Suite *s = suite_create("kernel_tails");
    TCase *tc = tcase_create("kernel_tails");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_row_kernels_at_ragged_widths);
    tcase_add_test(tc, test_fused_ops_at_ragged_sizes_any_thread_count);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(kernel_tails_suite)
