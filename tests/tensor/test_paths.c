/* Every vector path this CPU runs (qkv/cpu.h) against the portable
 * one: each hot kernel's results (and the kernels as qkv/profile.h runs them), a short training run's losses, the
 * float-vs-double tour; on each path 1 and 2 threads write byte-identical
 * checkpoints; no path's kernels have fallen back to scalar code (the quick
 * form of `qkv bench --ops`, timed in CPU time); and the program refuses a path
 * the CPU lacks. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensor/kernels/cpu.h"
#include "tensor/kernels/hot.h"
#include "testing.h"

enum { N = 4096, COLS = 128, BUFFERS = 5 };

/* The buffers of qkv__hot_data, refilled from one seed: a..d in [-1, 1), e in [0.1, 1). */
static void fill(qkv_real *mem)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 21);
    for (size_t i = 0; i < BUFFERS * (size_t)N; i++)
        mem[i] = (qkv_real)(i < 4 * (size_t)N ? 2 * qkv_rng_uniform(&rng) - 1
                                              : 0.1 + 0.9 * qkv_rng_uniform(&rng));
}

static qkv__hot_data data_in(qkv_real *mem)
{
    return (qkv__hot_data){mem, mem + N, mem + 2 * N, mem + 3 * N, mem + 4 * N, N, COLS};
}

START_TEST(test_every_kernel_matches_portable)
{
    /* Each kernel's outputs on every path, from the same inputs, within
     * float rounding of the portable path's: the paths differ only in the
     * order of a sum's terms. Every buffer is compared, so a kernel that
     * writes where it should not is caught too. */
    qkv_real *want = malloc(BUFFERS * N * sizeof *want), *got = malloc(BUFFERS * N * sizeof *got);
    ck_assert(want && got);
    int n_kernels, compared = 0;
    const qkv__hot_kernel *const *kernels = qkv__hot_kernels(&n_kernels);
    ck_assert_int_ge(n_kernels, 18);
    for (int ki = 0; ki < n_kernels; ki++) {
        const qkv__hot_kernel *k = kernels[ki];
        fill(want);
        qkv__hot_data dw = data_in(want);
        ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
        k->run(&dw);
        for (int p = 0; p < QKV__CPU_N_PATHS; p++) {
            if (p == QKV__CPU_PORTABLE || qkv_cpu_use(p) != 0)
                continue;
            fill(got);
            qkv__hot_data dg = data_in(got);
            k->run(&dg);
            double worst = 0;
            size_t at = 0;
            for (size_t i = 0; i < BUFFERS * (size_t)N; i++) {
                double err = fabs((double)got[i] - want[i]) / (1 + fabs((double)want[i]));
                if (!(err <= worst)) /* NaN counts as the worst */
                    worst = err, at = i;
            }
            ck_assert_msg(worst <= 1e-5, "%s on %s: value %zu is %g, portable %g", k->name,
                          qkv_cpu_name(p), at, (double)got[at], (double)want[at]);
            compared++;
        }
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    printf("test_paths: %d kernels x paths matched the portable path\n", compared);
    free(want);
    free(got);
}
END_TEST

START_TEST(test_public_kernel_api)
{
    /* qkv/profile.h's kernels are the registry's, named and bounded alike;
     * each runs in a space of any size on every path (the 64x64 product has
     * its own 4096 values: a sanitizer build catches a kernel reading past a
     * small space), and says how much it did. */
    int n_kernels;
    const qkv__hot_kernel *const *kernels = qkv__hot_kernels(&n_kernels);
    ck_assert_int_eq(qkv_kernel_count(), n_kernels);
    const size_t sizes[][2] = {{8, 8}, {2048, 512}};
    for (size_t z = 0; z < 2; z++) {
        qkv_kernel_space *s = qkv_kernel_space_new(sizes[z][0], (int)sizes[z][1], 3);
        ck_assert_ptr_nonnull(s);
        qkv__hot_data d = {.n = sizes[z][0], .cols = (int)sizes[z][1]};
        for (int k = 0; k < n_kernels; k++) {
            ck_assert_str_eq(qkv_kernel_name(k), kernels[k]->name);
            ck_assert_str_eq(qkv_kernel_limit(k), kernels[k]->limit ? kernels[k]->limit : "width");
            for (int p = 0; p < QKV__CPU_N_PATHS; p++)
                if (qkv_cpu_use(p) == 0)
                    ck_assert_double_eq(qkv_kernel_run(s, k, 3), 3.0 * kernels[k]->work(&d));
        }
        qkv_kernel_space_free(s);
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
}
END_TEST

/* A short text, repeated, in a temporary file (its name into path), loaded:
 * a text the model learns within the steps, so a wrong kernel moves the loss. */
static qkv_corpus *repeated_text(char *path)
{
    snprintf(path, 64, "/tmp/qkv_paths_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 200; i++)
        fputs("the quick brown fox jumps over the lazy dog; attention is all you need.\n", f);
    fclose(f);
    qkv_corpus *c = qkv_corpus_load(path, NULL);
    ck_assert_qkv(c);
    return c;
}

/* Train `steps` steps of a small model (rows of 64: whole AVX-512 vectors,
 * with the norm, activation and attention options on or off) on `threads`
 * threads, on the active path; the last loss, and the checkpoint in ckpt. */
static double train(qkv_corpus *c, bool options, int threads, int steps, const char *ckpt)
{
    omp_set_num_threads(threads);
    qkv_gpt_config mc = {.vocab_size = c->tok.size, .block_size = 32, .n_layer = 2, .n_head = 2,
                         .n_embd = 64,
                         .opts = {.rope = options, .rmsnorm = options, .relu2 = options}};
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = steps;
    tc.batch_size = 6;
    tc.warmup = 5;
    tc.lr = 3e-3;
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    double loss = 0;
    for (int i = 0; i < steps; i++)
        ck_assert_msg(qkv_training_step(t->run, &loss, NULL) == 0, "%s", qkv_last_error());
    ck_assert_msg(qkv_training_save(t->run, ckpt) == 0, "%s", qkv_last_error());
    test_run_free(t);
    return loss;
}

/* Whether files x and y hold the same bytes. */
static bool same_bytes(const char *x, const char *y)
{
    FILE *f = fopen(x, "rb"), *g = fopen(y, "rb");
    ck_assert(f && g);
    int a, b;
    do {
        a = fgetc(f), b = fgetc(g);
    } while (a == b && a != EOF);
    fclose(f);
    fclose(g);
    return a == b;
}

START_TEST(test_training_on_every_path)
{
    /* On every path: 1 and 2 threads give the same checkpoint, byte for byte;
     * and after 40 steps the loss is the portable path's within float
     * rounding: the paths differ only in the order of a sum's terms (measured:
     * 1.2e-7 apart); 1e-5 still catches a kernel off by 1e-4 (2.5e-5 apart). */
    char text[64], dir[64], one[128], two[128];
    qkv_corpus *c = repeated_text(text);
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_paths");
    snprintf(one, sizeof one, "%s/one.ckpt", dir);
    snprintf(two, sizeof two, "%s/two.ckpt", dir);
    for (int options = 0; options < 2; options++) {
        double portable = NAN;
        for (int p = QKV__CPU_N_PATHS - 1; p >= 0; p--) { /* the portable path first */
            if (qkv_cpu_use(p) != 0)
                continue;
            double l1 = train(c, options, 1, 40, one), l2 = train(c, options, 2, 40, two);
            ck_assert_msg(same_bytes(one, two), "%s, options %d: 1 and 2 threads differ",
                          qkv_cpu_name(p), options);
            ck_assert(l1 == l2);
            if (p == QKV__CPU_PORTABLE)
                portable = l1;
            ck_assert_msg(fabs(l1 - portable) < 1e-5, "%s, options %d: loss %.9f, portable %.9f",
                          qkv_cpu_name(p), options, l1, portable);
            printf("test_paths: %s, options %d: loss after 40 steps %.9f (portable %.9f)\n",
                   qkv_cpu_name(p), options, l1, portable);
        }
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
    qkv_test_remove_tmpdir(dir);
    qkv_corpus_free(c);
    unlink(text);
}
END_TEST

/* Run a shell command; its exit status (-1 if it did not exit). */
static int run(const char *cmd)
{
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *build_dir(void)
{
    const char *dir = getenv("QKV_TEST_BUILD");
    return dir ? dir : "build";
}

START_TEST(test_tour_on_every_path)
{
    /* The float-vs-double op tour (test_precision) with each path forced. */
    for (int p = 0; p < QKV__CPU_N_PATHS; p++) {
        if (!qkv_cpu_supported(p))
            continue;
        char cmd[512];
        snprintf(cmd, sizeof cmd, "QKV_CPU=%s CK_VERBOSITY=silent %s/tests/test_precision",
                 qkv_cpu_name(p), build_dir());
        ck_assert_msg(run(cmd) == 0, "the tour fails on %s: %s", qkv_cpu_name(p), cmd);
    }
}
END_TEST

/* The bars: each path at least NEED times as fast as the next narrower one
 * (`qkv bench --ops --quick`'s, cli/bench_kernels.c), or LIMITED_NEED for a
 * kernel that something other than the vector width bounds (its `limit`,
 * hot.h) and for AVX-512 on a core that runs it as two halves. A scalar copy
 * of a kernel is 4-16x slower than any vector path, so LIMITED_NEED is lower
 * than the bench's 0.7: under `make -j2 test`, with another suite on the
 * other core, AdamW (bound by the divider) measured avx512/avx2 0.67x three
 * tries in a row (5 December 2026, Zen 4), 1.17x on a quiet machine. */
#define NEED 1.2
#define LIMITED_NEED 0.5

/* Operands of 2048 floats (8 KB), rows of 512: two or three of them fit the
 * smallest L1d these paths run on, as in the bench. Each try times ROUNDS
 * rounds per path; a kernel fails only when all TRIES fall short. */
enum { FALLBACK_N = 2048, FALLBACK_COLS = 512, ROUNDS = 7, TRIES = 3 };

/* This thread's CPU time in ns: the time a busy machine gives other
 * processes is not counted, so their load does not slow one path alone. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* The CPU time of reps runs of k on the active path, in ns. */
static double round_ns(const qkv__hot_kernel *k, const qkv__hot_data *d, int reps)
{
    double t0 = cpu_ns();
    for (int r = 0; r < reps; r++)
        k->run(d);
    return cpu_ns() - t0;
}

/* Each of the n paths' best rate for k (values per CPU ns) over ROUNDS
 * rounds, the paths taking turns within each round, so a slow spell of the
 * machine slows them alike; each timed round follows an untimed one on the
 * same path (an Intel core wakes its 512-bit units slowly). */
static void best_rates(const qkv__hot_kernel *k, const qkv__hot_data *d, const int *paths, int n,
                       double *best)
{
    qkv_cpu_use(paths[n - 1]);
    k->run(d);
    int reps = (int)(2e5 / (round_ns(k, d, 1) + 1)) + 1; /* ~0.2 ms on the narrowest path */
    for (int i = 0; i < n; i++)
        best[i] = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < n; i++) {
            qkv_cpu_use(paths[i]);
            round_ns(k, d, reps);
            double rate = (double)k->work(d) * reps / round_ns(k, d, reps);
            best[i] = fmax(best[i], rate);
        }
    qkv_cpu_use(QKV_CPU_DEFAULT);
}

/* The worst of k's ratios, each path's rate over the next narrower one's
 * divided by its bar (< 1: too slow), from one try. Unused in a sanitizer
 * build, which skips the check below. */
static __attribute__((unused)) double worst_margin(const qkv__hot_kernel *k, const qkv__hot_data *d, const int *paths,
                           int n)
{
    double best[QKV__CPU_N_PATHS], worst = INFINITY;
    best_rates(k, d, paths, n, best);
    for (int i = 0; i + 1 < n; i++) {
        bool same_width = qkv_cpu_avx512_halved() && paths[i] == QKV__CPU_AVX512;
        double need = k->limit || same_width ? LIMITED_NEED : NEED;
        double margin = best[i] / best[i + 1] / need;
        if (margin < 1)
            printf("test_paths: %s: %s/%s %.2fx, below its bar %.2fx\n", k->name,
                   qkv_cpu_name(paths[i]), qkv_cpu_name(paths[i + 1]), best[i] / best[i + 1],
                   need);
        fflush(stdout); /* a failed check ends this process before its buffer is written */
        worst = fmin(worst, margin);
    }
    return worst;
}

START_TEST(test_no_scalar_fallback)
{
    /* The quick form of `qkv bench --ops`, timed in this thread's CPU time. */
#if defined(__SANITIZE_ADDRESS__)
    /* The sanitizers' checks inside the loops keep the compiler from vectorizing them at all. */
    printf("test_paths: scalar-fallback check SKIPPED: a sanitizer build vectorizes no kernel\n");
#else
    if (!QKV__CPU_X86) { /* one copy of each kernel: tests/aarch64/neon_kernels.sh reads its code */
        printf("test_paths: scalar-fallback check SKIPPED: one copy per kernel off x86\n");
        return;
    }
    int paths[QKV__CPU_N_PATHS], n_paths = 0;
    for (int p = 0; p < QKV__CPU_N_PATHS; p++)
        if (qkv_cpu_supported(p))
            paths[n_paths++] = p;
    qkv_real *mem = malloc(BUFFERS * N * sizeof *mem);
    ck_assert_ptr_nonnull(mem);
    fill(mem);
    qkv__hot_data d = data_in(mem);
    d.n = FALLBACK_N;
    d.cols = FALLBACK_COLS;
    int n_kernels, tries = 0, slow = 0;
    const qkv__hot_kernel *const *kernels = qkv__hot_kernels(&n_kernels);
    double worst = INFINITY;
    for (int ki = 0; ki < n_kernels; ki++) {
        double margin = 0;
        for (int t = 0; t < TRIES && margin < 1; t++, tries++)
            margin = worst_margin(kernels[ki], &d, paths, n_paths);
        slow += margin < 1;
        worst = fmin(worst, margin);
    }
    free(mem);
    printf("test_paths: no scalar fallback: %d kernels on %d paths, %d tries, the closest at "
           "%.2f of its bar\n", n_kernels, n_paths, tries, worst);
    fflush(stdout);
    ck_assert_msg(slow == 0, "%d kernel(s) too slow on a wider path %d times in a row: a scalar "
                  "fallback? (see the lines above)", slow, TRIES);
#endif
}
END_TEST

START_TEST(test_choosing_a_path)
{
    ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
    ck_assert_int_eq(qkv__cpu_active(), QKV__CPU_PORTABLE);
    ck_assert_int_eq(qkv_cpu_use(QKV__CPU_N_PATHS), -1);
    ck_assert_int_eq(qkv__cpu_active(), QKV__CPU_PORTABLE); /* a refused path changes nothing */
    ck_assert_int_eq(qkv_cpu_use(QKV_CPU_DEFAULT), 0);
    ck_assert_int_eq(qkv_cpu_find("avx2"), QKV__CPU_AVX2);
    ck_assert_int_eq(qkv_cpu_find("AVX2"), -1);
    ck_assert_int_eq(qkv_cpu_find(NULL), -1);
    ck_assert_int_eq(qkv_cpu_find("sse9"), -1);
    ck_assert_msg(strstr(qkv_last_error(), "'sse9'") && strstr(qkv_last_error(), "portable"),
                  "%s", qkv_last_error());
    /* A failed find handed on is refused, not taken for the default. */
    ck_assert_int_eq(qkv_cpu_use(QKV__CPU_PORTABLE), 0);
    ck_assert_int_eq(qkv_cpu_use(qkv_cpu_find("sse9")), -1);
    ck_assert_int_eq(qkv__cpu_active(), QKV__CPU_PORTABLE);
    ck_assert_int_eq(qkv_cpu_use(QKV_CPU_DEFAULT), 0);
    char list[64];
    printf("test_paths: this CPU runs %s\n", qkv_cpu_list(list, sizeof list));
    /* The program: a named path is used and said; an unknown or unsupported one refused. */
    char cmd[512];
    for (int p = 0; p < QKV__CPU_N_PATHS; p++) {
        snprintf(cmd, sizeof cmd,
                 "QKV_CPU=%s %s/qkv bench --no-gemm --no-train --no-sample 2>&1 | "
                 "grep -q '^vector path: %s '",
                 qkv_cpu_name(p), build_dir(), qkv_cpu_name(p));
        ck_assert_msg((run(cmd) == 0) == qkv_cpu_supported(p), "%s", cmd);
    }
    snprintf(cmd, sizeof cmd, "QKV_CPU=sse9 %s/qkv bench --no-gemm --no-train --no-sample "
             "2>&1 >/dev/null | grep -q 'QKV_CPU=sse9: no such path'", build_dir());
    ck_assert_msg(run(cmd) == 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "QKV_CPU=sse9 %s/qkv bench --no-gemm --no-train --no-sample "
             ">/dev/null 2>&1", build_dir());
    ck_assert_int_eq(run(cmd), 1);
    snprintf(cmd, sizeof cmd, "%s/qkv bench --cpu sse9 --no-gemm --no-train --no-sample "
             ">/dev/null 2>&1", build_dir());
    ck_assert_int_eq(run(cmd), 2); /* a bad flag value: a usage error */
}
END_TEST

static Suite *paths_suite(void)
{
    Suite *s = suite_create("paths");
    TCase *tc = tcase_create("paths");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_choosing_a_path);
    tcase_add_test(tc, test_every_kernel_matches_portable);
    tcase_add_test(tc, test_public_kernel_api);
    tcase_add_test(tc, test_training_on_every_path);
    tcase_add_test(tc, test_tour_on_every_path);
    suite_add_tcase(s, tc);
    /* A case of its own, to run alone: CK_RUN_CASE=fallback. */
    tc = tcase_create("fallback");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_no_scalar_fallback);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(paths_suite)
