/* The loss log of a training run: CKPT.csv and the plot CKPT.svg next to the
 * checkpoint, and reading a saved run's log back on resume. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "loss_log.h"
#include "qkv/qkv.h"
#include "qkv/viz.h"

/* Append one point to the log, growing it; 0 or -1 when out of memory. */
int log_add(loss_log *l, double step, double train, double val)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        double *s = realloc(l->step, (size_t)cap * sizeof *s);
        if (s)
            l->step = s;
        double *t = realloc(l->train, (size_t)cap * sizeof *t);
        if (t)
            l->train = t;
        double *v = realloc(l->val, (size_t)cap * sizeof *v);
        if (v)
            l->val = v;
        if (!s || !t || !v)
            return -1;
        l->cap = cap;
    }
    l->step[l->n] = step;
    l->train[l->n] = train;
    l->val[l->n++] = val;
    return 0;
}

/* The points of the log next to ckpt (CKPT.csv) up to step `upto`, so that a
 * resumed run's log and plot continue the saved run's instead of starting
 * over. A missing log, or the first line that does not parse, ends the read. */
void log_read(loss_log *l, const char *ckpt, int64_t upto)
{
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s.csv", ckpt);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    for (bool header = true; fgets(line, sizeof line, f); header = false) {
        char *end, *after;
        double step = strtod(line, &end), train, val = NAN;
        if (header)
            continue;
        if (*end != ',' || step > (double)upto)
            break;
        train = strtod(end + 1, &end);
        if (*end != ',')
            break;
        if (end[1] != '\n') { /* an empty third field: no evaluation at this step */
            val = strtod(end + 1, &after);
            if (after == end + 1)
                break;
        }
        if (log_add(l, step, train, val) < 0)
            break;
    }
    fclose(f);
}

/* Write PATH.csv and PATH.svg next to the checkpoint. */
void write_log(const loss_log *l, const char *ckpt)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.csv", ckpt);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "qkv train: cannot write %s\n", path);
        return;
    }
    fprintf(f, "step,train_loss,val_loss\n");
    for (int i = 0; i < l->n; i++) {
        fprintf(f, "%.0f,%.6f,", l->step[i], l->train[i]);
        if (!isnan(l->val[i]))
            fprintf(f, "%.6f", l->val[i]);
        fputc('\n', f);
    }
    fclose(f);
    /* The plot: the training curve at every logged point, validation where evaluated. */
    double *vs = malloc((size_t)(l->n + 1) * sizeof *vs), *vv = malloc((size_t)(l->n + 1) * sizeof *vv);
    int nv = 0;
    for (int i = 0; vs && vv && i < l->n; i++)
        if (!isnan(l->val[i])) {
            vs[nv] = l->step[i];
            vv[nv++] = l->val[i];
        }
    qkv_svg_series series[2] = {{"train", l->n, l->step, l->train}, {"val", nv, vs, vv}};
    snprintf(path, sizeof path, "%s.svg", ckpt);
    if (vs && vv && qkv_svg_lines(path, "qkv train: loss", "step", "loss (nats/char)",
                                  nv ? 2 : 1, series) < 0)
        fprintf(stderr, "qkv train: %s\n", qkv_last_error());
    free(vs);
    free(vv);
}

