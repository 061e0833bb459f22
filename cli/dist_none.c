/* The default build's one rank (see dist.h): no MPI, nothing to combine. */
#include <stdlib.h>
#include <string.h>

#include "dist.h"

int dist_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

void dist_finish(void) {}

int dist_rank(void) { return 0; }

int dist_size(void) { return 1; }

int dist_local_rank(void) { return 0; }

int dist_sum(qkv_real *v, size_t n)
{
    (void)v;
    (void)n;
    return 0;
}

int dist_sum_doubles(double *v, int n)
{
    (void)v;
    (void)n;
    return 0;
}

int dist_gather(const void *mine, void *all, size_t n)
{
    memcpy(all, mine, n);
    return 0;
}

int dist_max(int v) { return v; }

bool dist_lost(void) { return false; }

_Noreturn void dist_abort(int status) { exit(status); }
