/* How busy the machine is, read from /proc (see threads_busy.h): the cores
 * other programs leave free, and how long this process's threads waited
 * for a core. Linux only; elsewhere each reader says it could not tell. */
#define _GNU_SOURCE
#include "threads_busy.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* How long cli_free_cores watches the machine: at /proc/stat's 100 ticks a
 * second, 20 ticks a core, enough to tell a busy core from an idle one. */
#define WATCH_NS 200000000L

/* The busy and total ticks of all cores so far (/proc/stat's first line);
 * false when it cannot be read. Time of niced programs is not busy when
 * `nice_is_free`: against a nice-19 build a nice-0 thread gets ~98% of a
 * core. iowait is idle: that core runs nothing. */
static bool read_ticks(bool nice_is_free, double *busy, double *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return false;
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys,
                     &idle, &iowait, &irq, &softirq, &steal);
    fclose(f);
    if (got != 8)
        return false;
    *busy = (double)(user + sys + irq + softirq + steal) + (nice_is_free ? 0 : (double)nice);
    *total = *busy + (double)(idle + iowait) + (nice_is_free ? (double)nice : 0);
    return true;
}

/* A watch of the machine: /proc/stat's ticks, this process's own CPU time
 * and the clock when it began. */
typedef struct watch {
    bool on;
    double busy, total, own, t;
} watch;

static watch begun;

/* This process's CPU time so far (all its threads), in seconds. */
static double own_cpu(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* The clock, in seconds: cli_now's (runtime.c), which this file cannot
 * call: it is also linked alone into the tests (libqkvcli.a). */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static bool watch_begin(watch *w, bool nice_is_free)
{
    w->on = read_ticks(nice_is_free, &w->busy, &w->total);
    w->own = own_cpu();
    w->t = now_s();
    return w->on;
}

void cli_busy_watch_start(void)
{
    watch_begin(&begun, getpriority(PRIO_PROCESS, 0) <= 0);
}

int cli_free_cores(int cpus)
{
    /* Niced programs are no competition unless this one is niced too. */
    bool nice_is_free = getpriority(PRIO_PROCESS, 0) <= 0;
    watch w = begun;
    begun.on = false; /* a watch serves one count */
    if (!w.on && !watch_begin(&w, nice_is_free))
        return -1;
    /* What is left of the watch: all of it, or what the work since
     * cli_busy_watch_start has not yet covered. */
    double left = 1e-9 * WATCH_NS - (now_s() - w.t);
    if (left > 0)
        nanosleep(&(struct timespec){0, (long)(left * 1e9)}, NULL);
    double b1, t1;
    if (!read_ticks(nice_is_free, &b1, &t1) || t1 <= w.total)
        return -1;
    /* /proc/stat counts every core online, this process's own work too
     * (loading while it watched): that is not other programs'. */
    double online = (double)sysconf(_SC_NPROCESSORS_ONLN);
    double own_ticks = (own_cpu() - w.own) * (double)sysconf(_SC_CLK_TCK);
    double others = fmax(0, b1 - w.busy - own_ticks);
    double free_cores = online * (1 - others / (t1 - w.total)) - (online - cpus);
    int n = (int)lround(free_cores);
    return n < 1 ? 1 : n > cpus ? cpus : n;
}

bool cli_wait_times(double *run_s, double *wait_s)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    double run = 0, wait = 0;
    int read = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long r, w;
        if (f && fscanf(f, "%llu %llu", &r, &w) == 2) {
            run += (double)r;
            wait += (double)w;
            read++;
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    *run_s = run * 1e-9;
    *wait_s = wait * 1e-9;
    return read > 0;
}
