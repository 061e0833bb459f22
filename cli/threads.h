/* Thread count and placement for the qkv program, and the watch that says
 * when the machine is too busy for them. */
#ifndef QKV_CLI_THREADS_H
#define QKV_CLI_THREADS_H

/* Use n OpenMP threads, each pinned to its own core. On a small shared
 * machine unpinned threads often pile onto one core and two threads run no
 * faster than one; pinning is what OMP_PROC_BIND=true OMP_PLACES=cores does.
 * If the user set OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY, their
 * choice stands and nothing is pinned here (OMP_PROC_BIND=false turns
 * pinning off). One thread is left unpinned. n ARG_AUTO (--threads auto):
 * as many threads as the machine has cores free (cli_free_cores), all its
 * cores when that cannot be read or with several ranks. Returns the number
 * of threads pinned (0 when none). */
int cli_use_threads(int n);

/* cli_use_threads for a command that loads before it computes: with n
 * ARG_AUTO it starts watching the machine (cli_busy_watch_start) and runs
 * one thread until cli_threads_settle, which counts the free cores then,
 * the loading having covered the watch's 0.2 s or part of it. */
int cli_use_threads_later(int n);

/* Settle the count cli_use_threads_later left open (nothing otherwise).
 * Call outside any parallel region, before the first step. */
void cli_threads_settle(void);

/* Call between steps, outside any parallel region: every 2 s it reads how
 * long the threads waited for a core. Starved threads (more than 20% of
 * their time waiting) are said once on stderr, with advice; a count that
 * --threads auto chose drops to 1 thread, which computes the same bits. */
void cli_threads_watch(void);

#endif
