/* Data parallelism over MPI (see dist.h); built only by `make MPI=1`. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist.h"

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

void dist_finish(void) { MPI_Finalize(); }

int dist_rank(void) { return rank; }

int dist_size(void) { return size; }

int dist_local_rank(void) { return local_rank; }

int dist_sum(qkv_real *v, size_t n)
{
    /* MPI counts are ints: a buffer past INT_MAX elements goes in pieces. */
    for (size_t done = 0; done < n;) {
        int count = n - done > INT_MAX ? INT_MAX : (int)(n - done);
        int rc = MPI_Allreduce(MPI_IN_PLACE, v + done, count, REAL_TYPE, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return mpi_failed("MPI_Allreduce (gradients)", rc);
        done += (size_t)count;
    }
    return 0;
}

int dist_sum_doubles(double *v, int n)
{
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : mpi_failed("MPI_Allreduce", rc);
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
    if (MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        dist_abort(1); /* the vote itself failed: no rank can be trusted to agree */
    return out;
}

_Noreturn void dist_abort(int status)
{
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}
