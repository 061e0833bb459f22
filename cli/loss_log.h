/* The loss log of a training run: CKPT.csv, appended as the run goes, and the plot CKPT.svg. */
#ifndef QKV_CLI_LOSS_LOG_H
#define QKV_CLI_LOSS_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "qkv/file.h"

/* The losses seen so far, and the CSV they are appended to. */
typedef struct loss_log {
    int n, cap;
    double *step, *train, *val; /* val is NAN where no evaluation ran */
    double *share;              /* the share of a whole evaluation (cfg.eval_iters batches)
                                   behind val: below 1 when a signal or the clock cut it short */
    const char *prog;           /* "qkv train": messages start with it */
    const char *ckpt;           /* the checkpoint the files sit beside */
    qkv_output *csv;            /* CKPT.csv once log_open ran (in place, appended to) */
    int written;                /* rows in CKPT.csv so far */
    bool failed;                /* a write failed: said once, the log is written no more */
    bool waits;                 /* another run's checkpoint is at ckpt: no file is written
                                   until the first save replaces it (see log_saving) */
    char *aside[2];             /* that run's CKPT.csv and CKPT.svg (cli_log_suffixes), moved aside during the save */
    dev_t old_dev;              /* and its checkpoint's device and inode, to tell after a */
    ino_t old_ino;              /* failed save whether it was replaced all the same */
} loss_log;

/* Append one point to the log, growing it; 0 or -1 when out of memory.
 * CKPT.csv's rows are step,train_loss,val_loss,val_share: the last two
 * empty where no evaluation ran, val_share below 1 marking a partial one. */
int log_add(loss_log *l, double step, double train, double val, double share);

/* Read the points of CKPT.csv up to step `upto` into l (a resumed run's log). */
void log_read(loss_log *l, const char *ckpt, int64_t upto);

/* Log beside ckpt for the program prog ("qkv train"). CKPT.csv is made
 * (the header and the rows so far, put in place at once) with the first
 * row, so a run that fails before its first step leaves an existing log as
 * it was. When the claim of ckpt found another run's checkpoint there (a
 * --force run; cli_replaces), the log waits instead: neither CKPT.csv nor
 * CKPT.svg is written before the first save, so that the old checkpoint is
 * never left beside the new run's log. 0, or -1 after printing why. */
int log_open(loss_log *l, const char *prog, const char *ckpt);

/* Append the rows not yet in CKPT.csv (making it first) and flush them, so a
 * kill loses at most the row being written. Call once a step's row is
 * complete (after its evaluation). 0, or -1 after printing why (once). */
int log_append(loss_log *l);

/* Call before every save of the checkpoint. At the first save of a log that
 * waits, the old run's CKPT.csv and CKPT.svg are moved aside (renamed to
 * CKPT.csv.old-XXXXXX), so that at no moment does a checkpoint stand beside
 * a log of another run: a kill during the save leaves the old checkpoint and
 * its log aside, not a mix. 0, or -1 with qkv_last_error set (nothing aside). */
int log_saving(loss_log *l);

/* Call after every save, saved telling whether it worked. After the first
 * save of a log that waits: if it worked, the old log is removed and the new
 * CKPT.csv written (with every row so far); if not, the old log is put back. */
void log_saved(loss_log *l, bool saved);

/* Write the plot CKPT.svg of the points so far. 0, or -1 after printing why (once). */
int log_plot(loss_log *l);

/* Finish CKPT.csv and free the log. 0, or -1 after printing why. */
int log_close(loss_log *l);

#endif
