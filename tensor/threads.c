/* The number of threads qkv's kernels use (see qkv/base.h). OpenMP holds the
 * setting; this is its one place in the API, so a program embedding qkv
 * needs neither OMP_NUM_THREADS nor <omp.h>. */
#include <dirent.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "qkv/base.h"

/* ---- fork: libgomp is not fork-safe ----
 * A process forked while its OpenMP threads exist has only the thread that
 * forked, but libgomp's pool still counts the others: the child's first
 * parallel region of more than one thread waits for them forever (a child
 * blocked with 0.04 s of CPU). A team of one never touches the pool, so a
 * forked child of a threaded process runs qkv on one thread, and
 * qkv_set_threads says so rather than hang. The handlers are registered
 * when the library is loaded, so they see every fork. */

/* Whether the process had threads besides the one forking, as fork began. */
static bool had_threads;

/* Whether this process is such a fork (set in the child, read by qkv_set_threads). */
static atomic_bool forked_single;

/* Before fork, in the parent: count the process's threads (/proc/self/task);
 * without /proc, assume threads ran. Another program's threads count too:
 * the rule errs towards the child that works. */
static void before_fork(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    had_threads = !d || n > 1;
}

/* In the child: one thread for qkv's work, if the parent had threads. */
static void in_child(void)
{
    if (!had_threads)
        return;
    atomic_store(&forked_single, true);
    omp_set_num_threads(1);
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(before_fork, NULL, in_child);
}

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
    if (n != 1 && atomic_load(&forked_single))
        return qkv_set_error("qkv_set_threads: n %d: this process was forked from one whose "
                             "threads were running, and OpenMP (libgomp) cannot start threads "
                             "in such a child: qkv runs on 1 thread here (exec a new program "
                             "to use more)", n);
    int unset = 0;
    atomic_compare_exchange_strong(&initial_threads, &unset, omp_get_max_threads());
    omp_set_num_threads(n > 0 ? n : atomic_load(&initial_threads));
    return 0;
}

int qkv_threads(void) { return omp_get_max_threads(); }
