/* How busy the machine is: what --threads auto and the starved-threads
 * warning read (threads.c). */
#ifndef QKV_CLI_THREADS_BUSY_H
#define QKV_CLI_THREADS_BUSY_H

#include <stdbool.h>

/* The cores, of the `cpus` this process may use, that other programs leave
 * free: watched for 0.2 s in /proc/stat, rounded to whole cores, at least 1
 * and at most cpus. A core half busy counts as free. Niced programs count
 * as busy only when this process is niced too. -1 when /proc/stat cannot be
 * read. */
int cli_free_cores(int cpus);

/* Start the watch the next cli_free_cores reads, so that the work between
 * (loading a corpus, building a model) counts toward its 0.2 s: that call
 * then waits only for what is left. This process's own CPU time over the
 * watch is not counted as other programs'. */
void cli_busy_watch_start(void);

/* The seconds this process's threads have so far run on a core and waited
 * for one while ready to run (/proc/self/task/N/schedstat, summed); false
 * when the kernel does not keep them. */
bool cli_wait_times(double *run_s, double *wait_s);

#endif
