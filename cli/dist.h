/* Data-parallel training over processes: N ranks train one model, each on a
 * slice of every global batch, and sum their gradients once per step.
 *
 * A `make MPI=1` build implements this with MPI (dist_mpi.c); the default
 * build has one rank and every call is a no-op (dist_none.c), so the
 * library and the default program never need MPI. Every collective here is
 * called by every rank in the same order, or the run hangs: the ranks first
 * meet and agree on their run (ranks_agree.h, dist_gather's one caller),
 * then the training loop votes on failures and stops (dist_max) before the
 * gradient sum, so that no rank ever waits for one that has left. */
#ifndef QKV_CLI_DIST_H
#define QKV_CLI_DIST_H

#include <stdbool.h>
#include <stddef.h>

#include "qkv/base.h"

/* Start the ranks (MPI_Init_thread); 0, or -1 with a message. Call first in main.
 * Only rank 0 speaks: the others' standard output is dropped, their
 * standard error (where failures go) is kept. */
int dist_init(int *argc, char ***argv);

/* Shut down cleanly (MPI_Finalize); the last call of a normal exit. */
void dist_finish(void);

/* This process's rank in [0, dist_size()); 0 in the default build. */
int dist_rank(void);

/* How many ranks train together; 1 in the default build. */
int dist_size(void);

/* This process's place among the ranks on its own machine (0 in the default
 * build): its threads are pinned past those of the ranks before it. */
int dist_local_rank(void);

/* v[0..n) := the sum of every rank's v[0..n), on every rank. 0 or -1. */
int dist_sum(qkv_real *v, size_t n);

/* Like dist_sum, for a few doubles (losses, counts). 0 or -1. */
int dist_sum_doubles(double *v, int n);

/* all[r·n .. r·n + n) := rank r's n bytes at mine, for every rank r, on
 * every rank (n the same on all). 0 or -1. */
int dist_gather(const void *mine, void *all, size_t n);

/* The largest of every rank's v: a vote where any rank can say "stop" or
 * "failed". Every rank gets the same answer. */
int dist_max(int v);

/* Whether this rank is cut off from the others: a collective that a signal
 * interrupted was given up (dist_mpi.c says why). From then on every
 * collective fails at once (dist_max gives this rank's own value), and the
 * rank saves on its own what it holds. False in the default build. */
bool dist_lost(void);

/* End every rank with status, after an error one rank cannot recover from
 * with the others still inside a collective. Does not return. */
_Noreturn void dist_abort(int status);

#endif
