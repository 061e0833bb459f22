/* Data parallelism over MPI (see dist.h); built only by `make MPI=1`. */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"
#include "signals.h"

/* The MPI type of qkv_real: the program's precision decides it. */
#ifdef QKV_DOUBLE
#define REAL_TYPE MPI_DOUBLE
#else
#define REAL_TYPE MPI_FLOAT
#endif

static int rank, size = 1, local_rank;

/* -1 with MPI's own words for code, naming the call. */
static int mpi_failed(const char *call, int code)
{
    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, why, &len);
    return qkv_set_error("%s: %.*s", call, len, why);
}

/* ---- a rank lost: every collective is started non-blocking and polled ----
 * A blocking MPI_Allreduce waits for a dead rank forever: killed with -9,
 * the rank left its peers inside the step's gradient sum, and Open MPI's
 * mpirun, seeing it die, sends the survivors SIGTERM and SIGKILL a second
 * later (odls_base_sigkill_timeout), so the run lost every step since its
 * last save. A rank cannot tell a dead peer from a slow one, but the
 * launcher can and says so with that SIGTERM (as it does for Ctrl-C): so
 * each collective is polled (MPI_Test), and once a signal has arrived the
 * collective gets GRACE seconds more, enough for live peers that got the
 * same signal to finish their step and join it, and then this rank stops
 * waiting: the rank is cut off (dist_lost), every later collective fails at
 * once, and the training loop saves the last completed step, which every
 * rank holds whole (the weights change only after a gradient sum completes).
 * Chosen over an error handler (Open MPI without ULFM never reports a dead
 * peer in a collective) and a time limit without a signal (a slow step, an
 * evaluation, would pass for a death). */
static const double GRACE = 0.3;

static bool lost; /* a collective was abandoned: this rank is on its own */

/* -1 naming call when this rank is cut off from the others (see above). */
static int cut_off(const char *call)
{
    return qkv_set_error("%s: rank %d of %d lost contact with the other ranks (a rank died or "
                         "they were stopped)", call, rank, size);
}

/* Wait for the collective req, polling; 0, or -1 when it failed or was
 * given up after a signal (then this rank is cut off). */
static int wait_for(MPI_Request *req, const char *call)
{
    double signalled = 0;
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            lost = true;
            return mpi_failed(call, rc);
        }
        if (done)
            return 0;
        if (cli_interrupted && signalled == 0)
            signalled = MPI_Wtime();
        if (signalled > 0 && MPI_Wtime() - signalled > GRACE) {
            lost = true; /* the request stays pending: MPI cannot cancel a collective */
            return cut_off(call);
        }
        sched_yield(); /* the peers may share this core */
    }
}

/* An all-reduce of v (count values of type, in place) with op, polled. */
static int allreduce(void *v, int count, MPI_Datatype type, MPI_Op op, const char *call)
{
    if (lost)
        return cut_off(call);
    MPI_Request req;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, v, count, type, op, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS)
        return mpi_failed(call, rc);
    return wait_for(&req, call);
}

bool dist_lost(void) { return lost; }

int dist_init(int *argc, char ***argv)
{
    /* Only this thread calls MPI, but OpenMP's threads run beside it: the
     * standard asks such a program for MPI_THREAD_FUNNELED, where MPI_Init
     * promises a single thread (Open MPI and MPICH both provide it). */
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
        return mpi_failed("MPI_Init_thread", rc);
    if (provided < MPI_THREAD_FUNNELED)
        return qkv_set_error("this MPI does not allow OpenMP threads beside it "
                             "(MPI_THREAD_FUNNELED)");
    /* Errors come back as codes, so a failing rank can say why before the
     * job ends, instead of MPI aborting with its own message. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(local, &local_rank);
        MPI_Comm_free(&local);
    }
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        return qkv_set_error("rank %d: cannot silence its standard output", rank);
    return 0;
}

void dist_finish(void)
{
    /* A cut-off rank's peers are gone or waiting in a collective it left:
     * MPI_Finalize would wait for them. */
    if (!lost)
        MPI_Finalize();
}

int dist_rank(void) { return rank; }

int dist_size(void) { return size; }

int dist_local_rank(void) { return local_rank; }

int dist_sum(qkv_real *v, size_t n)
{
    /* MPI counts are ints: a buffer past INT_MAX elements goes in pieces. */
    for (size_t done = 0; done < n;) {
        int count = n - done > INT_MAX ? INT_MAX : (int)(n - done);
        if (allreduce(v + done, count, REAL_TYPE, MPI_SUM, "MPI_Allreduce (gradients)") < 0)
            return -1;
        done += (size_t)count;
    }
    return 0;
}

int dist_sum_doubles(double *v, int n)
{
    return allreduce(v, n, MPI_DOUBLE, MPI_SUM, "MPI_Allreduce");
}

int dist_gather(const void *mine, void *all, size_t n)
{
    if (n > INT_MAX)
        return qkv_set_error("dist_gather: %zu bytes is more than MPI counts", n);
    int rc = MPI_Allgather(mine, (int)n, MPI_BYTE, all, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_failed("MPI_Allgather", rc);
}

int dist_max(int v)
{
    int out = v;
    /* Cut off, this rank's own vote is the answer: there is no one to agree with. */
    if (allreduce(&out, 1, MPI_INT, MPI_MAX, "MPI_Allreduce (a vote)") < 0) {
        if (!lost)
            dist_abort(1); /* the vote itself failed: no rank can be trusted to agree */
        return v;
    }
    return out;
}

_Noreturn void dist_abort(int status)
{
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}
