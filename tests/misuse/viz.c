/* Misuse cases for the program's pictures (cli/viz/viz.h: SVG pictures and the
 * attention pages): not public API, but they keep its promise, so they are
 * checked the same way (tests/misuse_coverage.sh counts only include/qkv). */
#include "misuse.h"
#include "cli/viz/viz.h"

MISUSE(svg_heatmap, null_path)
{
    svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(svg_heatmap(NULL, &s), "path is NULL");
}
MISUSE(svg_heatmap, null_spec)
{
    FAILS_INT(svg_heatmap(tmp_path("h.svg"), NULL), "spec is NULL");
}
MISUSE(svg_heatmap, null_values)
{
    svg_heatmap_spec s = {.panels = 1, .rows = 1, .cols = 1};
    FAILS_INT(svg_heatmap(tmp_path("h.svg"), &s), "values");
}
MISUSE(svg_heatmap, zero_rows)
{
    svg_heatmap_spec s = {.panels = 1, .rows = 0, .cols = 1, .values = (qkv_real[]){1}};
    FAILS_INT(svg_heatmap(tmp_path("h.svg"), &s), "0x1");
}
MISUSE(svg_heatmap, size_overflow)
{
    svg_heatmap_spec s = {
        .panels = 1 << 20, .rows = 1 << 20, .cols = 1 << 20, .values = (qkv_real[]){1}};
    FAILS_INT(svg_heatmap(tmp_path("h.svg"), &s), "panels");
}
MISUSE(svg_lines, null_path)
{
    svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(svg_lines(NULL, "t", "x", "y", 1, &s), "path is NULL");
}
MISUSE(svg_lines, null_series)
{
    FAILS_INT(svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, NULL), "series is NULL");
}
MISUSE(svg_lines, null_xs)
{
    svg_series s = {.name = "a", .n = 2, .xs = NULL, .ys = (double[]){1, 2}};
    FAILS_INT(svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "xs");
}
MISUSE(svg_lines, negative_series)
{
    svg_series s = {.name = "a", .n = 1, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(svg_lines(tmp_path("l.svg"), "t", "x", "y", -1, &s), "-1");
}
MISUSE(svg_lines, negative_points)
{
    svg_series s = {.name = "a", .n = -4, .xs = (double[]){1}, .ys = (double[]){1}};
    FAILS_INT(svg_lines(tmp_path("l.svg"), "t", "x", "y", 1, &s), "-4");
}

MISUSE(attn_svg, null_path)
{
    attn_svg_spec s = {.head = -1};
    FAILS_INT(attn_svg(NULL, tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "path is NULL");
}
MISUSE(attn_svg, null_weights)
{
    attn_svg_spec s = {.head = -1};
    FAILS_INT(attn_svg(tmp_path("a.svg"), NULL, &s), "weights is NULL");
}
MISUSE(attn_svg, null_spec)
{
    FAILS_INT(attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), NULL), "spec is NULL");
}
MISUSE(attn_svg, bad_head)
{
    attn_svg_spec s = {.head = 5};
    FAILS_INT(attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(1, 2, 3, 3)), &s), "head 5");
}
MISUSE(attn_svg, three_dims)
{
    attn_svg_spec s = {.head = -1};
    FAILS_INT(attn_svg(tmp_path("a.svg"), tensor(QKV_SHAPE(2, 3, 3)), &s), "(2,3,3)");
}

MISUSE(attn_html_gpt, null_path)
{
    FAILS_INT(attn_html_gpt(NULL, gpt(), tok(), "ab"), "path is NULL");
}
MISUSE(attn_html_gpt, null_model)
{
    FAILS_INT(attn_html_gpt(tmp_path("a.html"), NULL, tok(), "ab"), "m is NULL");
}
MISUSE(attn_html_gpt, null_vocab)
{
    FAILS_INT(attn_html_gpt(tmp_path("a.html"), gpt(), NULL, "ab"), "vocab is NULL");
}
MISUSE(attn_html_gpt, null_text)
{
    FAILS_INT(attn_html_gpt(tmp_path("a.html"), gpt(), tok(), NULL), "text is NULL");
}
MISUSE(attn_html_gpt, text_too_long)
{
    FAILS_INT(attn_html_gpt(tmp_path("a.html"), gpt(), tok(), "abcabcabcabc"), "12 characters");
}
/* A tokenizer of the 256 bytes alone: no GPT of the suite's has its vocabulary. */
static qkv_bpe *bytes_bpe(void)
{
    static qkv_bpe *b;
    if (!b)
        b = qkv_bpe_from_merges(NULL, 0);
    return b;
}
MISUSE(attn_html_gpt_bpe, null_path)
{
    FAILS_INT(attn_html_gpt_bpe(NULL, gpt(), bytes_bpe(), "ab"), "path is NULL");
}
MISUSE(attn_html_gpt_bpe, null_model)
{
    FAILS_INT(attn_html_gpt_bpe(tmp_path("a.html"), NULL, bytes_bpe(), "ab"), "m is NULL");
}
MISUSE(attn_html_gpt_bpe, null_bpe)
{
    FAILS_INT(attn_html_gpt_bpe(tmp_path("a.html"), gpt(), NULL, "ab"), "bpe is NULL");
}
MISUSE(attn_html_gpt_bpe, null_text)
{
    FAILS_INT(attn_html_gpt_bpe(tmp_path("a.html"), gpt(), bytes_bpe(), NULL), "text is NULL");
}
MISUSE(attn_html_gpt_bpe, another_vocabulary)
{
    FAILS_INT(attn_html_gpt_bpe(tmp_path("a.html"), gpt(), bytes_bpe(), "ab"), "bpe has 256 "
              "tokens; the model's vocabulary has 5");
}
MISUSE(attn_html_seq2seq, null_path)
{
    FAILS_INT(attn_html_seq2seq(NULL, s2s(), "1.2.2003"), "path is NULL");
}
MISUSE(attn_html_seq2seq, null_model)
{
    FAILS_INT(attn_html_seq2seq(tmp_path("a.html"), NULL, "1.2.2003"), "m is NULL");
}
MISUSE(attn_html_seq2seq, null_input)
{
    FAILS_INT(attn_html_seq2seq(tmp_path("a.html"), s2s(), NULL), "input is NULL");
}
MISUSE(attn_html_seq2seq, empty_input)
{
    FAILS_INT(attn_html_seq2seq(tmp_path("a.html"), s2s(), ""), "input");
}
