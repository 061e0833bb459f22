/* Misuse cases for qkv/viz.h: SVG pictures and the attention pages. */
#include "misuse.h"
#include "qkv/viz.h"

MISUSE(qkv_svg_heatmap, null_path)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(NULL, &s), "path is NULL");
}
MISUSE(qkv_svg_heatmap, null_spec)
{
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), NULL), "spec is NULL");
}
MISUSE(qkv_svg_heatmap, null_values)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "values");
}
MISUSE(qkv_svg_heatmap, zero_rows)
{
    qkv_svg_heatmap_spec s = {.panels = 1, .rows = 0, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "0x1");
}
MISUSE(qkv_svg_heatmap, size_overflow)
{
    qkv_svg_heatmap_spec s = {
        .panels = 1 << 20, .rows = 1 << 20, .cols = 1 << 20, .values = (qkv_real[]){1}};
    FAILS_INT(qkv_svg_heatmap(tmp_path("h.svg"), &s), "panels");
}
MISUSE(qkv_svg_lines, null_path)
{
    qkv_svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(NULL, "t", "x", "y", 1, &s), "path is NULL");
}
MISUSE(qkv_svg_lines, null_series)
{
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, NULL), "series is NULL");
}
MISUSE(qkv_svg_lines, null_xs)
{
    qkv_svg_series s = {.name = "a", .n = 2, .xs = NULL, .ys = (double[]){1, 2}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "xs");
}
MISUSE(qkv_svg_lines, negative_series)
{
    qkv_svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", -1, &s), "-1");
}
MISUSE(qkv_svg_lines, negative_points)
{
    qkv_svg_series s = {.name = "a", .n = -4, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(qkv_svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "-4");
}

MISUSE(qkv_attn_svg, null_path)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(NULL, tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "path is NULL");
}
MISUSE(qkv_attn_svg, null_weights)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), NULL, &s), "weights is NULL");
}
MISUSE(qkv_attn_svg, null_spec)
{
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), NULL), "spec is NULL");
}
MISUSE(qkv_attn_svg, bad_head)
{
    qkv_attn_svg_spec s = {.head = 5};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "head 5");
}
MISUSE(qkv_attn_svg, three_dims)
{
    qkv_attn_svg_spec s = {.head = -1};
    FAILS_INT(qkv_attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(2, 3, 3)), &s), "(2,3,3)");
}

MISUSE(qkv_attn_html_gpt, null_path)
{
    FAILS_INT(qkv_attn_html_gpt(NULL, gpt(), tok(), "ab"), "path is NULL");
}
MISUSE(qkv_attn_html_gpt, null_model)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), NULL, tok(), "ab"), "m is NULL");
}
MISUSE(qkv_attn_html_gpt, null_vocab)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), NULL, "ab"), "vocab is NULL");
}
MISUSE(qkv_attn_html_gpt, null_text)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), tok(), NULL), "text is NULL");
}
MISUSE(qkv_attn_html_gpt, text_too_long)
{
    FAILS_INT(qkv_attn_html_gpt(tmp_path("a.html"), gpt(), tok(), "abcabcabcabc"), "12 characters");
}
MISUSE(qkv_attn_html_seq2seq, null_path)
{
    FAILS_INT(qkv_attn_html_seq2seq(NULL, s2s(), "1.2.2003"), "path is NULL");
}
MISUSE(qkv_attn_html_seq2seq, null_model)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), NULL, "1.2.2003"), "m is NULL");
}
MISUSE(qkv_attn_html_seq2seq, null_input)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), s2s(), NULL), "input is NULL");
}
MISUSE(qkv_attn_html_seq2seq, empty_input)
{
    FAILS_INT(qkv_attn_html_seq2seq(tmp_path("a.html"), s2s(), ""), "input");
}
