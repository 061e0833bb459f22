/* Muon against its definition: the orthogonalisation against a plain double
 * version of the formula and its singular values in the quintic's band, the
 * grouping rule on a GPT, two steps against a plain step written from the
 * formula (Muon's matrices and AdamW's rest), the same bytes at 1 and 2
 * threads, and a run saved and resumed bit-exactly. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include "testing.h"
#include "train/internal.h"

/* The orthogonalisation from qkv/optim.h's formula, in double and without
 * the transpose (the polynomial is the same either way): X = G/‖G‖_F, then
 * 5 times X ← aX + b(XXᵀ)X + c(XXᵀ)²X. x is r×c. */
static void plain_ns(const double *g, int r, int c, double *x)
{
    const double a = 3.4445, b = -4.7750, cc = 2.0315;
    double ss = 0;
    for (int i = 0; i < r * c; i++)
        ss += g[i] * g[i];
    for (int i = 0; i < r * c; i++)
        x[i] = g[i] / sqrt(ss);
    double *A = calloc((size_t)(r * r), sizeof *A), *A2 = calloc((size_t)(r * r), sizeof *A2);
    double *y = calloc((size_t)(r * c), sizeof *y);
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                A[i * r + j] = 0;
                for (int k = 0; k < c; k++)
                    A[i * r + j] += x[i * c + k] * x[j * c + k];
            }
        for (int i = 0; i < r; i++)
            for (int j = 0; j < r; j++) {
                A2[i * r + j] = 0;
                for (int k = 0; k < r; k++)
                    A2[i * r + j] += A[i * r + k] * A[k * r + j];
            }
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++) {
                double v = a * x[i * c + j];
                for (int k = 0; k < r; k++)
                    v += (b * A[i * r + k] + cc * A2[i * r + k]) * x[k * c + j];
                y[i * c + j] = v;
            }
        memcpy(x, y, (size_t)(r * c) * sizeof *x);
    }
    free(A);
    free(A2);
    free(y);
}

/* n normal draws of seed into a fresh array (as qkv_real and as double). */
static qkv_real *normals(uint64_t seed, int n, double *as_double)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    qkv_real *g = malloc((size_t)n * sizeof *g);
    for (int i = 0; i < n; i++) {
        g[i] = (qkv_real)qkv_rng_normal(&rng);
        if (as_double)
            as_double[i] = (double)g[i];
    }
    return g;
}

/* The shapes the suite orthogonalises: wide, tall (the transposed path), square. */
static const int SHAPES[][2] = {{12, 20}, {20, 12}, {7, 7}, {1, 9}, {9, 1}};

START_TEST(test_newton_schulz_is_the_formula)
{
    for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++) {
        int r = SHAPES[s][0], c = SHAPES[s][1];
        double *gd = malloc((size_t)(r * c) * sizeof *gd), *want = malloc((size_t)(r * c) * sizeof *want);
        qkv_real *g = normals(10 + s, r * c, gd), *out = malloc((size_t)(r * c) * sizeof *out);
        plain_ns(gd, r, c, want);
        ck_assert_int_eq(qkv_newton_schulz(g, r, c, out), 0);
        for (int i = 0; i < r * c; i++)
            ck_assert_msg(fabs(out[i] - want[i]) < 2e-5, "%dx%d [%d]: %.7g, the formula %.7g", r, c,
                          i, (double)out[i], want[i]);
        ck_assert_int_eq(qkv_newton_schulz(g, r, c, g), 0); /* in place: the same */
        ck_assert_mem_eq(g, out, (size_t)(r * c) * sizeof *g);
        free(gd);
        free(want);
        free(g);
        free(out);
    }
}
END_TEST

/* Whether the symmetric n×n matrix s·I + t·G is positive definite (its Cholesky factorisation exists). */
static bool positive_definite(const double *G, int n, double s, double t)
{
    double *L = calloc((size_t)(n * n), sizeof *L);
    bool ok = true;
    for (int j = 0; j < n && ok; j++)
        for (int i = j; i < n && ok; i++) {
            double v = t * G[i * n + j] + (i == j ? s : 0);
            for (int k = 0; k < j; k++)
                v -= L[i * n + k] * L[j * n + k];
            if (i == j)
                ok = v > 0, L[j * n + j] = sqrt(fmax(v, 0));
            else
                L[i * n + j] = v / L[j * n + j];
        }
    free(L);
    return ok;
}

/* Whether every singular value of the r×c matrix x lies in [lo, hi]: the
 * eigenvalues of its smaller Gram matrix G in [lo², hi²], i.e. G − lo²·I and
 * hi²·I − G positive definite. */
static bool singular_values_within(const qkv_real *x, int r, int c, double lo, double hi)
{
    int m = r < c ? r : c;
    double *G = calloc((size_t)(m * m), sizeof *G);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < (r < c ? c : r); k++)
                G[i * m + j] += r < c ? (double)x[i * c + k] * x[j * c + k]
                                      : (double)x[k * c + i] * x[k * c + j];
    bool ok = positive_definite(G, m, -lo * lo, 1) && positive_definite(G, m, hi * hi, -1);
    free(G);
    return ok;
}

/* Random matrices of aspect 2 (a square one's smallest singular value can be
 * too small for 5 steps to lift: that is the quintic's design, not a bug). */
START_TEST(test_newton_schulz_singular_values_near_1)
{
    const int shapes[][2] = {{32, 64}, {64, 32}, {16, 48}, {100, 40}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int r = shapes[s][0], c = shapes[s][1];
        qkv_real *g = normals(20 + s, r * c, NULL), *out = malloc((size_t)(r * c) * sizeof *out);
        ck_assert_int_eq(qkv_newton_schulz(g, r, c, out), 0);
        ck_assert_msg(singular_values_within(out, r, c, 0.6, 1.25),
                      "%dx%d: singular values outside [0.6, 1.25]", r, c);
        /* The check can fail: g itself is nowhere near orthogonal. */
        ck_assert(!singular_values_within(g, r, c, 0.6, 1.25));
        free(g);
        free(out);
    }
}
END_TEST

START_TEST(test_newton_schulz_same_bytes_at_1_and_2_threads)
{
    const int r = 96, c = 200;
    qkv_real *g = normals(3, r * c, NULL), *one = malloc((size_t)(r * c) * sizeof *one);
    qkv_real *two = malloc((size_t)(r * c) * sizeof *two);
    ck_assert_int_eq(qkv_set_threads(1), 0);
    ck_assert_int_eq(qkv_newton_schulz(g, c, r, one), 0); /* tall */
    ck_assert_int_eq(qkv_set_threads(2), 0);
    ck_assert_int_eq(qkv_newton_schulz(g, c, r, two), 0);
    ck_assert_mem_eq(one, two, (size_t)(r * c) * sizeof *one);
    free(g);
    free(one);
    free(two);
}
END_TEST

/* Muon orthogonalises the matrices of one shape together (one product for
 * all of them): each comes out the same bytes as alone, at 2 threads, where
 * the batch is shared out whole and a lone matrix is cut in pieces. */
START_TEST(test_newton_schulz_batched_is_each_alone)
{
    enum { COUNT = 3, R = 80, C = 24 }; /* tall: the transposed orientation too */
    const size_t n = (size_t)R * C;
    qkv_real *g = normals(5, COUNT * (int)n, NULL), *alone = malloc(COUNT * n * sizeof *alone);
    qkv_real *both = malloc(COUNT * n * sizeof *both);
    qkv_real *work = malloc(COUNT * (2 * n + 2 * C * C) * sizeof *work);
    ck_assert_int_eq(qkv_set_threads(2), 0);
    for (int e = 0; e < COUNT; e++)
        ck_assert_int_eq(qkv_newton_schulz(g + e * n, R, C, alone + e * n), 0);
    qkv__newton_schulz(COUNT, g, R, C, both, work);
    ck_assert_mem_eq(alone, both, COUNT * n * sizeof *alone);
    free(g);
    free(alone);
    free(both);
    free(work);
}
END_TEST

/* The rule on a GPT with every kind of parameter (positions, an untied head,
 * gains and biases, q/k norms): the blocks' four matrices, nothing else. */
START_TEST(test_the_grouping_is_the_hidden_matrices)
{
    qkv_gpt_config mc = {.vocab_size = 11, .block_size = 8, .n_layer = 2, .n_head = 2,
                         .n_embd = 8, .opts = {.untied = true, .qk_norm = true}};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_optim_config oc = qkv_muon_defaults();
    qkv_optim *o = qkv_optim_new(m->params, &oc);
    ck_assert_qkv(o);
    int n = 0;
    for (int k = 0; k < m->params->count; k++) {
        const char *name = m->params->items[k].name;
        bool want = strstr(name, "c_attn.weight") || strstr(name, "c_proj.weight") ||
                    strstr(name, "c_fc.weight");
        ck_assert_msg(qkv_optim_is_muon(o, m->params, name) == want, "%s: %d", name, !want);
        n += want;
    }
    ck_assert_int_eq(n, 4 * mc.n_layer);
    ck_assert(qkv_params_find(m->params, "wpe.weight") && qkv_params_find(m->params, "lm_head.weight"));
    /* A prefix moves a group; a vector cannot join, and a refusal changes nothing. */
    ck_assert_int_eq(qkv_optim_set_muon(o, m->params, "h.1.mlp.c_fc.", false), 2);
    ck_assert_int_eq(qkv_optim_is_muon(o, m->params, "h.1.mlp.c_fc.weight"), 0);
    ck_assert_int_eq(qkv_optim_set_muon(o, m->params, "lm_head.", true), 1);
    ck_assert_int_eq(qkv_optim_is_muon(o, m->params, "lm_head.weight"), 1);
    ck_assert_int_eq(qkv_optim_set_muon(o, m->params, "h.1.mlp.c_fc.", true), -1); /* the bias */
    ck_assert_int_eq(qkv_optim_is_muon(o, m->params, "h.1.mlp.c_fc.weight"), 0);
    /* AdamW has no Muon group. */
    qkv_optim_config ac = qkv_adamw_defaults();
    qkv_optim *adamw = qkv_optim_new(m->params, &ac);
    ck_assert_int_eq(qkv_optim_is_muon(adamw, m->params, "h.0.attn.c_attn.weight"), 0);
    qkv_optim_free(adamw);
    qkv_optim_free(o);
    qkv_gpt_free(m);
}
END_TEST

/* The test's parameters: a tall and a wide hidden matrix, a bias, an embedding table. */
enum { N_PARAMS = 4 };
static const char *const NAMES[N_PARAMS] = {"h.0.up.weight", "h.0.down.weight", "h.0.down.bias",
                                            "wte.weight"};
static const int ROWS[N_PARAMS] = {6, 3, 5, 4}, COLS[N_PARAMS] = {3, 5, 1, 3};

/* One step of the formula in double on parameter k (r×c values w, moments
 * m and v, gradient g): Muon's for the matrices, AdamW's for the rest. */
static void plain_step(int k, double *w, double *m, double *v, const double *g, double lr,
                       int t)
{
    const double mu = 0.95, wd = 0.1, b1 = 0.9, b2 = 0.99, eps = 1e-8;
    int r = ROWS[k], c = COLS[k], n = r * c;
    if (k < 2) { /* Muon */
        double *u = malloc((size_t)n * sizeof *u), *o = malloc((size_t)n * sizeof *o);
        for (int i = 0; i < n; i++) {
            m[i] = mu * m[i] + g[i];
            u[i] = g[i] + mu * m[i];
        }
        plain_ns(u, r, c, o);
        for (int i = 0; i < n; i++)
            w[i] = w[i] * (1 - lr * wd) - lr * 0.2 * sqrt(r > c ? r : c) * o[i];
        free(u);
        free(o);
        return;
    }
    double decay = k == 3 ? 1 - lr * wd : 1; /* the bias is not decayed */
    for (int i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        w[i] = w[i] * decay - lr / (1 - pow(b1, t)) * m[i] / (sqrt(v[i]) / sqrt(1 - pow(b2, t)) + eps);
    }
}

START_TEST(test_two_steps_are_the_formula)
{
    qkv_params *p = qkv_params_new();
    for (int k = 0; k < N_PARAMS; k++)
        ck_assert_qkv(qkv_params_add(p, NAMES[k], k == 2 ? 1 : 2,
                                     k == 2 ? (int[]){5} : (int[]){ROWS[k], COLS[k]},
                                     QKV_INIT_NORMAL, 0.5));
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    qkv_optim_config oc = qkv_muon_defaults();
    qkv_optim *o = qkv_optim_new(p, &oc);
    ck_assert_qkv(o);
    size_t n = p->total;
    double *w = malloc(n * sizeof *w), *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
    double *g = malloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++)
        w[i] = p->data[i];
    const double lr[2] = {0.02, 0.01};
    for (int t = 1; t <= 2; t++) {
        for (size_t i = 0; i < n; i++)
            p->grad[i] = (qkv_real)(g[i] = qkv_rng_normal(&rng));
        ck_assert_int_eq(qkv_optim_step(o, p, lr[t - 1]), 0);
        for (int k = 0; k < N_PARAMS; k++) {
            size_t off = p->items[k].offset;
            plain_step(k, w + off, m + off, v + off, g + off, lr[t - 1], t);
        }
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs(p->data[i] - w[i]) < 1e-6, "step %d value %zu: %.9g, the formula %.9g",
                          t, i, (double)p->data[i], w[i]);
    }
    free(w);
    free(m);
    free(v);
    free(g);
    qkv_optim_free(o);
    qkv_params_free(&p);
}
END_TEST

/* A Muon run of a small GPT saved at step 3 and resumed gives the bytes of
 * the run that went on (at another thread count). */
START_TEST(test_a_muon_run_resumes_bit_exactly)
{
    char text[] = "/tmp/qkv_muon_text_XXXXXX", ckpt[64];
    int fd = mkstemp(text);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < 60; i++)
        fputs("the quick brown fox jumps over the lazy dog. ", f);
    fclose(f);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", text);
    qkv_corpus *corpus = qkv_corpus_load(text, NULL);
    ck_assert_qkv(corpus);
    qkv_gpt_config mc = {.vocab_size = corpus->tok.size, .block_size = 8, .n_layer = 1,
                         .n_head = 2, .n_embd = 16};
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 6;
    tc.batch_size = 4;
    tc.eval_iters = 1;
    test_run *a = gpt_run_new(&mc, &tc, corpus);
    ck_assert_qkv(a);
    ck_assert_int_eq(qkv_training_set_optim(a->run, QKV_OPTIM_MUON), 0);
    ck_assert_int_eq(qkv_set_threads(2), 0);
    for (int s = 0; s < 6; s++) {
        ck_assert_msg(qkv_training_step(a->run, NULL, NULL) == 0, "%s", qkv_last_error());
        if (s == 2)
            ck_assert_msg(qkv_training_save(a->run, ckpt) == 0, "%s", qkv_last_error());
    }
    ck_assert_int_eq(qkv_set_threads(1), 0);
    test_run *b = gpt_run_resume(ckpt, text, 0);
    ck_assert_qkv(b);
    ck_assert_int_eq(b->run->opt->cfg.kind, QKV_OPTIM_MUON);
    ck_assert_int_eq(b->run->step, 3);
    while (b->run->step < 6)
        ck_assert_msg(qkv_training_step(b->run, NULL, NULL) == 0, "%s", qkv_last_error());
    const qkv_params *pa = a->model->params, *pb = b->model->params;
    ck_assert_mem_eq(pa->data, pb->data, pa->total * sizeof *pa->data);
    ck_assert_mem_eq(a->run->opt->m, b->run->opt->m, pa->total * sizeof *pa->data);
    /* and the run differs from AdamW's: the optimizer did take over */
    test_run *c = gpt_run_new(&mc, &tc, corpus);
    ck_assert_qkv(c);
    for (int s = 0; s < 6; s++)
        ck_assert_int_eq(qkv_training_step(c->run, NULL, NULL), 0);
    ck_assert(memcmp(pa->data, c->model->params->data, pa->total * sizeof *pa->data) != 0);
    test_run_free(a);
    test_run_free(b);
    test_run_free(c);
    qkv_corpus_free(corpus);
    unlink(text);
    unlink(ckpt);
}
END_TEST

static Suite *muon_suite(void)
{
    Suite *s = suite_create("muon");
    TCase *tc = tcase_create("muon");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_newton_schulz_is_the_formula);
    tcase_add_test(tc, test_newton_schulz_singular_values_near_1);
    tcase_add_test(tc, test_newton_schulz_same_bytes_at_1_and_2_threads);
    tcase_add_test(tc, test_newton_schulz_batched_is_each_alone);
    tcase_add_test(tc, test_the_grouping_is_the_hidden_matrices);
    tcase_add_test(tc, test_two_steps_are_the_formula);
    tcase_add_test(tc, test_a_muon_run_resumes_bit_exactly);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(muon_suite)
