/* The loss log of a training run: CKPT.csv and the plot CKPT.svg next to the
 * checkpoint, and reading a saved run's log back on resume. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loss_log.h"
#include "output.h"
#include "qkv/qkv.h"
#include "cli/viz/viz.h"

/* Grow *a to cap values; whether it worked (*a is kept either way). */
static bool grow(double **a, int cap)
{
    double *p = realloc(*a, (size_t)cap * sizeof *p);
    if (p)
        *a = p;
    return p != NULL;
}

int log_add(loss_log *l, double step, double train, double val, double share)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        /* Every array grows, whatever an earlier one did: each keeps its values. */
        int ok = grow(&l->step, cap);
        ok += grow(&l->train, cap);
        ok += grow(&l->val, cap);
        ok += grow(&l->share, cap);
        if (ok < 4)
            return -1;
        l->cap = cap;
    }
    l->step[l->n] = step;
    l->train[l->n] = train;
    l->val[l->n] = val;
    l->share[l->n++] = share;
    return 0;
}

/* The points of the log next to ckpt (CKPT.csv) up to step `upto`, so that a
 * resumed run's log and plot continue the saved run's instead of starting
 * over. A missing or unreadable log (a FIFO is refused, not waited on), or
 * the first line that does not parse, ends the read. */
void log_read(loss_log *l, const char *ckpt, int64_t upto)
{
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s.csv", ckpt);
    FILE *f = qkv_input_open(path);
    if (!f)
        return;
    for (bool header = true; fgets(line, sizeof line, f); header = false) {
        char *end, *after;
        double step = strtod(line, &end), train, val = NAN, share = NAN;
        if (header)
            continue;
        if (*end != ',' || step > (double)upto)
            break;
        train = strtod(end + 1, &end);
        if (*end != ',')
            break;
        if (end[1] != '\n' && end[1] != ',') { /* an empty third field: no evaluation here */
            val = strtod(end + 1, &after);
            if (after == end + 1)
                break;
            /* The share of a whole evaluation behind val; a log written before
             * the column existed has none: its evaluations were whole or unmarked. */
            share = *after == ',' ? strtod(after + 1, NULL) : 1;
        }
        if (log_add(l, step, train, val, share) < 0)
            break;
    }
    fclose(f);
}

/* Say once that the log cannot be written, and write it no more; returns -1. */
static int log_failed(loss_log *l, const char *why)
{
    if (!l->failed)
        fprintf(stderr, "%s: %s\n", l->prog, why);
    l->failed = true;
    return -1;
}

/* Create CKPT.csv with its header, put in place at once, open for appending. */
static int start_csv(loss_log *l)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.csv", l->ckpt);
    if (!(l->csv = qkv_output_open(path)))
        return log_failed(l, qkv_last_error());
    fputs("step,train_loss,val_loss,val_share\n", qkv_output_file(l->csv));
    return qkv_output_publish(l->csv) < 0 ? log_failed(l, qkv_last_error()) : 0;
}

int log_open(loss_log *l, const char *prog, const char *ckpt)
{
    l->prog = prog;
    l->ckpt = ckpt;
    l->waits = cli_replaces(ckpt);
    return l->n > 0 ? log_append(l) : 0;
}

/* Put the old run's files moved aside back in place (put_back), or remove them. */
static void settle_aside(loss_log *l, bool put_back)
{
    char path[4096];
    for (int i = 0; i < 2; i++) {
        if (!l->aside[i])
            continue;
        snprintf(path, sizeof path, "%s%s", l->ckpt, cli_log_suffixes[i]);
        if (put_back && rename(l->aside[i], path) != 0)
            fprintf(stderr, "%s: cannot put '%s' back (%s): it is kept as '%s'\n", l->prog, path,
                    strerror(errno), l->aside[i]);
        else if (!put_back)
            unlink(l->aside[i]);
        free(l->aside[i]);
        l->aside[i] = NULL;
    }
}

int log_saving(loss_log *l)
{
    char path[4096];
    struct stat st;
    if (l->waits && stat(l->ckpt, &st) == 0) {
        l->old_dev = st.st_dev;
        l->old_ino = st.st_ino;
    }
    for (int i = 0; l->waits && i < 2; i++) {
        snprintf(path, sizeof path, "%s%s", l->ckpt, cli_log_suffixes[i]);
        if (lstat(path, &st) != 0)
            continue; /* the old run left none */
        /* A fresh name of our own beside it, which the rename then takes over. */
        size_t n = strlen(path);
        char *aside = malloc(n + sizeof ".old-XXXXXX");
        int fd = -1;
        if (aside) {
            memcpy(aside, path, n);
            memcpy(aside + n, ".old-XXXXXX", sizeof ".old-XXXXXX");
            fd = mkstemp(aside);
        }
        if (fd >= 0)
            close(fd);
        if (fd < 0 || rename(path, aside) != 0) {
            int err = aside ? errno : ENOMEM;
            if (fd >= 0)
                unlink(aside);
            free(aside);
            settle_aside(l, true);
            return qkv_set_error("cannot move the old run's '%s' aside before its checkpoint is "
                                 "replaced: %s", path, strerror(err));
        }
        l->aside[i] = aside;
    }
    return 0;
}

void log_saved(loss_log *l, bool saved)
{
    if (!l->waits)
        return;
    /* A save that failed after its rename (syncing the folder) replaced the checkpoint all the
     * same: the old log must not come back beside it. */
    struct stat st;
    saved |= stat(l->ckpt, &st) == 0 && (st.st_dev != l->old_dev || st.st_ino != l->old_ino);
    settle_aside(l, !saved);
    if (saved) {
        l->waits = false;
        log_append(l); /* the header and every row so far; a failure is said there */
    }
}

int log_append(loss_log *l)
{
    if (l->failed)
        return -1;
    /* Not opened (not this rank's to write), waiting for the first save, or nothing new. */
    if (!l->ckpt || l->waits || l->written == l->n)
        return 0;
    if (!l->csv && start_csv(l) < 0)
        return -1;
    FILE *f = qkv_output_file(l->csv);
    for (; l->written < l->n; l->written++) {
        int i = l->written;
        fprintf(f, "%.0f,%.6f,", l->step[i], l->train[i]);
        if (!isnan(l->val[i]))
            fprintf(f, "%.6f,%.4g\n", l->val[i], l->share[i]);
        else
            fputs(",\n", f);
    }
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) {
        char why[4200];
        snprintf(why, sizeof why, "cannot write '%s.csv': %s", l->ckpt,
                 errno ? strerror(errno) : "a write failed");
        return log_failed(l, why);
    }
    return 0;
}

int log_plot(loss_log *l)
{
    if (l->failed || !l->ckpt || l->waits || l->n == 0)
        return l->failed ? -1 : 0;
    /* The training curve at every logged point, validation where evaluated. */
    double *vs = malloc((size_t)(l->n + 1) * sizeof *vs), *vv = malloc((size_t)(l->n + 1) * sizeof *vv);
    int nv = 0, rc = vs && vv ? 0 : log_failed(l, "out of memory for the plot");
    for (int i = 0; rc == 0 && i < l->n; i++)
        if (!isnan(l->val[i])) {
            vs[nv] = l->step[i];
            vv[nv++] = l->val[i];
        }
    svg_series series[2] = {{"train", l->n, l->step, l->train}, {"val", nv, vs, vv}};
    char path[4096], title[64];
    snprintf(path, sizeof path, "%s.svg", l->ckpt);
    snprintf(title, sizeof title, "%s: loss", l->prog);
    if (rc == 0 && svg_lines(path, title, "step", "loss (nats/char)", nv ? 2 : 1, series) < 0)
        rc = log_failed(l, qkv_last_error());
    free(vs);
    free(vv);
    return rc;
}

int log_close(loss_log *l)
{
    int rc = l->failed ? -1 : 0;
    if (l->csv) {
        if (l->failed)
            qkv_output_abort(l->csv);
        else if (qkv_output_commit(l->csv) < 0)
            rc = log_failed(l, qkv_last_error());
    }
    free(l->step);
    free(l->train);
    free(l->val);
    free(l->share);
    *l = (loss_log){0};
    return rc;
}
