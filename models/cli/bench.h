/* Shared by the parts of qkv bench. */
#ifndef QKV_CLI_BENCH_H
#define QKV_CLI_BENCH_H

#include <stdbool.h>

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

#endif
