/* Pinning the OpenMP threads (see threads.h). libgomp keeps one pool of
 * threads for every parallel region of the same size, so pinning them once
 * at start-up holds for the whole run. */
#define _GNU_SOURCE
#include "threads.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"
#include "qkv/base.h"

int cli_use_threads(int n)
{
    /* Only OMP_THREAD_LIMIT can refuse a count --threads' range allows:
     * then OpenMP's own count stands, and the user hears why. */
    if (qkv_set_threads(n) < 0)
        fprintf(stderr, "qkv: %s; using %d threads\n", qkv_last_error(), qkv_threads());
    if (getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY"))
        return 0;
    /* The cores we may use, read once before anything is pinned: pinned
     * threads (and threads they create) see only their own core. */
    static cpu_set_t allowed;
    static int have_allowed;
    if (!have_allowed) {
        if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
            return 0;
        have_allowed = 1;
    }
    int cpus[CPU_SETSIZE], n_cpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[n_cpus++] = c;
    if (n_cpus < 2)
        return 0; /* one core: nothing to spread over */
    /* Ranks sharing this machine take the cores after the ranks before them. */
    int first = dist_local_rank() * n, pinned = 0;
#pragma omp parallel reduction(+ : pinned)
    {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[(first + omp_get_thread_num()) % n_cpus], &one);
        pinned += pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
    }
    return pinned;
}
