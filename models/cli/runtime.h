/* Process-level helpers shared by the subcommands: a clock, a median and Ctrl-C. */
#ifndef QKV_CLI_RUNTIME_H
#define QKV_CLI_RUNTIME_H

#include <signal.h>

/* Seconds on a monotonic clock. */
double cli_now(void);

/* The median of v[0..n) (n >= 1); sorts v in place, so v[0] and v[n-1] are then the extremes. */
double cli_median(double *v, int n);

/* Set by Ctrl-C once cli_catch_sigint has run: long loops check it after
 * each step, save, and exit cleanly instead of dying mid-step. */
extern volatile sig_atomic_t cli_interrupted;

/* Route SIGINT to cli_interrupted. */
void cli_catch_sigint(void);

#endif
