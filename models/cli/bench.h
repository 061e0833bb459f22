/* Shared by the parts of qkv bench. */
#ifndef QKV_CLI_BENCH_H
#define QKV_CLI_BENCH_H

#include <stdbool.h>

/* The median of n values (sorts them). */
double bench_median(double *v, int n);

/* Print GEMM GFLOP/s for the model's shapes at 1..max_threads threads, next
 * to the machine's measured FMA peak; quick measures fewer shapes. */
void bench_gemm(int runs, int max_threads, bool quick);

#endif
