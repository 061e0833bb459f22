/* qkv bench --ops, part 1: every hot kernel's throughput on every vector path
 * this CPU runs (tensor/kernels/hot.h, cpu.h), and the guard against a
 * silent scalar fallback: each path must be at least `need` times as fast as
 * the next narrower one (AVX-512 over AVX2, AVX2 over the SSE2 baseline);
 * a kernel whose speed something other than the vector width bounds (its
 * `limit`, hot.h) must only not be slower: LIMITED_NEED. Either bar catches
 * a scalar copy, which is 4-16x slower than any vector path.
 *
 * Every buffer holds BUF floats (the 64x64 gemm's matrices), of which the
 * other kernels read and write N (8 KB): their two or three operands fit the
 * smallest L1d these paths run on (32 KB, AMD Zen 3 and 4), so the figure is
 * the kernel's arithmetic, not L2's bandwidth. (With operands of 16 KB, Zen
 * 4's L1 spilled and relu2 ran as fast on AVX2 as on SSE2.) Each
 * figure is the best of several timed rounds, and the paths take turns
 * within each round, so a busy machine slows them alike. Each timed round
 * follows an untimed one on the same path: an Intel core powers its 512-bit
 * units down when they idle and runs AVX-512 slowly for tens of µs after
 * waking them, which a turn from another path would otherwise measure.
 * A core that runs 512-bit vectors as two 256-bit halves (AMD Zen 4) does
 * no more arithmetic per cycle on AVX-512 than on AVX2: there AVX-512 over
 * AVX2 has only the not-slower bar, which still catches a scalar copy. */
#include <stdio.h>
#include <string.h>

#include "tensor/kernels/cpu.h"
#include "tensor/kernels/hot.h"
#include "bench.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"

/* Rows of 512: long enough that a row's fixed cost (the sum across lanes at
 * its end) does not hide how fast its loops run. */
enum { BUF = 4096, N = 2048, COLS = 512 };

/* The bar of a kernel with a limit other than the width: not slower, within the
 * noise of a shared machine and a core that slows its clock for AVX-512 (measured
 * 0.87-0.96 for layernorm forward, AVX-512 over AVX2); a scalar copy is 4x slower. */
#define LIMITED_NEED 0.7

/* Time of one round of `reps` runs of k, in ns. */
static double round_ns(const qkv__hot_kernel *k, const qkv__hot_data *d, int reps)
{
    double t0 = cli_now();
    for (int r = 0; r < reps; r++)
        k->run(d);
    return (cli_now() - t0) * 1e9;
}

int bench_kernels(bool quick, double need)
{
    cli_use_threads(1);
    qkv_real *mem = qkv_alloc(5 * (size_t)BUF * sizeof *mem);
    if (!mem) {
        fprintf(stderr, "qkv bench: %s\n", qkv_last_error());
        return 1;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, 9);
    for (size_t i = 0; i < 5 * (size_t)BUF; i++)
        mem[i] = (qkv_real)(i < 4 * (size_t)BUF ? 2 * qkv_rng_uniform(&rng) - 1
                                              : 0.1 + 0.9 * qkv_rng_uniform(&rng));
    const qkv__hot_data d = {mem, mem + BUF, mem + 2 * BUF, mem + 3 * BUF, mem + 4 * BUF, N, COLS};
    int paths[QKV__CPU_N_PATHS], n_paths = 0;
    for (int p = 0; p < QKV__CPU_N_PATHS; p++)
        if (qkv__cpu_supported(p))
            paths[n_paths++] = p;
    const int rounds = quick ? 7 : 21;
    const double round_target_ns = quick ? 1e5 : 4e5;

    printf("\nhot kernels, one thread, values per ns (best of %d rounds; operands of %d floats, "
           "in L1)\n", rounds, N);
    bool halved = qkv__cpu_avx512_halved();
    if (halved)
        printf("this core runs 512-bit vectors as two 256-bit halves (AMD Zen 4): avx512/avx2 "
               "needs %.2fx, not %.2fx\n", LIMITED_NEED, need);
    printf("%-32s", "kernel");
    for (int i = 0; i < n_paths; i++)
        printf(" %9s", qkv__cpu_name(paths[i]));
    for (int i = 0; i + 1 < n_paths; i++) {
        char h[40];
        snprintf(h, sizeof h, "%s/%s", qkv__cpu_name(paths[i]), qkv__cpu_name(paths[i + 1]));
        printf(" %16s", h);
    }
    printf("  limit\n");
    int failed = 0, n_kernels;
    const qkv__hot_kernel *const *kernels = qkv__hot_kernels(&n_kernels);
    for (int ki = 0; ki < n_kernels; ki++) {
        const qkv__hot_kernel *k = kernels[ki];
        /* Enough runs per round for round_target_ns on the narrowest path. */
        qkv__cpu_force(paths[n_paths - 1]);
        k->run(&d);
        int reps = (int)(round_target_ns / (round_ns(k, &d, 1) + 1)) + 1;
        double best[QKV__CPU_N_PATHS] = {0};
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < n_paths; i++) {
                qkv__cpu_force(paths[i]);
                round_ns(k, &d, reps); /* warm-up: see the top */
                double rate = (double)k->work(&d) * reps / round_ns(k, &d, reps);
                best[i] = rate > best[i] ? rate : best[i];
            }
        printf("%-32s", k->name);
        for (int i = 0; i < n_paths; i++)
            printf(" %9.2f", best[i]);
        for (int i = 0; i + 1 < n_paths; i++) {
            double ratio = best[i] / best[i + 1];
            /* Only x86 compiles a row kernel once per path; elsewhere (NEON) the
             * paths run one copy, whose vectors tests/aarch64/neon_kernels.sh
             * checks in the disassembly, and a ratio of 1 says nothing. */
            bool same_width = halved && paths[i] == QKV__CPU_AVX512;
            bool ok = !QKV__CPU_X86 || ratio >= (k->limit || same_width ? LIMITED_NEED : need);
            failed += !ok;
            printf(" %10.2fx %-4s", ratio, ok ? "ok" : "SLOW");
        }
        printf("  %s\n", k->limit ? k->limit : "width");
        fflush(stdout);
    }
    qkv__cpu_force(-1);
    qkv_free(mem);
    printf("%s: each path at least %.2fx the next narrower (%.2fx where the limit is not the "
           "width)\n", failed ? "FAILED" : "passed", need, LIMITED_NEED);
    if (failed)
        printf("%d kernel(s) too slow on a wider path: a scalar fallback?\n", failed);
    return failed;
}
