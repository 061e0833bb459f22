/* qkv bench: how fast qkv is on this machine. Training steps and sampling,
 * each measured in a child process of its own so its peak memory (RSS) is
 * its own, at 1 and 2 threads; figures are medians of several runs after
 * warm-up, since the machine may be shared. */
#define _DEFAULT_SOURCE /* wait4, getloadavg */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bench.h"
#include "commands.h"
#include "cpu_path.h"
#include "qkv/cpu.h"
#include "qkv/profile.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"

/* A corpus of uniformly random characters: speed does not depend on the text. */
static qkv_corpus *random_corpus(int vocab, size_t len)
{
    qkv_corpus *c = qkv_calloc(sizeof *c);
    if (!c || !(c->ids = qkv_alloc(len * sizeof *c->ids))) {
        qkv_free(c);
        return NULL;
    }
    uint8_t bytes[256];
    for (int i = 0; i < vocab; i++)
        bytes[i] = (uint8_t)(32 + i);
    qkv_tokenizer_from_bytes(&c->tok, bytes, vocab);
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    for (size_t i = 0; i < len; i++)
        c->ids[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)vocab);
    c->len = len;
    c->n_train = len * 9 / 10;
    return c;
}

result in_child(result (*fn)(const void *), const void *arg, double *rss_mb)
{
    result r = {0};
    int fd[2];
    if (pipe(fd) != 0)
        return r;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result mine = fn(arg);
        ssize_t w = write(fd[1], &mine, sizeof mine);
        _exit(w == (ssize_t)sizeof mine ? 0 : 1);
    }
    close(fd[1]);
    if (pid > 0 && read(fd[0], &r, sizeof r) != (ssize_t)sizeof r)
        r.ok = 0;
    close(fd[0]);
    struct rusage ru;
    int status;
    if (pid > 0 && wait4(pid, &status, 0, &ru) == pid)
        *rss_mb = (double)ru.ru_maxrss / 1024.0;
    return r;
}

/* A training run of one train_case: its model, a random corpus, the run. */
typedef struct case_run {
    qkv_gpt *model;
    qkv_corpus *text;
    qkv_training *run; /* NULL when it could not be made */
} case_run;

/* The run of tc on tc->threads threads over a random corpus (free it with
 * case_run_free); its run is NULL on failure. */
static case_run case_run_new(const train_case *tc)
{
    cli_use_threads(tc->threads);
    qkv_precision_use(tc->precision); /* in the child: the parent keeps its own */
    case_run r = {.text = random_corpus(tc->model.vocab_size, 200000)};
    qkv_train_config cfg = qkv_train_defaults();
    cfg.batch_size = tc->batch;
    cfg.iters = tc->warmup + tc->steps;
    qkv_training_model tm;
    if (r.text && (r.model = qkv_gpt_new(&tc->model, cfg.seed)) &&
        qkv_gpt_training_model(r.model, r.text, &tm) == 0)
        r.run = qkv_training_new(&tm, &cfg);
    return r;
}

/* Free what case_run_new made. */
static void case_run_free(case_run *r)
{
    qkv_training_free(r->run);
    qkv_gpt_free(r->model);
    qkv_corpus_free(r->text);
}

result bench_train(const void *arg)
{
    const train_case *tc = arg;
    result r = {0};
    case_run cr = case_run_new(tc);
    double ms[64];
    int n = tc->steps < 64 ? tc->steps : 64;
    for (int i = 0; cr.run && i < tc->warmup + n; i++) {
        double t0 = cli_now();
        if (qkv_training_step(cr.run, NULL, NULL) < 0)
            break;
        if (i >= tc->warmup)
            ms[i - tc->warmup] = 1000 * (cli_now() - t0);
        if (i == tc->warmup + n - 1) {
            r.value = cli_median(ms, n); /* sorts ms */
            r.lo = ms[0], r.hi = ms[n - 1];
            r.spread = (r.hi - r.lo) / r.value;
            r.ok = 1;
            /* Values, gradients and AdamW's two moments. */
            r.params_mb = 4.0 * cr.model->params->total * sizeof(qkv_real) / (1 << 20);
        }
    }
    if (!r.ok)
        fprintf(stderr, "qkv bench: %s: %s\n", tc->name, qkv_last_error());
    case_run_free(&cr);
    return r;
}

/* Descending by forward + backward time, for qsort. */
static int slower_first(const void *x, const void *y)
{
    const qkv_op_time *a = x, *b = y;
    double ta = a->forward + a->backward, tb = b->forward + b->backward;
    return (ta < tb) - (ta > tb);
}

/* Where one train_case's step time goes, op by op (printed by a child):
 * each op's forward (with the glue before it) and backward (with clearing
 * its inputs' gradients), in ms per step; the rest of the step is the
 * batch, the loss check, the gradient norm and the optimizer. */
static result bench_ops(const void *arg)
{
    const train_case *tc = arg;
    case_run cr = case_run_new(tc);
    double total = 0;
    int done = 0;
    for (int i = 0; cr.run && i < tc->warmup + tc->steps; i++) {
        if (i == tc->warmup)
            qkv_profile_start();
        qkv_profile_mark();
        double t0 = cli_now();
        if (qkv_training_step(cr.run, NULL, NULL) < 0)
            break;
        if (i >= tc->warmup)
            total += cli_now() - t0, done++;
    }
    qkv_profile_stop();
    int n;
    const qkv_op_time *rows = qkv_profile_rows(&n);
    qkv_op_time sorted[64];
    n = n < 64 ? n : 64;
    memcpy(sorted, rows, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, slower_first);
    if (done > 0) {
        double per = 1000.0 / done, step = total * per, ops = 0;
        printf("\nwhere the time of a step goes: %s, %d thread%s, %s, %.1f ms/step (mean of %d)\n",
               tc->name, tc->threads, tc->threads > 1 ? "s" : "", qkv_precision_name(tc->precision),
               step, done);
        printf("%-34s %6s %10s %10s %7s\n", "op (output shape)", "calls", "forward", "backward",
               "share");
        for (int i = 0; i < n; i++) {
            double f = sorted[i].forward * per, b = sorted[i].backward * per;
            ops += f + b;
            printf("%-34s %6d %7.2f ms %7.2f ms %6.1f%%\n", sorted[i].what,
                   sorted[i].calls / done, f, b, 100 * (f + b) / step);
        }
        printf("%-34s %6s %7.2f ms %10s %6.1f%%\n", "rest: batch, norm, clip, AdamW", "",
               step - ops, "", 100 * (step - ops) / step);
        fflush(stdout); /* the child leaves by _exit, which flushes nothing */
    }
    case_run_free(&cr);
    return (result){.ok = done > 0};
}

typedef struct sample_case {
    qkv_gpt_config model;
    int threads, tokens, runs;
    bool cache;
} sample_case;

/* Median tokens/s of sampling for one sample_case (run in a child). */
static result bench_sample(const void *arg)
{
    const sample_case *sc = arg;
    result r = {0};
    cli_use_threads(sc->threads);
    qkv_gpt *m = qkv_gpt_new(&sc->model, 1);
    qkv_sample_opts opts = {.temperature = 1, .top_k = 0, .top_p = 1};
    int32_t prompt = 0;
    double tps[16];
    int n = sc->runs < 16 ? sc->runs : 16;
    for (int i = 0; m && i <= n; i++) { /* run 0 warms up */
        qkv_rng rng;
        qkv_rng_seed(&rng, (uint64_t)i);
        double t0 = cli_now();
        if (qkv_gpt_generate(m, &prompt, 1, sc->tokens, &opts, &rng, sc->cache, NULL, NULL) < 0)
            break;
        if (i > 0)
            tps[i - 1] = sc->tokens / (cli_now() - t0);
        if (i == n) {
            r.value = cli_median(tps, n);
            r.spread = (tps[n - 1] - tps[0]) / r.value;
            r.ok = 1;
        }
    }
    qkv_gpt_free(m);
    return r;
}

/* Print the 1-minute load average, which explains slow figures on a shared machine. */
static void print_load(void)
{
    double load[3];
    if (getloadavg(load, 3) == 3)
        printf("(load average %.2f: other work on the machine slows every figure)\n", load[0]);
}

typedef struct gemm_case {
    int runs, max_threads;
    bool quick;
} gemm_case;

typedef struct kernels_case {
    bool quick;
    double need;
} kernels_case;

/* The hot kernels' table and check, printed by a child (as the GEMM table
 * is, below); value 1 when every kernel passed. */
static result bench_kernels_table(const void *arg)
{
    const kernels_case *kc = arg;
    int failed = bench_kernels(kc->quick, kc->need);
    failed += bench_bf16(kc->quick, kc->need);
    fflush(stdout);
    return (result){.value = failed == 0, .ok = 1};
}

/* The GEMM table, printed by a child: the parent must never start an OpenMP
 * thread team, since a child forked after that inherits a team whose threads
 * did not survive the fork, and its first parallel region waits for them forever. */
static result bench_gemm_table(const void *arg)
{
    const gemm_case *gc = arg;
    bench_gemm(gc->runs, gc->max_threads, gc->quick);
    fflush(stdout); /* the child leaves by _exit, which flushes nothing */
    return (result){.ok = 1};
}

int cmd_bench(int argc, char **argv)
{
    int steps = 20, runs = 7, max_threads = omp_get_num_procs() >= 2 ? 2 : 1;
    bool quick = false, skip_gemm = false, skip_train = false, skip_sample = false, ops = false,
         context = false, no_bf16 = false;
    const char *cpu = NULL;
    const arg_spec specs[] = {
        {"--steps", ARG_INT, &steps, 2, 64, "N", "timed training steps per configuration"},
        {"--runs", ARG_INT, &runs, 1, 16, "N", "timed runs per sampling and GEMM figure"},
        {"--quick", ARG_FLAG, &quick, 0, 0, NULL, "fewer steps and shapes: a fast look"},
        {"--no-gemm", ARG_FLAG, &skip_gemm, 0, 0, NULL, "skip the GEMM figures"},
        {"--no-train", ARG_FLAG, &skip_train, 0, 0, NULL, "skip the training figures"},
        {"--no-sample", ARG_FLAG, &skip_sample, 0, 0, NULL, "skip the sampling figures"},
        {"--no-bf16", ARG_FLAG, &no_bf16, 0, 0, NULL,
         "training steps in fp32 only (without it, each also with --precision bf16, and with --ops "
         "the op tables too)"},
        {"--ops", ARG_FLAG, &ops, 0, 0, NULL,
         "every hot kernel's speed on every vector path, checked: each path >= 1.5x the next "
         "narrower (--quick: 1.2x; 0.7x where the width is not the limit), and a bf16 GEMM with "
         "bf16 units >= 1.5x (1.2x) the fp32 one (avx2's >= 0.5x); and where the models' "
         "step goes, op by op"},
        {"--context", ARG_FLAG, &context, 0, 0, NULL,
         "also the context sweep: baby at T = 256 ... 8192, B x T = 8192, ms/step and peak RSS "
         "per T (about a minute)"},
        {"--cpu", ARG_STR, &cpu, 0, 0, "PATH",
         "vector path of every kernel: avx512, avx2 or portable (default: $QKV_CPU, else the "
         "widest this CPU runs)"},
    };
    const arg_cmd cmd = {"bench", "Speed of qkv on this machine: GEMM GFLOP/s against the "
                         "measured FMA peak, training ms/step, sampling tokens/s, peak memory.",
                         "", specs, (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (quick) {
        steps = 5;
        runs = 3;
    }
    if (cli_cpu_use("--cpu ", cpu) < 0)
        return args_error(&cmd, "%s", qkv_last_error());
    char paths[64];
    printf("vector path: %s (this CPU runs: %s; choose with --cpu or QKV_CPU)\n",
           qkv_cpu_name(qkv_cpu_active()), qkv_cpu_list(paths, sizeof paths));
    print_load();
    int status = 0;
    if (ops) {
        double rss = 0;
        kernels_case kc = {quick, quick ? 1.2 : 1.5};
        result r = in_child(bench_kernels_table, &kc, &rss);
        if (!r.ok || r.value != 1)
            status = 1;
    }
    if (!skip_gemm) {
        double rss = 0;
        if (!in_child(bench_gemm_table, &(gemm_case){runs, max_threads, quick}, &rss).ok)
            printf("GEMM figures: failed\n");
    }

    if (!skip_train) {
        const qkv_gpt_config baby = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
                                   .n_embd = 128},
                             mid = {.vocab_size = 65, .block_size = 256, .n_layer = 6,
                                    .n_head = 6, .n_embd = 384},
                             /* GPT-2 small's body: ~131 GFLOP a step */
                             gpt2 = {.vocab_size = 65, .block_size = 64, .n_layer = 12,
                                     .n_head = 12, .n_embd = 768};
        struct { const char *name; qkv_gpt_config model; int batch, steps; } cases[] = {
            {"baby: 4L/4H/128, B12 x T64", baby, 12, steps},
            {"6L/6H/384, B16 x T256", mid, 16, steps / 4 > 3 ? steps / 4 : 3},
            {"12L/12H/768, B4 x T64", gpt2, 4, steps / 2 > 3 ? steps / 2 : 3},
        };
        printf("\ntraining step (forward + backward + AdamW), median of timed steps after 3 warm-up,"
               "\nthe fastest and slowest of them, and their spread ((slowest - fastest) / median);"
               "\nbf16: the model's products in bf16 on the %s kernel (--precision bf16)\n",
               qkv_precision_kernel());
        printf("%-30s %8s %9s %11s %17s %11s %8s %10s\n", "model", "threads", "precision",
               "ms/step", "fastest-slowest", "tokens/s", "spread", "peak RSS");
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            double one[QKV_PRECISIONS] = {0}, fp32[3] = {0};
            for (int th = 1; th <= max_threads; th++)
                for (int p = 0; p < (no_bf16 ? 1 : QKV_PRECISIONS); p++) {
                    train_case tc = {cases[k].name, cases[k].model, cases[k].batch, th, 3,
                                     cases[k].steps, p};
                    double rss = 0;
                    result r = in_child(bench_train, &tc, &rss);
                    if (!r.ok) {
                        printf("%-30s %8d %9s %11s\n", cases[k].name, th, qkv_precision_name(p),
                               "failed");
                        continue;
                    }
                    int tokens = cases[k].batch * cases[k].model.block_size;
                    char range[32];
                    snprintf(range, sizeof range, "%.1f-%.1f", r.lo, r.hi);
                    printf("%-30s %8d %9s %11.1f %17s %11.0f %7.0f%% %8.1f MB", cases[k].name, th,
                           qkv_precision_name(p), r.value, range, tokens / (r.value / 1000),
                           100 * r.spread, rss);
                    if (th == 1)
                        one[p] = r.value;
                    else if (one[p] > 0)
                        printf("   %.2fx the speed of 1 thread", one[p] / r.value);
                    if (p == QKV_PRECISION_FP32)
                        fp32[th] = r.value;
                    else if (fp32[th] > 0)
                        printf("%s%.2fx fp32's speed", th > 1 ? ", " : "   ", fp32[th] / r.value);
                    printf("\n");
                }
        }
        /* The op tables: baby always, the larger models and bf16 when asked (--ops). */
        for (size_t k = 0; k < (ops ? sizeof cases / sizeof cases[0] : 1); k++)
            for (int p = 0; p < (ops && !no_bf16 ? QKV_PRECISIONS : 1); p++)
                for (int th = 1; th <= max_threads; th++) {
                    train_case tc = {cases[k].name, cases[k].model, cases[k].batch, th, 3,
                                     cases[k].steps, p};
                    double rss = 0;
                    if (!in_child(bench_ops, &tc, &rss).ok)
                        printf("%s: op table failed\n", cases[k].name);
                }
    }

    if (!skip_sample) {
        const qkv_gpt_config baby = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
                                     .n_embd = 128};
        printf("\nsampling from the baby model (256 tokens after a 1-token prompt, the window sliding "
               "past 64), median of %d runs\n", runs);
        printf("%-30s %8s %11s %8s\n", "", "threads", "tokens/s", "spread");
        for (int cache = 1; cache >= 0; cache--) {
            sample_case sc = {baby, 1, 256, runs, cache};
            double rss = 0;
            result r = in_child(bench_sample, &sc, &rss);
            printf("%-30s %8d %11.0f %7.0f%%\n", cache ? "with the key/value cache" :
                   "without (recompute the window)", 1, r.ok ? r.value : NAN, 100 * r.spread);
        }
    }
    if (context)
        bench_context(steps / 4 > 2 ? steps / 4 : 2, max_threads);
    print_load();
    return status;
}
