/* The per-op time table of a training step (see qkv/profile.h and profile.h). */
#include "profile.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { MAX_ROWS = 64 }; /* distinct (op, shape) pairs; more are lumped into the last row */

bool qkv__profiling;
static qkv_op_time rows[MAX_ROWS];
static int n_rows;
static double last; /* when the previous forward was charged, or the mark */

double qkv__profile_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void qkv_profile_start(void)
{
    memset(rows, 0, sizeof rows);
    n_rows = 0;
    last = qkv__profile_now();
    qkv__profiling = true;
}

void qkv_profile_stop(void) { qkv__profiling = false; }

void qkv_profile_mark(void) { last = qkv__profile_now(); }

const qkv_op_time *qkv_profile_rows(int *n)
{
    if (qkv__null("qkv_profile_rows", "n", n))
        return NULL;
    *n = n_rows;
    return rows;
}

/* The row of op with first input in and output out, made on first use:
 * named by the op, the input's last extent and the output's shape. */
static qkv_op_time *row_of(const char *op, const qkv_tensor *in, const qkv_tensor *out)
{
    char what[sizeof rows[0].what], shape[64];
    snprintf(what, sizeof what, "%s %d->%s", op, in->shape[in->ndim - 1],
             qkv_shape_str(out, shape, sizeof shape));
    for (int i = 0; i < n_rows; i++)
        if (strcmp(rows[i].what, what) == 0)
            return &rows[i];
    if (n_rows == MAX_ROWS) {
        snprintf(rows[MAX_ROWS - 1].what, sizeof what, "(other ops)");
        return &rows[MAX_ROWS - 1];
    }
    snprintf(rows[n_rows].what, sizeof what, "%s", what);
    return &rows[n_rows++];
}

void qkv__profile_forward(const char *op, const qkv_tensor *in, const qkv_tensor *out)
{
    double now = qkv__profile_now();
    qkv_op_time *r = row_of(op, in, out);
    r->forward += now - last;
    r->calls++;
    last = now;
}

void qkv__profile_backward(const char *op, const qkv_tensor *in, const qkv_tensor *out,
                           double seconds)
{
    row_of(op, in, out)->backward += seconds;
}
