/* The clock and the Ctrl-C flag (see runtime.h). */
#include "runtime.h"

#include <time.h>

volatile sig_atomic_t cli_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    cli_interrupted = 1;
}

void cli_catch_sigint(void) { signal(SIGINT, on_sigint); }

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
