/* Shared by the parts of qkv bench. */
#ifndef QKV_CLI_BENCH_H
#define QKV_CLI_BENCH_H

#include <stdbool.h>

#include "qkv/gpt.h"

/* The CPUs the library compiles vector code of its own for, by the same tests
 * as its kernels (tensor/kernels/cpu.h): on x86-64 each row kernel once per
 * path, so a wider path must be faster (bench_kernels.c); the FMA loop of
 * the peak is written for each (bench_gemm.c). The double build has only
 * plain C. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(QKV_DOUBLE)
#define BENCH_X86 1
#else
#define BENCH_X86 0
#endif
#if defined(__aarch64__) && !defined(QKV_DOUBLE)
#define BENCH_AARCH64 1
#else
#define BENCH_AARCH64 0
#endif

/* The most threads bench_gemm times: its table has columns for 1 and 2. */
#define BENCH_GEMM_MAX_THREADS 2

/* Print GEMM GFLOP/s for the model's shapes at 1..max_threads threads (at
 * most BENCH_GEMM_MAX_THREADS; more are clamped), next to the machine's
 * measured FMA peak; quick measures fewer shapes. */
void bench_gemm(int runs, int max_threads, bool quick);

/* Print every hot kernel's throughput on every vector path this CPU runs
 * (one thread) and check each path is at least `need` times as fast as the
 * next narrower one; quick times shorter rounds. Returns how many failed. */
int bench_kernels(bool quick, double need);

/* Print one thread's fp32 and bf16 GEMM on every vector path this CPU runs
 * and check that a bf16 kernel with bf16 units is at least `need` times the
 * fp32 one (bench_bf16.c); quick times fewer rounds. Returns how many failed. */
int bench_bf16(bool quick, double need);

/* What a child measured, sent back through a pipe. */
typedef struct result {
    double value;     /* median ms/step or tokens/s */
    double spread;    /* (max - min) / median of the timed runs */
    double lo, hi;    /* the fastest and slowest timed run (training: ms/step) */
    int ok;           /* 1 when the measurement ran */
    double params_mb; /* training: the parameters with their gradients and AdamW moments */
    double arena_mb;  /* the context sweep: a step's activations, graph and gradients */
} result;

/* Run fn(arg) in a child process; its result comes through a pipe and its
 * peak RSS (MB) from wait4 (cmd_bench.c). */
result in_child(result (*fn)(const void *), const void *arg, double *rss_mb);

/* One training configuration to time. */
typedef struct train_case {
    const char *name;
    qkv_gpt_config model;
    int batch, threads, warmup, steps;
    int precision; /* of the model's products (qkv/precision.h): 0 is fp32 */
} train_case;

/* Median ms per training step of a train_case (run it in a child) over a
 * random corpus, with the memory of its parameters. */
result bench_train(const void *arg);

/* The context sweep: the baby model at T = 256 ... 8192 with B·T fixed,
 * each T in a child process of its own (for its own peak RSS), `steps`
 * timed steps after one warm-up, on `threads` threads (bench_context.c). */
void bench_context(int steps, int threads);

#endif
