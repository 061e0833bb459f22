/* SVG heatmaps and line plots (cli/viz/svg.c): well-formed XML, one element per
 * cell or series, escaped labels, the colour scale, errors that name the path. */
#include <stdlib.h>
#include <unistd.h>

#include "cli/viz/viz.h"
#include "testing.h"

/* ---- a small XML well-formedness checker, so the test needs no XML library ---- */

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == ':' || c == '.';
}

/* Length of a valid entity reference at p ("&amp;", "&#123;", ...), or 0. */
static size_t entity_length(const char *p)
{
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (int i = 0; i < 5; i++)
        if (strncmp(p, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    if (p[1] != '#')
        return 0;
    const char *digits = p[2] == 'x' ? "0123456789abcdefABCDEF" : "0123456789";
    size_t start = p[2] == 'x' ? 3 : 2, n = start;
    while (p[n] && strchr(digits, p[n]))
        n++;
    return n > start && p[n] == ';' ? n + 1 : 0;
}

/* Length of the character at p if it is allowed in XML text (valid UTF-8, no
 * control character but tab, newline and return), or 0. */
static size_t char_length(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (*p < 0x80)
        return *p >= 0x20 || *p == '\t' || *p == '\n' || *p == '\r' ? 1 : 0;
    size_t n = *p >= 0xf0 && *p < 0xf5 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Character data up to the next '<' (text) or quote (attribute value): every
 * '&' must start an entity, no '<' may appear. Returns the end, or NULL. */
static const char *scan_chars(const char *p, char end)
{
    while (*p && *p != end && *p != '<') {
        size_t n = *p == '&' ? entity_length(p) : char_length(p);
        if (!n)
            return NULL;
        p += n;
    }
    return end == '<' || *p == end ? p : NULL;
}

/* NULL when doc is well-formed XML with one root element; otherwise what is wrong. */
static const char *xml_problem(const char *doc)
{
    enum { MAX_DEPTH = 32 };
    char stack[MAX_DEPTH][32];
    int depth = 0, roots = 0;
    const char *p = doc;
    while (*p) {
        if (*p != '<') { /* text: only whitespace outside the root */
            const char *end = scan_chars(p, '<');
            if (!end)
                return "bad character or '&' in text";
            for (; depth == 0 && p < end; p++)
                if (!strchr(" \t\r\n", *p))
                    return "text outside the root element";
            p = end;
        } else if (strncmp(p, "<?", 2) == 0 || strncmp(p, "<!--", 4) == 0) {
            const char *end = strstr(p, p[1] == '?' ? "?>" : "-->");
            if (!end)
                return "unclosed <? or <!--";
            p = end + 2;
        } else if (p[1] == '/') { /* a closing tag must match the innermost open one */
            size_t n = strlen(stack[depth > 0 ? depth - 1 : 0]);
            if (depth == 0 || strncmp(p + 2, stack[depth - 1], n) != 0 || p[2 + n] != '>')
                return "closing tag does not match the open one";
            depth--;
            p += n + 3;
        } else { /* an opening tag with its attributes */
            const char *name = ++p;
            while (is_name_char(*p))
                p++;
            size_t n = (size_t)(p - name);
            if (n == 0 || n >= sizeof stack[0] || depth == MAX_DEPTH)
                return "bad tag name";
            if (depth == 0 && roots++ > 0)
                return "more than one root element";
            for (;;) {
                bool space = false;
                for (; strchr(" \t\r\n", *p) && *p; p++)
                    space = true;
                if (*p == '>' || strncmp(p, "/>", 2) == 0)
                    break;
                const char *attr = p;
                while (is_name_char(*p))
                    p++;
                if (!space || p == attr || *p != '=' || (p[1] != '"' && p[1] != '\''))
                    return "attribute not of the form name=\"value\"";
                char quote = p[1];
                p = scan_chars(p + 2, quote);
                if (!p)
                    return "bad attribute value";
                p++;
            }
            if (*p == '>') {
                memcpy(stack[depth], name, n);
                stack[depth++][n] = '\0';
                p++;
            } else
                p += 2;
        }
    }
    if (depth)
        return "unclosed element";
    return roots == 1 ? NULL : "no root element";
}

/* ---- helpers ---- */

static void temp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "/tmp/qkv_test_svg_%ld_%s.svg", (long)getpid(), name);
}

/* The whole file (NUL-terminated, malloc'd), which is then removed. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert(fread(text, 1, (size_t)n, f) == (size_t)n);
    text[n] = '\0';
    fclose(f);
    remove(path);
    return text;
}

static int count(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* The text of the picture just written to path, checked to be well-formed XML. */
static char *checked_text(const char *path, const char *name)
{
    char *text = slurp(path);
    const char *problem = xml_problem(text);
    ck_assert_msg(problem == NULL, "%s: %s", name, problem);
    return text;
}

/* Draw spec into a temporary file and return the file's text. */
static char *heatmap_text(const svg_heatmap_spec *spec, const char *name)
{
    char path[128];
    temp_path(path, sizeof path, name);
    ck_assert_msg(svg_heatmap(path, spec) == 0, "%s", qkv_last_error());
    return checked_text(path, name);
}

/* Plot the series into a temporary file and return the file's text. */
static char *lines_text(int n_series, const svg_series *series, const char *name)
{
    char path[128];
    temp_path(path, sizeof path, name);
    ck_assert_msg(svg_lines(path, "loss & <accuracy>", "step", "loss", n_series, series) == 0, "%s",
                  qkv_last_error());
    return checked_text(path, name);
}

/* ---- tests ---- */

START_TEST(test_checker_rejects_broken_xml)
{
    ck_assert_ptr_null(
        xml_problem("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; &#9251;</a>\n"));
    const char *bad[] = {
        "<a><b></a></b>",      "<a x=1></a>",     "<a>&</a>",    "<a>x < y</a>", "<a><b></b>",
        "<a></a><b></b>",      "<a x=\"<\"></a>", "<a>\x01</a>", "<a>\xff</a>",  "<ax=\"1\"></ax>",
        "<a x=\"1\"y=\"2\"/>", "text<a/>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(xml_problem(bad[i]) != NULL, "accepted %s", bad[i]);
}
END_TEST

START_TEST(test_heatmap_has_one_cell_per_value_in_every_panel)
{
    qkv_real v[2 * 3 * 4];
    for (int i = 0; i < 24; i++)
        v[i] = (qkv_real)(i / 23.0);
    svg_heatmap_spec spec = {.title = "two heads",
                             .panels = 2,
                             .rows = 3,
                             .cols = 4,
                             .values = v,
                             .row_labels = "abc",
                             .col_labels = "wxyz",
                             .rows_name = "output",
                             .cols_name = "input"};
    char *text = heatmap_text(&spec, "cells");
    ck_assert_int_eq(count(text, "class=\"cell\""), 24);
    ck_assert_int_eq(count(text, "head 1"), 1);
    ck_assert_int_eq(count(text, ">output<"), 2); /* the captions, once per panel */
    free(text);

    /* Many panels wrap onto several lines; numbers stand in for missing labels. */
    qkv_real big[6 * 40 * 40];
    for (int i = 0; i < 6 * 40 * 40; i++)
        big[i] = (qkv_real)(i % 7);
    const char *titles[6] = {"h0", "h1", "h2", "h3", "h4", "h5"};
    spec = (svg_heatmap_spec){
        .panels = 6, .rows = 40, .cols = 40, .values = big, .panel_titles = titles};
    text = heatmap_text(&spec, "panels");
    ck_assert_int_eq(count(text, "class=\"cell\""), 6 * 40 * 40);
    ck_assert_int_eq(count(text, ">h5<"), 1);
    ck_assert_int_eq(count(text, ">39<"), 6); /* the last row, labelled in each panel */
    free(text);
}
END_TEST

START_TEST(test_masked_cells_are_left_out)
{
    /* Causal attention: the upper triangle is masked (NaN), and one cell is infinite. */
    enum { T = 6 };
    qkv_real v[T * T];
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            v[i * T + j] = j > i ? (qkv_real)NAN : (qkv_real)(1.0 / (i + 1));
    v[T * T - 1] = (qkv_real)INFINITY;
    svg_heatmap_spec spec = {.panels = 1, .rows = T, .cols = T, .values = v};
    char *text = heatmap_text(&spec, "masked");
    ck_assert_int_eq(count(text, "class=\"cell\""), T * (T + 1) / 2 - 1);
    ck_assert_int_eq(count(text, "nan"), 0);
    ck_assert_int_eq(count(text, "inf"), 0);
    free(text);

    /* Nothing to show at all is still a picture. */
    for (int i = 0; i < T * T; i++)
        v[i] = (qkv_real)NAN;
    text = heatmap_text(&spec, "all_masked");
    ck_assert_int_eq(count(text, "class=\"cell\""), 0);
    free(text);
}
END_TEST

START_TEST(test_labels_and_titles_are_escaped)
{
    const char *rows = "<&\"' \n", *cols = "a>\t\x01\xc3z";
    qkv_real v[6 * 6] = {0};
    const char *titles[1] = {"x < y & z"};
    svg_heatmap_spec spec = {.title = "\"quoted\" & 'single'",
                             .panels = 1,
                             .rows = 6,
                             .cols = 6,
                             .values = v,
                             .row_labels = rows,
                             .col_labels = cols,
                             .panel_titles = titles};
    char *text = heatmap_text(&spec, "escaped");
    const char *want[] = {
        ">&lt;<",
        ">&amp;<",
        ">&quot;<",
        ">&apos;<",
        ">\xE2\x90\xA3<", /* ␣ */
        ">\xE2\x8F\x8E<", /* ⏎ */
        ">&gt;<",
        ">\xE2\x87\xA5<", /* ⇥ */
        ">&quot;quoted&quot; &amp; &apos;single&apos;<",
        ">x &lt; y &amp; z<",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(text, want[i]), "missing %s", want[i]);
    /* The control character and the lone UTF-8 lead byte both become U+FFFD. */
    ck_assert_int_eq(count(text, "\xEF\xBF\xBD"), 2);
    free(text);
}
END_TEST

START_TEST(test_colour_scale_spans_the_values)
{
    qkv_real v[4] = {(qkv_real)0.2, (qkv_real)0.3, (qkv_real)0.5, (qkv_real)0.7};
    svg_heatmap_spec spec = {.panels = 1, .rows = 2, .cols = 2, .values = v};
    char *text = heatmap_text(&spec, "scale");
    /* The lowest value gets the dark end of the map, the highest the yellow end. */
    ck_assert_int_eq(count(text, "class=\"cell\" "), 4);
    ck_assert_int_eq(count(text, "fill=\"#440154\"><title>0.2<"), 1);
    ck_assert_int_eq(count(text, "fill=\"#fde725\"><title>0.7<"), 1);
    ck_assert_ptr_nonnull(strstr(text, ">0.45<"));
    free(text);

    /* Between the ends: viridis at 0.5, and 0.9 interpolated (matplotlib's own is #bddf26). */
    qkv_real mid[4] = {0, (qkv_real)0.5, (qkv_real)0.9, 1};
    spec.values = mid;
    text = heatmap_text(&spec, "scale_mid");
    ck_assert_int_eq(count(text, "fill=\"#21918c\"><title>0.5<"), 1);
    ck_assert_int_eq(count(text, "fill=\"#bbde28\"><title>0.9<"), 1);
    free(text);

    /* A fixed range: 0.7 of [0, 1] is no longer the top colour. */
    spec.values = v, spec.vmin = 0, spec.vmax = 1;
    text = heatmap_text(&spec, "fixed_scale");
    ck_assert_int_eq(count(text, "#fde725\"><title>"), 0);
    ck_assert_ptr_nonnull(strstr(text, ">0.5<"));
    ck_assert_ptr_nonnull(strstr(text, ">1<"));
    free(text);
}
END_TEST

START_TEST(test_lines_plot_has_one_polyline_per_series)
{
    enum { N = 200 };
    double xs[N], train[N], val[N / 20 + 1], val_x[N / 20 + 1];
    for (int i = 0; i < N; i++)
        xs[i] = i * 10, train[i] = 4.0 * exp(-i / 60.0) + 1.1;
    for (int i = 0; i <= N / 20; i++)
        val_x[i] = i * 200, val[i] = 4.0 * exp(-i / 3.0) + 1.3;
    val[3] = NAN; /* a missing evaluation is skipped */
    svg_series series[3] = {
        {.name = "train", .n = N, .xs = xs, .ys = train},
        {.name = "val <held out>", .n = N / 20 + 1, .xs = val_x, .ys = val},
        {.name = "empty", .n = 0},
    };
    char *text = lines_text(3, series, "lines");
    ck_assert_int_eq(count(text, "<polyline"), 3);
    ck_assert_int_eq(count(text, "<circle"), N / 20); /* dots for the short series, minus the NaN */
    ck_assert_ptr_nonnull(strstr(text, ">val &lt;held out&gt;<"));
    ck_assert_ptr_nonnull(strstr(text, ">loss &amp; &lt;accuracy&gt;<"));
    ck_assert_ptr_nonnull(strstr(text, ">2000<")); /* round x ticks up to the last step */
    ck_assert_int_eq(count(text, "nan"), 0);
    free(text);

    /* No series, or one point, still give a plot with axes. */
    text = lines_text(0, NULL, "no_series");
    ck_assert_int_eq(count(text, "<polyline"), 0);
    free(text);
    double one_x = 5, one_y = 2.5;
    svg_series single = {.name = "one", .n = 1, .xs = &one_x, .ys = &one_y};
    text = lines_text(1, &single, "one_point");
    ck_assert_int_eq(count(text, "<circle"), 1);
    free(text);
}
END_TEST

START_TEST(test_errors_name_the_path)
{
    qkv_real v[4] = {0};
    svg_heatmap_spec spec = {.panels = 1, .rows = 2, .cols = 2, .values = v};
    const char *nowhere = "/nonexistent-qkv-dir/attn.svg";
    ck_assert_int_eq(svg_heatmap(nowhere, &spec), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), nowhere));
    double x = 1;
    svg_series one = {.name = "a", .n = 1, .xs = &x, .ys = &x};
    ck_assert_int_eq(svg_lines(nowhere, NULL, NULL, NULL, 1, &one), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), nowhere));
    /* A device is never written to (nor replaced). */
    ck_assert_int_eq(svg_heatmap("/dev/full", &spec), -1);
    ck_assert_str_eq(qkv_last_error(),
                     "svg_heatmap: cannot write '/dev/full': it is a "
                     "character device, and qkv only ever replaces regular files");

    char path[128];
    temp_path(path, sizeof path, "never");
    svg_heatmap_spec bad = spec;
    bad.rows = 0;
    ck_assert_int_eq(svg_heatmap(path, &bad), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), path));
    bad = spec, bad.values = NULL;
    ck_assert_int_eq(svg_heatmap(path, &bad), -1);
    bad = spec, bad.row_labels = "abc";
    ck_assert_int_eq(svg_heatmap(path, &bad), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "row_labels"));
    ck_assert_int_eq(svg_heatmap(path, NULL), -1);
    one.n = -1;
    ck_assert_int_eq(svg_lines(path, NULL, NULL, NULL, 1, &one), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), path));
    one.n = 2, one.ys = NULL;
    ck_assert_int_eq(svg_lines(path, NULL, NULL, NULL, 1, &one), -1);
    ck_assert_int_eq(svg_lines(path, NULL, NULL, NULL, 1, NULL), -1);
    ck_assert_int_eq(svg_lines(NULL, NULL, NULL, NULL, 0, NULL), -1);
    ck_assert_int_eq(access(path, F_OK), -1); /* no file is left behind by a refused call */
}
END_TEST

static Suite *svg_suite(void)
{
    Suite *s = suite_create("svg");
    TCase *tc = tcase_create("svg");
    tcase_set_timeout(tc, 60); /* slow under the sanitizers on a busy machine (the heatmap passed 4 s) */
    tcase_add_test(tc, test_checker_rejects_broken_xml);
    tcase_add_test(tc, test_heatmap_has_one_cell_per_value_in_every_panel);
    tcase_add_test(tc, test_masked_cells_are_left_out);
    tcase_add_test(tc, test_labels_and_titles_are_escaped);
    tcase_add_test(tc, test_colour_scale_spans_the_values);
    tcase_add_test(tc, test_lines_plot_has_one_polyline_per_series);
    tcase_add_test(tc, test_errors_name_the_path);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(svg_suite)
