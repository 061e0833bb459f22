/* The loss log of a training run (CKPT.csv, CKPT.svg). */
#ifndef QKV_CLI_LOSS_LOG_H
#define QKV_CLI_LOSS_LOG_H

#include <stdint.h>

/* The losses seen so far, for the CSV log and the plot. */
typedef struct loss_log {
    int n, cap;
    double *step, *train, *val; /* val is NAN where no evaluation ran */
} loss_log;

/* Append one point to the log, growing it; 0 or -1 when out of memory. */
int log_add(loss_log *l, double step, double train, double val);

/* Read the points of CKPT.csv up to step `upto` into l (a resumed run's log). */
void log_read(loss_log *l, const char *ckpt, int64_t upto);

/* Write PATH.csv and PATH.svg next to the checkpoint. */
void write_log(const loss_log *l, const char *ckpt);

#endif
