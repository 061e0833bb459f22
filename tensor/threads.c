/* The number of threads qkv's kernels use (see qkv/base.h). OpenMP holds the
 * setting; this is its one place in the API, so a program embedding qkv
 * needs neither OMP_NUM_THREADS nor <omp.h>. */
#include <omp.h>
#include <stdatomic.h>

#include "qkv/base.h"

/* What OpenMP chose before any qkv_set_threads: OMP_NUM_THREADS, else the
 * cores available. 0 until the first call reads it. Atomic, not an OpenMP
 * named critical section: that would export a symbol (.gomp_critical_user_*)
 * outside qkv_'s namespace. */
static atomic_int initial_threads;

/* The most threads qkv_set_threads accepts: QKV_MAX_THREADS, or fewer when
 * OMP_THREAD_LIMIT says so (OpenMP would quietly give fewer anyway). Beyond
 * QKV_MAX_THREADS libgomp itself fails: at 100000 its team set-up overflows
 * the stack, at INT_MAX it exits the process. */
static int max_threads(void)
{
    int limit = omp_get_thread_limit();
    return limit < QKV_MAX_THREADS ? limit : QKV_MAX_THREADS;
}

int qkv_set_threads(int n)
{
    if (n < 0)
        return qkv_set_error("qkv_set_threads: n %d must be >= 1, or 0 for the default", n);
    if (n > max_threads())
        return qkv_set_error("qkv_set_threads: n %d is above the limit of %d threads%s", n,
                             max_threads(),
                             max_threads() < QKV_MAX_THREADS ? " (OMP_THREAD_LIMIT)" : "");
    int unset = 0;
    atomic_compare_exchange_strong(&initial_threads, &unset, omp_get_max_threads());
    omp_set_num_threads(n > 0 ? n : atomic_load(&initial_threads));
    return 0;
}

int qkv_threads(void) { return omp_get_max_threads(); }
