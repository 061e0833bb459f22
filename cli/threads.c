/* The OpenMP threads' count and pinning (see threads.h). libgomp keeps one
 * pool of threads for every parallel region of the same size, so pinning
 * them once at start-up holds for the whole run. */
#define _GNU_SOURCE
#include "threads.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "dist.h"
#include "qkv/base.h"
#include "runtime.h"
#include "threads_busy.h"

/* The cores we may use, read once before anything is pinned: pinned
 * threads (and threads they create) see only their own core. */
static cpu_set_t allowed;
static bool have_allowed;

/* Whether the count was --threads auto's (the watch may then lower it). */
static bool auto_count;

/* Whether the user placed the threads (OMP_PROC_BIND, OMP_PLACES or
 * GOMP_CPU_AFFINITY): then qkv pins nothing. */
static bool user_placed(void)
{
    return getenv("OMP_PROC_BIND") || getenv("OMP_PLACES") || getenv("GOMP_CPU_AFFINITY");
}

/* The cores this process may use (read once, before anything is pinned). */
static int all_cores(void)
{
    if (!have_allowed && !user_placed())
        have_allowed = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    return have_allowed ? CPU_COUNT(&allowed) : omp_get_num_procs();
}

/* --threads auto: one thread per core that other programs leave free (see
 * cli_free_cores), all the cores when that cannot be read. Ranks sharing a
 * machine would each count the same free cores: there every rank takes
 * the cores as before. */
static int auto_threads(int cores)
{
    int n = dist_size() > 1 ? -1 : cli_free_cores(cores);
    return n > 0 ? n : cores;
}

int cli_use_threads(int n)
{
    int cores = all_cores(); /* reads the cores we may use, before any is pinned */
    auto_count = n == ARG_AUTO;
    if (auto_count)
        n = auto_threads(cores);
    /* Only OMP_THREAD_LIMIT can refuse a count --threads' range allows:
     * then OpenMP's own count stands, and the user hears why. */
    if (qkv_set_threads(n) < 0)
        fprintf(stderr, "qkv: %s; using %d threads\n", qkv_last_error(), qkv_threads());
    if (user_placed() || !have_allowed)
        return 0;
    int cpus[CPU_SETSIZE], n_cpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[n_cpus++] = c;
    /* One thread is not pinned (and is unpinned if it was): on a busy
     * machine the scheduler moves it to whichever core is free. */
    if (n_cpus < 2 || qkv_threads() == 1) {
        pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
        return 0;
    }
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

/* Whether --threads auto's count is still to be settled (cli_use_threads_later). */
static bool settle_pending;

int cli_use_threads_later(int n)
{
    if (n != ARG_AUTO || dist_size() > 1)
        return cli_use_threads(n);
    /* One thread meanwhile: on a busy machine a second one would only wait. */
    cli_busy_watch_start();
    int pinned = cli_use_threads(1);
    auto_count = settle_pending = true;
    return pinned;
}

void cli_threads_settle(void)
{
    if (settle_pending) {
        settle_pending = false;
        cli_use_threads(ARG_AUTO);
    }
}

/* ---- the watch: threads that wait for a core ----
 * Threads ready to run that wait in the kernel's queue for a core are the
 * sign that other programs use the cores: a step then waits for its slowest
 * thread, and two threads can run slower than one (issue 33: one busy loop
 * made 2 threads 20% slower than 1). The kernel counts that wait per thread
 * (schedstat). */

/* How long one look at the wait lasts: long enough to hold many steps. */
#define WATCH_S 2.0

/* The share of the threads' time spent waiting for a core above which they
 * are starved: 3 ready threads on 2 cores wait 1/3 of the time. Measured on
 * 4 December (2-core EPYC): baby at 2 threads beside one busy loop 75-89%,
 * beside other sessions' work (load 6) 35-47%; a quiet machine's threads
 * wait only for the kernel to wake them. */
#define STARVED 0.2

void cli_threads_watch(void)
{
    static double t0 = -1, run0, wait0;
    static bool said;
    if (said || qkv_threads() < 2)
        return;
    double now = cli_now(), run, wait;
    if (t0 >= 0 && now - t0 < WATCH_S)
        return;
    if (!cli_wait_times(&run, &wait)) {
        said = true; /* the kernel does not say: nothing to watch */
        return;
    }
    double spent = run + wait - run0 - wait0; /* ready to run, on a core or not */
    double share = t0 >= 0 && spent > 0 ? (wait - wait0) / spent : 0;
    t0 = now, run0 = run, wait0 = wait;
    if (share <= STARVED)
        return;
    said = true;
    int n = qkv_threads();
    if (auto_count)
        cli_use_threads(1);
    fprintf(stderr, "qkv: the machine is busy: the %d threads waited for a core %.0f%% of the "
            "last %.0f s; %s\n", n, 100 * share, WATCH_S,
            qkv_threads() == 1 ? "going on with 1 thread (the results are the same)"
                               : "--threads 1 (or auto) may be faster");
}
