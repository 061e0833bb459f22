/* Process-level helpers shared by the subcommands: a clock and a median
 * (signals.h has Ctrl-C, output.h the checks of outputs). */
#ifndef QKV_CLI_RUNTIME_H
#define QKV_CLI_RUNTIME_H

/* Seconds on a monotonic clock. */
double cli_now(void);

/* The median of v[0..n) (n >= 1); sorts v in place, so v[0] and v[n-1] are then the extremes. */
double cli_median(double *v, int n);

#endif
