/* Thread count and placement for the qkv program. */
#ifndef QKV_CLI_THREADS_H
#define QKV_CLI_THREADS_H

/* Use n OpenMP threads, each pinned to its own core. On a small shared
 * machine unpinned threads often pile onto one core and two threads run no
 * faster than one; pinning is what OMP_PROC_BIND=true OMP_PLACES=cores does.
 * If the user set OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY, their
 * choice stands and nothing is pinned here (OMP_PROC_BIND=false turns
 * pinning off). Returns the number of threads pinned (0 when none). */
int cli_use_threads(int n);

#endif
