/* The loss log of a training run: CKPT.csv, appended as the run goes, and the plot CKPT.svg. */
#ifndef QKV_CLI_LOSS_LOG_H
#define QKV_CLI_LOSS_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "qkv/file.h"

/* The losses seen so far, and the CSV they are appended to. */
typedef struct loss_log {
    int n, cap;
    double *step, *train, *val; /* val is NAN where no evaluation ran */
    const char *prog;           /* "qkv train": messages start with it */
    const char *ckpt;           /* the checkpoint the files sit beside */
    qkv_output *csv;            /* CKPT.csv once log_open ran (in place, appended to) */
    int written;                /* rows in CKPT.csv so far */
    bool failed;                /* a write failed: said once, the log is written no more */
} loss_log;

/* Append one point to the log, growing it; 0 or -1 when out of memory. */
int log_add(loss_log *l, double step, double train, double val);

/* Read the points of CKPT.csv up to step `upto` into l (a resumed run's log). */
void log_read(loss_log *l, const char *ckpt, int64_t upto);

/* Log beside ckpt for the program prog ("qkv train"). CKPT.csv is made
 * (the header and the rows so far, put in place at once) with the first
 * row, so a run that fails before its first step leaves an existing log as
 * it was. 0, or -1 after printing why. */
int log_open(loss_log *l, const char *prog, const char *ckpt);

/* Append the rows not yet in CKPT.csv (making it first) and flush them, so a
 * kill loses at most the row being written. Call once a step's row is
 * complete (after its evaluation). 0, or -1 after printing why (once). */
int log_append(loss_log *l);

/* Write the plot CKPT.svg of the points so far. 0, or -1 after printing why (once). */
int log_plot(loss_log *l);

/* Finish CKPT.csv and free the log. 0, or -1 after printing why. */
int log_close(loss_log *l);

#endif
