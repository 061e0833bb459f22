/* SVG heatmaps and line plots (see viz.h).
 *
 * Both pictures are written by the same few helpers: svg_begin/svg_end own the
 * file and its error handling, svg_text writes escaped text, and the rest is
 * plain geometry. Sizes are in SVG pixels; 0.6 × the font size is taken as the
 * width of one character, which is close enough for sans-serif digits. */
#include "viz_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qkv/file.h"

#define REPLACEMENT_CHAR "\xEF\xBF\xBD" /* U+FFFD '�' */
#define CHAR_WIDTH 0.6                  /* width of a character, in font sizes */

/* ---- the writer shared by both pictures ---- */

/* An SVG file being written. fprintf errors are sticky, so svg_end checks them once. */
typedef struct {
    FILE *f;       /* the stream of out */
    qkv_output *o; /* the file, through the safe-output path (qkv/file.h) */
} svg;

/* Write text as XML character data: markup characters escaped, control
 * characters (which XML 1.0 forbids) replaced. Other bytes pass as UTF-8. */
static void put_escaped(FILE *f, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\t':
        case '\n': fputc(' ', f); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fputs(REPLACEMENT_CHAR, f);
            else
                fputc(*p, f);
        }
    }
}

/* Text with its anchor ("start", "middle" or "end") at (x, y), vertically
 * centred on y, turned by angle degrees about that point. */
static void svg_text(svg *s, double x, double y, double size, const char *anchor, int angle,
                     const char *text)
{
    double baseline = y + 0.35 * size;
    fprintf(s->f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\"", x, baseline,
            size, anchor);
    if (angle)
        fprintf(s->f, " transform=\"rotate(%d %.1f %.1f)\"", angle, x, y);
    fputc('>', s->f);
    put_escaped(s->f, text);
    fputs("</text>\n", s->f);
}

static void svg_line(svg *s, double x1, double y1, double x2, double y2, const char *stroke)
{
    fprintf(s->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x1, y1,
            x2, y2, stroke);
}

/* Open path and start a white picture of width×height with an optional title on top. */
static int svg_begin(svg *s, const char *path, double width, double height, const char *title)
{
    if (!(s->o = qkv_output_open(path)))
        return -1;
    s->f = qkv_output_file(s->o);
    fprintf(s->f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            width, height, width, height);
    if (title)
        svg_text(s, width / 2, 22, 16, "middle", 0, title);
    return 0;
}

/* Close the picture and the file; -1 naming the path if anything failed to be written. */
static int svg_end(svg *s)
{
    fputs("</svg>\n", s->f);
    return qkv_output_commit(s->o);
}

/* A number as a short label (at most 3 significant digits, no "-0"). */
static const char *short_number(char buf[32], double v)
{
    snprintf(buf, 32, "%.3g", v == 0 ? 0.0 : v);
    return buf;
}

/* ---- heatmap ---- */

/* Viridis (matplotlib's perceptually uniform map, CC0) at 0, 1/16, ..., 1;
 * linear in between, which stays within 6/255 of the full 256-entry table. */
#define MAP_SEGMENTS 16
static const unsigned char viridis[MAP_SEGMENTS + 1][3] = {
    {68, 1, 84},    {72, 24, 106},  {71, 45, 123},  {66, 64, 134},  {59, 82, 139},  {51, 99, 141},
    {44, 114, 142}, {38, 130, 142}, {33, 145, 140}, {31, 159, 136}, {39, 173, 129}, {61, 188, 116},
    {92, 200, 99},  {129, 211, 77}, {170, 220, 50}, {213, 226, 26}, {253, 231, 37},
};

const char *qkv__viz_colour(char hex[8], double t)
{
    t = t > 1 ? 1 : t >= 0 ? t : 0; /* NaN (from an overflowing range) becomes 0 */
    int i = t >= 1 ? MAP_SEGMENTS - 1 : (int)(t * MAP_SEGMENTS);
    double f = t * MAP_SEGMENTS - i;
    unsigned rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (unsigned)lround(viridis[i][k] + f * (viridis[i + 1][k] - viridis[i][k]));
    snprintf(hex, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    return hex;
}

const char *qkv__viz_label(char buf[16], const char *labels, int i)
{
    if (!labels) {
        snprintf(buf, 16, "%d", i);
        return buf;
    }
    switch (labels[i]) {
    case ' ': return "\xE2\x90\xA3";  /* U+2423 '␣' */
    case '\n': return "\xE2\x8F\x8E"; /* U+23CE '⏎' */
    case '\t': return "\xE2\x87\xA5"; /* U+21E5 '⇥' */
    }
    unsigned char c = (unsigned char)labels[i];
    if (c < 0x20 || c >= 0x7f) /* a control character, or a byte of a longer UTF-8 character */
        return REPLACEMENT_CHAR;
    buf[0] = (char)c, buf[1] = '\0';
    return buf;
}

/* Widest label of n (names, labels or numbers), in characters. */
static int label_chars(const char *const *names, const char *labels, int n)
{
    char buf[16];
    int w = 0;
    for (int i = 0; names && i < n; i++)
        w = qkv__viz_label_width(names[i]) > w ? qkv__viz_label_width(names[i]) : w;
    return names ? w : labels ? 1 : (int)strlen(qkv__viz_label(buf, NULL, n - 1));
}

/* How label i of an axis is shown: its name, its character or its number. */
static const char *axis_label(char buf[16], const char *const *names, const char *labels, int i)
{
    return names ? names[i] : qkv__viz_label(buf, labels, i);
}

/* Where everything of one panel goes, in pixels. */
typedef struct {
    double cell;          /* side of one square cell */
    double font;          /* size of the row and column labels */
    double left;          /* from the panel's left edge to its grid: row caption and labels */
    double top;           /* from the panel's top edge to its grid: title, caption, labels */
    double width, height; /* the whole panel */
    int col_step;         /* label every col_step-th column, so numbers do not overlap */
} panel_layout;

static panel_layout layout_panel(const svg_heatmap_spec *h)
{
    panel_layout p;
    int longest = h->rows > h->cols ? h->rows : h->cols;
    p.cell = floor(560.0 / longest);
    p.cell = p.cell < 6 ? 6 : p.cell > 28 ? 28 : p.cell;
    p.font = p.cell * 0.8 < 12 ? p.cell * 0.8 : 12;
    p.left = (h->rows_name ? 18 : 0) +
             label_chars(h->row_names, h->row_labels, h->rows) * CHAR_WIDTH * p.font + 8;
    double col_label_width =
        label_chars(h->col_names, h->col_labels, h->cols) * CHAR_WIDTH * p.font + 3;
    /* Named columns (tokens) are labelled upwards, every one: the labels' room is above. */
    p.top = 22 + (h->cols_name ? 18 : 0) + (h->col_names ? col_label_width : p.font) + 6;
    p.width = p.left + h->cols * p.cell;
    p.height = p.top + h->rows * p.cell;
    p.col_step = h->col_names ? 1 : (int)ceil(col_label_width / p.cell);
    return p;
}

/* The colour range: the spec's, or that of the finite values; never empty. */
static void value_range(const svg_heatmap_spec *h, double *lo, double *hi)
{
    *lo = h->vmin, *hi = h->vmax;
    if (*lo < *hi)
        return;
    *lo = INFINITY, *hi = -INFINITY;
    size_t n = (size_t)h->panels * (size_t)h->rows * (size_t)h->cols;
    for (size_t i = 0; i < n; i++) {
        double v = h->values[i];
        if (isfinite(v))
            *lo = v < *lo ? v : *lo, *hi = v > *hi ? v : *hi;
    }
    if (*lo > *hi) /* nothing finite to show */
        *lo = 0, *hi = 1;
    else if (*lo == *hi)
        *lo -= 0.5, *hi += 0.5;
}

/* One panel with its top-left corner at (x, y). */
static void draw_panel(svg *s, const svg_heatmap_spec *h, const panel_layout *p, int k, double x,
                       double y, double lo, double hi)
{
    char buf[32], hex[8];
    double gx = x + p->left, gy = y + p->top; /* the grid's corner */
    double gw = h->cols * p->cell, gh = h->rows * p->cell;
    if (h->panel_titles)
        svg_text(s, gx + gw / 2, y + 10, 13, "middle", 0, h->panel_titles[k]);
    else if (h->panels > 1) {
        snprintf(buf, sizeof buf, "head %d", k);
        svg_text(s, gx + gw / 2, y + 10, 13, "middle", 0, buf);
    }
    if (h->cols_name)
        svg_text(s, gx + gw / 2, y + 30, 11, "middle", 0, h->cols_name);
    if (h->rows_name)
        svg_text(s, x + 8, gy + gh / 2, 11, "middle", -90, h->rows_name);
    for (int c = 0; c < h->cols; c += p->col_step) {
        double cx = gx + (c + 0.5) * p->cell;
        if (h->col_names)
            svg_text(s, cx, gy - 4, p->font, "start", -90, h->col_names[c]);
        else
            svg_text(s, cx, gy - p->font / 2 - 3, p->font, "middle", 0,
                     qkv__viz_label(buf, h->col_labels, c));
    }
    for (int r = 0; r < h->rows; r++)
        svg_text(s, gx - 4, gy + (r + 0.5) * p->cell, p->font, "end", 0,
                 axis_label(buf, h->row_names, h->row_labels, r));

    fputs("<g shape-rendering=\"crispEdges\">\n", s->f); /* no seams between cells */
    const qkv_real *m = h->values + (size_t)k * (size_t)h->rows * (size_t)h->cols;
    for (int r = 0; r < h->rows; r++)
        for (int c = 0; c < h->cols; c++) {
            double v = m[(size_t)r * (size_t)h->cols + (size_t)c];
            if (!isfinite(v))
                continue; /* masked: the white background shows */
            fprintf(s->f,
                    "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                    "fill=\"%s\"><title>%s</title></rect>\n",
                    gx + c * p->cell, gy + r * p->cell, p->cell, p->cell,
                    qkv__viz_colour(hex, (v - lo) / (hi - lo)), short_number(buf, v));
        }
    fputs("</g>\n", s->f);
    fprintf(s->f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#bbbbbb\"/>\n",
            gx, gy, gw, gh);
}

/* The colour bar: the map from lo (bottom) to hi (top), with three ticks. */
static void draw_colour_bar(svg *s, double x, double y, double height, double lo, double hi)
{
    char buf[32], hex[8];
    fputs("<defs><linearGradient id=\"qkv-colour-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n",
          s->f);
    for (int i = 0; i <= MAP_SEGMENTS; i++) {
        double t = (double)i / MAP_SEGMENTS;
        fprintf(s->f, "<stop offset=\"%.4f\" stop-color=\"%s\"/>\n", t, qkv__viz_colour(hex, t));
    }
    fputs("</linearGradient></defs>\n", s->f);
    fprintf(s->f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%.1f\" "
            "fill=\"url(#qkv-colour-scale)\" stroke=\"#888888\"/>\n",
            x, y, height);
    for (int i = 0; i <= 2; i++) {
        double ty = y + height * (1 - i / 2.0);
        svg_line(s, x + 14, ty, x + 18, ty, "#444444");
        svg_text(s, x + 21, ty, 11, "start", 0, short_number(buf, lo + (hi - lo) * i / 2.0));
    }
}

/* Check a label string has exactly n characters. */
static int check_labels(const char *path, const char *what, const char *labels, int n)
{
    if (labels && strlen(labels) != (size_t)n)
        return qkv_set_error("%s: %s has %zu characters for %d %s", path, what, strlen(labels), n,
                             what[0] == 'r' ? "rows" : "columns");
    return 0;
}

/* The most cells a heatmap draws: far beyond any attention picture a browser
 * can show, and small enough that no cell count overflows an int. */
#define HEATMAP_MAX_CELLS (1 << 24)

static int heatmap(const char *path, const svg_heatmap_spec *h)
{
    if (h->panels < 1 || h->rows < 1 || h->cols < 1 ||
        (double)h->panels * h->rows * h->cols > HEATMAP_MAX_CELLS)
        return qkv_set_error("%s: %d panels of %dx%d cells: each count must be >= 1 and at most "
                             "%d cells in all",
                             path, h->panels, h->rows, h->cols, HEATMAP_MAX_CELLS);
    if (!h->values)
        return qkv_set_error("%s: spec->values is NULL for a heatmap of %d panels of %dx%d", path,
                             h->panels, h->rows, h->cols);
    if ((!h->row_names && check_labels(path, "row_labels", h->row_labels, h->rows) < 0) ||
        (!h->col_names && check_labels(path, "col_labels", h->col_labels, h->cols) < 0))
        return -1;

    panel_layout p = layout_panel(h);
    const double margin = 16, gap = 28, bar_width = 80, max_width = 1600;
    int per_line = (int)((max_width + gap) / (p.width + gap)); /* panels side by side */
    per_line = per_line < 1 ? 1 : per_line > h->panels ? h->panels : per_line;
    int lines = (h->panels + per_line - 1) / per_line;
    double top = h->title ? 44 : margin;
    double bar_height = h->rows * p.cell < 120 ? 120 : h->rows * p.cell;
    double panels_right = margin + per_line * p.width + (per_line - 1) * gap;
    double panels_bottom = top + lines * p.height + (lines - 1) * gap;
    double width = panels_right + gap + bar_width + margin;
    double height = fmax(panels_bottom, top + p.top + bar_height) + margin;

    double lo, hi;
    value_range(h, &lo, &hi);
    svg s;
    if (svg_begin(&s, path, width, height, h->title) < 0)
        return -1;
    for (int k = 0; k < h->panels; k++)
        draw_panel(&s, h, &p, k, margin + (k % per_line) * (p.width + gap),
                   top + (k / per_line) * (p.height + gap), lo, hi);
    draw_colour_bar(&s, panels_right + gap, top + p.top, bar_height, lo, hi);
    return svg_end(&s);
}

int svg_heatmap(const char *path, const svg_heatmap_spec *spec)
{
    if (viz_null("svg_heatmap", "path", path) || viz_null("svg_heatmap", "spec", spec))
        return -1;
    return heatmap(path, spec) < 0 ? viz_fail_in("svg_heatmap") : 0;
}

/* ---- line plot ---- */

/* Matplotlib's "tab10" colours, for telling series apart. */
static const char *const series_colours[10] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                               "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                               "#bcbd22", "#17becf"};

/* An axis: its range, widened to whole ticks, and the tick spacing. */
typedef struct {
    double lo, hi; /* the values at the two ends */
    double step;   /* between ticks: 1, 2 or 5 times a power of ten */
} axis;

/* About five round ticks covering [lo, hi]. */
static axis fit_axis(double lo, double hi)
{
    if (!(lo < hi)) { /* one value (or none): give it some room */
        double pad = lo == 0 ? 1 : fabs(lo) * 0.1;
        lo -= pad, hi += pad;
    }
    double raw = (hi - lo) / 5, scale = pow(10, floor(log10(raw))), f = raw / scale;
    double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * scale;
    return (axis){floor(lo / step) * step, ceil(hi / step) * step, step};
}

/* Where value v of axis a falls between pixels p0 (at lo) and p1 (at hi). */
static double place(const axis *a, double v, double p0, double p1)
{
    return p0 + (v - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

/* The ticks of axis a, on the plot box (left, top, right, bottom): a light grid
 * line across the plot at each tick and its value outside the box. */
static void draw_ticks(svg *s, const axis *a, bool vertical, double left, double top, double right,
                       double bottom)
{
    int decimals = a->step >= 1 ? 0 : (int)ceil(-log10(a->step) - 1e-9);
    int n = (int)lround((a->hi - a->lo) / a->step);
    for (int i = 0; i <= n; i++) {
        double v = a->lo + i * a->step;
        char buf[32];
        snprintf(buf, sizeof buf, "%.*f", decimals, fabs(v) < a->step * 1e-9 ? 0.0 : v);
        if (vertical) {
            double y = place(a, v, bottom, top);
            svg_line(s, left, y, right, y, "#e4e4e4");
            svg_text(s, left - 6, y, 11, "end", 0, buf);
        } else {
            double x = place(a, v, left, right);
            svg_line(s, x, top, x, bottom, "#e4e4e4");
            svg_text(s, x, bottom + 14, 11, "middle", 0, buf);
        }
    }
}

/* Check the series and find the range of their finite points. */
static int series_range(const char *path, int n_series, const svg_series *series, double *x_lo,
                        double *x_hi, double *y_lo, double *y_hi)
{
    *x_lo = *y_lo = INFINITY, *x_hi = *y_hi = -INFINITY;
    for (int k = 0; k < n_series; k++) {
        const svg_series *c = &series[k];
        if (c->n < 0 || (c->n > 0 && (!c->xs || !c->ys)))
            return qkv_set_error("%s: series %d has %d points%s", path, k, c->n,
                                 c->n > 0 ? " but no xs or ys" : "");
        for (int i = 0; i < c->n; i++)
            if (isfinite(c->xs[i]) && isfinite(c->ys[i])) {
                *x_lo = fmin(*x_lo, c->xs[i]), *x_hi = fmax(*x_hi, c->xs[i]);
                *y_lo = fmin(*y_lo, c->ys[i]), *y_hi = fmax(*y_hi, c->ys[i]);
            }
    }
    if (*x_lo > *x_hi) /* no finite point at all */
        *x_lo = *y_lo = 0, *x_hi = *y_hi = 1;
    return 0;
}

static int lines(const char *path, const char *title, const char *x_label, const char *y_label,
                 int n_series, const svg_series *series)
{
    if (n_series < 0 || (n_series > 0 && !series))
        return qkv_set_error("%s: %d series%s", path, n_series,
                             series ? "" : ", and series is NULL");
    double x_lo, x_hi, y_lo, y_hi;
    if (series_range(path, n_series, series, &x_lo, &x_hi, &y_lo, &y_hi) < 0)
        return -1;
    axis ax = fit_axis(x_lo, x_hi), ay = fit_axis(y_lo, y_hi);

    const double width = 760, height = 460;
    const double left = 80, right = width - 170, top = title ? 48 : 20, bottom = height - 60;
    svg s;
    if (svg_begin(&s, path, width, height, title) < 0)
        return -1;
    draw_ticks(&s, &ax, false, left, top, right, bottom);
    draw_ticks(&s, &ay, true, left, top, right, bottom);
    fprintf(s.f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#444444\"/>\n",
            left, top, right - left, bottom - top);
    if (x_label)
        svg_text(&s, (left + right) / 2, height - 18, 13, "middle", 0, x_label);
    if (y_label)
        svg_text(&s, 22, (top + bottom) / 2, 13, "middle", -90, y_label);

    for (int k = 0; k < n_series; k++) {
        const svg_series *c = &series[k];
        const char *stroke = series_colours[k % 10];
        fprintf(s.f,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
                "stroke-linejoin=\"round\" points=\"",
                stroke);
        for (int i = 0; i < c->n; i++)
            if (isfinite(c->xs[i]) && isfinite(c->ys[i]))
                fprintf(s.f, "%s%.1f,%.1f", i ? " " : "", place(&ax, c->xs[i], left, right),
                        place(&ay, c->ys[i], bottom, top));
        fputs("\"/>\n", s.f);
        for (int i = 0; c->n <= 30 && i < c->n; i++) /* few points: show each one */
            if (isfinite(c->xs[i]) && isfinite(c->ys[i]))
                fprintf(s.f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.8\" fill=\"%s\"/>\n",
                        place(&ax, c->xs[i], left, right), place(&ay, c->ys[i], bottom, top),
                        stroke);
        /* The legend entry, right of the plot. */
        double ly = top + 10 + k * 20;
        fprintf(s.f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"3\"/>\n",
                right + 16, ly, right + 36, ly, stroke);
        svg_text(&s, right + 42, ly, 12, "start", 0, c->name ? c->name : "");
    }
    return svg_end(&s);
}

int svg_lines(const char *path, const char *title, const char *x_label, const char *y_label,
              int n_series, const svg_series *series)
{
    if (viz_null("svg_lines", "path", path))
        return -1;
    return lines(path, title, x_label, y_label, n_series, series) < 0 ? viz_fail_in("svg_lines")
                                                                      : 0;
}
