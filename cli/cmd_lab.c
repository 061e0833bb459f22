/* qkv lab: attention as the textbook defines it, printed step by step.
 *   example  the worked 3-token example: scores, scaling, softmax, weighted sum
 *   scaling  what happens without the 1/sqrt(d): saturated softmax, vanishing gradients
 *   mask     the causal weight matrix: future keys get exactly zero weight */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "qkv/qkv.h"
#include "runtime.h"

/* Print a matrix (the last two dims of t) with a title. */
static void print_matrix(const char *title, const qkv_tensor *t)
{
    int rows = t->shape[t->ndim - 2], cols = t->shape[t->ndim - 1];
    printf("%s\n", title);
    for (int i = 0; i < rows; i++) {
        printf("  [");
        for (int j = 0; j < cols; j++)
            printf(j ? " %8.4f" : "%8.4f", (double)t->data[i * cols + j]);
        printf(" ]\n");
    }
}

/* Print "qkv lab: WHAT: <last error>" and return 1. */
static int fail(const char *what)
{
    fprintf(stderr, "qkv lab: %s: %s\n", what, qkv_last_error());
    return 1;
}

/* qkv lab example: the 3-token example through each step, then checked against the fused core. */
static int lab_example(int argc, char **argv)
{
    static const arg_cmd cmd = {"lab example", "The worked example: Q = K = [[1,0],[0,1],[1,1]], "
                                "V = [[1,2],[3,4],[5,6]], d = 2.", "", NULL, 0, 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    qkv_arena *a = qkv_arena_new(1 << 16);
    if (!a)
        return fail("arena");
    const qkv_real qk[] = {1, 0, 0, 1, 1, 1}, vv[] = {1, 2, 3, 4, 5, 6};
    qkv_tensor *q = qkv_from_array(a, QKV_SHAPE(1, 3, 2), qk);
    qkv_tensor *k = qkv_from_array(a, QKV_SHAPE(1, 3, 2), qk);
    qkv_tensor *v = qkv_from_array(a, QKV_SHAPE(1, 3, 2), vv);
    print_matrix("Queries Q (one row per token: what each token is looking for)", q);
    print_matrix("Keys K (what each token offers to be matched on)", k);
    print_matrix("Values V (the content each token hands over)", v);

    /* The steps, one op each, exactly as the formula reads. */
    qkv_tensor *scores = qkv_matmul(a, q, k, false, true);
    print_matrix("1. Scores Q·Kᵀ (row i: how well query i matches each key)", scores);
    qkv_tensor *scaled = qkv_scale(a, scores, (qkv_real)(1 / sqrt(2.0)));
    print_matrix("2. Scaled by 1/√d = 1/√2 (keeps the scores' spread near 1 for any d)", scaled);
    qkv_tensor *weights = qkv_softmax(a, scaled);
    print_matrix("3. Softmax over each row (each query's weights sum to 1)", weights);
    qkv_tensor *out = qkv_matmul(a, weights, v, false, false);
    print_matrix("4. Output = weights · V (each row a weighted average of the values)", out);
    if (!out) {
        qkv_arena_free(&a);
        return fail("example");
    }

    /* The fused attention core must agree with the step-by-step version. */
    qkv_tensor *fused_w = NULL;
    qkv_tensor *fused = qkv_attention(a, q, k, v, NULL, 0, NULL, &fused_w);
    if (!fused) {
        qkv_arena_free(&a);
        return fail("attention");
    }
    double diff = 0;
    for (size_t i = 0; i < out->size; i++)
        diff = fmax(diff, fabs((double)fused->data[i] - (double)out->data[i]));
    printf("\nThe fused core qkv_attention gives the same output (largest difference %.2g).\n", diff);
    qkv_arena_free(&a);
    return 0;
}

/* Per-row statistics of softmax(scale · S) for a T×T score matrix S. */
typedef struct row_stats {
    double score_std;  /* std of the (scaled) scores */
    double one_hot;    /* fraction of rows whose largest weight is above 0.99 */
    double entropy;    /* mean row entropy of the weights, in nats */
    double grad_med;   /* median over rows of |d loss / d (scaled scores)| for a random upstream gradient */
    double grad_min;   /* smallest such row norm */
} row_stats;

/* Softmax through the library, backpropagating a fixed random upstream
 * gradient, so the gradient norms are the ones training would see. */
static int softmax_stats(qkv_arena *a, const qkv_tensor *s, qkv_real scale, int T, uint64_t seed,
                         row_stats *st)
{
    qkv_tensor *x = qkv_from_array(a, s->ndim, s->shape, s->data);
    if (!x)
        return -1;
    qkv_set_requires_grad(x, true);
    qkv_tensor *w = qkv_softmax_masked(a, x, NULL, scale);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    qkv_tensor *g = qkv_randn(a, QKV_SHAPE(T, T), 1, &rng);
    qkv_tensor *loss = qkv_sum(a, qkv_mul(a, w, g));
    if (!loss || qkv_backward(a, loss) < 0)
        return -1;
    double sum = 0, sq = 0, one_hot = 0, ent = 0;
    double *norms = malloc((size_t)T * sizeof *norms);
    if (!norms)
        return qkv_set_error("out of memory");
    for (int i = 0; i < T; i++) {
        double mx = 0, h = 0, gn = 0;
        for (int j = 0; j < T; j++) {
            double sc = scale * (double)s->data[i * T + j], p = w->data[i * T + j];
            sum += sc;
            sq += sc * sc;
            mx = fmax(mx, p);
            if (p > 0)
                h -= p * log(p);
            gn += (double)x->grad[i * T + j] * x->grad[i * T + j];
        }
        one_hot += mx > 0.99;
        ent += h;
        norms[i] = sqrt(gn) / scale; /* w.r.t. the softmax's own input, the scaled scores */
    }
    double n = (double)T * T, mean = sum / n;
    st->score_std = sqrt(sq / n - mean * mean);
    st->one_hot = one_hot / T;
    st->entropy = ent / T;
    st->grad_med = cli_median(norms, T); /* sorts norms, so norms[0] is the smallest */
    st->grad_min = norms[0];
    free(norms);
    return 0;
}

/* qkv lab scaling: softmax statistics with and without the 1/sqrt(d), side by side. */
static int lab_scaling(int argc, char **argv)
{
    int d = 512, T = 64, seed = 1337;
    const arg_spec specs[] = {
        {"--d", ARG_INT, &d, 1, 65536, "D", "query/key dimension"},
        {"--T", ARG_INT, &T, 2, 4096, "T", "number of tokens (rows and columns of the score matrix)"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "random seed for q and k"},
    };
    const arg_cmd cmd = {"lab scaling",
                         "Remove the sqrt(d): with q, k ~ N(0,1), scores Q·Kᵀ have std sqrt(d), the "
                         "softmax saturates to one-hot rows and its gradient vanishes.",
                         "", specs, (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    qkv_arena *a = qkv_arena_new((size_t)T * T * sizeof(qkv_real) * 16 + (size_t)T * d * 8);
    if (!a)
        return fail("arena");
    qkv_rng rng;
    qkv_rng_seed(&rng, (uint64_t)seed);
    qkv_tensor *q = qkv_randn(a, QKV_SHAPE(T, d), 1, &rng);
    qkv_tensor *k = qkv_randn(a, QKV_SHAPE(T, d), 1, &rng);
    qkv_tensor *s = qkv_matmul(a, q, k, false, true);
    row_stats st[2];
    if (!s || softmax_stats(a, s, (qkv_real)(1 / sqrt((double)d)), T, (uint64_t)seed + 1, &st[0]) < 0 ||
        softmax_stats(a, s, 1, T, (uint64_t)seed + 1, &st[1]) < 0) {
        qkv_arena_free(&a);
        return fail("scaling");
    }
    printf("q, k ~ N(0,1), d = %d, T = %d, seed %d; softmax over each row of the %dx%d scores\n\n", d,
           T, seed, T, T);
    printf("%-44s %14s %14s\n", "", "QK^T/sqrt(d)", "QK^T (no sqrt)");
    printf("%-44s %14.3f %14.3f\n", "score std", st[0].score_std, st[1].score_std);
    printf("%-44s %13.1f%% %13.1f%%\n", "rows with largest weight > 0.99", 100 * st[0].one_hot,
           100 * st[1].one_hot);
    printf("%-44s %14.3f %14.3f\n", "mean row entropy (nats; uniform = ln T)", st[0].entropy,
           st[1].entropy);
    printf("%-44s %14.3g %14.3g\n", "median row gradient norm through softmax", st[0].grad_med,
           st[1].grad_med);
    printf("%-44s %14.3g %14.3g\n", "smallest row gradient norm", st[0].grad_min, st[1].grad_min);
    printf("\nuniform entropy ln %d = %.3f; the median gradient is %.0fx smaller without scaling.\n", T,
           log((double)T), st[0].grad_med / st[1].grad_med);
    qkv_arena_free(&a);
    return 0;
}

/* qkv lab mask: the causal weight matrix of random q, k, v, with its row sums. */
static int lab_mask(int argc, char **argv)
{
    int T = 6, d = 4, seed = 7;
    const arg_spec specs[] = {
        {"--T", ARG_INT, &T, 1, 32, "T", "number of tokens"},
        {"--d", ARG_INT, &d, 1, 256, "D", "head dimension"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "random seed for q, k, v"},
    };
    const arg_cmd cmd = {"lab mask",
                         "The causal mask: scores of future keys are set to -inf before the softmax, "
                         "so their weights are exactly 0.",
                         "", specs, (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    qkv_arena *a = qkv_arena_new(1 << 16);
    if (!a)
        return fail("arena");
    qkv_rng rng;
    qkv_rng_seed(&rng, (uint64_t)seed);
    qkv_tensor *q = qkv_randn(a, QKV_SHAPE(1, T, d), 1, &rng);
    qkv_tensor *k = qkv_randn(a, QKV_SHAPE(1, T, d), 1, &rng);
    qkv_tensor *v = qkv_randn(a, QKV_SHAPE(1, T, d), 1, &rng);
    qkv_mask causal = {.causal = true};
    qkv_tensor *w = NULL;
    if (!qkv_attention(a, q, k, v, &causal, 0, NULL, &w)) {
        qkv_arena_free(&a);
        return fail("mask");
    }
    printf("Causal attention weights, T = %d (row = query position, column = key position).\n"
           "Query i may look at keys 0..i only; every row still sums to 1.\n\n      ", T);
    for (int j = 0; j < T; j++)
        printf("  key %-3d", j);
    printf("   row sum\n");
    for (int i = 0; i < T; i++) {
        double sum = 0;
        printf("q %-3d ", i);
        for (int j = 0; j < T; j++) {
            double p = w->data[i * T + j];
            sum += p;
            if (p == 0)
                printf("  %7s", "0");
            else
                printf("  %7.4f", p);
        }
        printf("   %.6f\n", sum);
    }
    qkv_arena_free(&a);
    return 0;
}

int cmd_lab(int argc, char **argv)
{
    static const cli_command labs[] = {
        {"example", lab_example, "the worked example, step by step"},
        {"scaling", lab_scaling, "the 'remove the sqrt(d)' experiment"},
        {"mask", lab_mask, "the causal weight matrix for a small example"},
    };
    static const cli_menu menu = {.prog = "qkv lab", .noun = "lab", .cmds = labs,
                                  .n_cmds = (int)(sizeof labs / sizeof labs[0])};
    return cli_dispatch(&menu, argc, argv);
}
