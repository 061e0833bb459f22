/* Any attention's weights (1,H,Tq,Tk) as an SVG heatmap (see viz.h). */
#include <math.h>
#include <stdio.h>

#include "viz_internal.h"

static int draw_weights(const char *path, const qkv_tensor *weights, const attn_svg_spec *spec)
{
    char shape[64];
    if (weights->ndim != 4 || weights->shape[0] != 1)
        return qkv_set_error("attn svg %s: weights %s are not the (1,H,Tq,Tk) of one sequence",
                             path, qkv_shape_str(weights, shape, sizeof shape));
    int H = weights->shape[1], Tq = weights->shape[2], Tk = weights->shape[3];
    if (!spec->average && (spec->head < -1 || spec->head >= H))
        return qkv_set_error("attn svg %s: head %d does not exist; there are heads 0 to %d", path,
                             spec->head, H - 1);
    int first = spec->average || spec->head < 0 ? 0 : spec->head;
    int panels = spec->average || spec->head >= 0 ? 1 : H;
    size_t cells = (size_t)Tq * Tk;
    qkv_real *values = qkv_alloc((size_t)panels * cells * sizeof *values);
    if (!values)
        return -1;
    double top = 0; /* the colour scale runs from 0 to the largest weight drawn */
    for (int p = 0; p < panels; p++)
        for (size_t i = 0; i < cells; i++) {
            int q = (int)(i / (size_t)Tk), k = (int)(i % (size_t)Tk);
            double sum = 0;
            int n = spec->average ? H : 1;
            for (int h = 0; h < n; h++)
                sum += weights->data[(size_t)(first + p + h) * cells + i];
            /* Drawn row q is query row0 + q, which sees the keys up to itself. */
            bool masked = spec->causal && k > spec->row0 + q;
            values[(size_t)p * cells + i] = masked ? (qkv_real)NAN : (qkv_real)(sum / n);
            top = !masked && sum / n > top ? sum / n : top;
        }
    char title[32];
    const char *one_title[1] = {title};
    if (spec->average)
        snprintf(title, sizeof title, "mean of %d heads", H);
    else
        snprintf(title, sizeof title, "head %d", first);
    svg_heatmap_spec hm = {
        .title = spec->title, .panels = panels, .rows = Tq, .cols = Tk, .values = values,
        .row_labels = spec->row_labels, .col_labels = spec->col_labels,
        .rows_name = spec->rows_name, .cols_name = spec->cols_name,
        .row_names = spec->row_names, .col_names = spec->col_names,
        .panel_titles = panels == 1 ? one_title : NULL, .vmin = 0, .vmax = top,
    };
    int rc = svg_heatmap(path, &hm);
    qkv_free(values);
    return rc;
}

int attn_svg(const char *path, const qkv_tensor *weights, const attn_svg_spec *spec)
{
    const char *fn = "attn_svg";
    if (viz_null(fn, "path", path) || viz_check_weights(fn, "weights", weights) < 0 ||
        viz_null(fn, "spec", spec))
        return -1;
    return draw_weights(path, weights, spec) < 0 ? viz_fail_in(fn) : 0;
}
