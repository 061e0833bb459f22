/* cli/viz/viz.h — the qkv program's pictures of what a model does,
 * all self-contained files that any web browser opens without a network: SVG
 * heatmaps and line plots, the attention weights of a model as a heatmap, and
 * an interactive HTML page that explores a model's attention (head view,
 * model view, and every step of one query's attention with the model's own
 * numbers). Part of the program, not of libqkv: compiled into the program's
 * own archive (build/libqkvcli.a) and not installed.
 *
 *     qkv_real w[2 * 3 * 4] = {0.7, 0.2, 0.1, 0}; // 2 heads, 3 queries, 4 keys (the rest 0)
 *     svg_heatmap_spec spec = {
 *         .title = "cross-attention, layer 0", .panels = 2, .rows = 3, .cols = 4,
 *         .values = w, .row_labels = "ab\n", .col_labels = "a b.",
 *         .rows_name = "output", .cols_name = "input",
 *     };
 *     if (svg_heatmap("attn.svg", &spec) < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *
 *     double steps[3] = {0, 100, 200}, loss[3] = {4.2, 2.1, 1.7};
 *     svg_series train = {.name = "train", .n = 3, .xs = steps, .ys = loss};
 *     svg_lines("loss.svg", "char GPT", "step", "loss", 1, &train);
 *
 *     qkv_tokenizer vocab;
 *     qkv_gpt *m = qkv_gpt_load("baby.ckpt", &vocab);
 *     if (m && attn_html_gpt("attn.html", m, &vocab, "To be, or not to be") < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *
 * Labels are shown as they are, except that XML's special characters are
 * escaped, a space shows as '␣', a newline as '⏎', a tab as '⇥' and any other
 * control or non-ASCII byte as '�'. Titles and names are UTF-8. A GPT of BPE
 * tokens is labelled a token at a time (viz_tokenize's names): the token's
 * bytes, whole UTF-8 characters as they are and any other byte as "\xHH".
 */
#ifndef QKV_CLI_VIZ_H
#define QKV_CLI_VIZ_H

#include "qkv/gpt.h"
#include "qkv/seq2seq.h"

/* What a heatmap shows: `panels` matrices of rows×cols side by side (one per
 * attention head, say), sharing one colour scale. */
typedef struct svg_heatmap_spec {
    const char *title;               /* drawn above the panels; NULL for none */
    int panels;                      /* number of matrices, >= 1 */
    int rows, cols;                  /* size of each matrix, >= 1 */
    const qkv_real *values;          /* (panels, rows, cols), row-major; a NaN or
                                        infinite value is a masked cell, left blank */
    const char *row_labels;          /* `rows` characters naming the rows (e.g. the
                                        output text); NULL numbers them 0, 1, ... */
    const char *col_labels;          /* `cols` characters naming the columns (e.g. the
                                        input text); NULL numbers them */
    const char *rows_name;           /* caption of the row axis ("query"); NULL for none */
    const char *cols_name;           /* caption of the column axis ("key"); NULL for none */
    const char *const *panel_titles; /* `panels` names; NULL gives "head 0", "head 1",
                                        ... (nothing for a single panel) */
    double vmin, vmax;               /* colour range; when vmin >= vmax, the smallest
                                        and largest finite value of all panels */
    const char *const *row_names;    /* instead of row_labels: `rows` UTF-8 strings (a
                                        token's text each), shown as they are */
    const char *const *col_names;    /* instead of col_labels: `cols` strings, written
                                        upwards, one a column */
} svg_heatmap_spec;

/* Write a heatmap to path: one <rect class="cell"> per unmasked cell,
 * coloured by a viridis-like map (dark purple = low, yellow = high), and a
 * colour bar with its min, middle and max values. Returns 0, or -1 (with a
 * message naming path) on bad sizes or when the file cannot be written. */
int svg_heatmap(const char *path, const svg_heatmap_spec *spec);

/* One curve of a line plot. */
typedef struct svg_series {
    const char *name; /* shown in the legend */
    int n;            /* number of points, >= 0 */
    const double *xs; /* n x values */
    const double *ys; /* n y values; points with a NaN or infinite coordinate are left out */
} svg_series;

/* Write a line plot of n_series curves to path: one <polyline> per series
 * (with a dot on each point when a series has at most 30), axes with round
 * ticks fitted to the data, axis labels and a legend. Returns 0, or -1 (with
 * a message naming path) on bad arguments or when the file cannot be written. */
int svg_lines(const char *path, const char *title, const char *x_label, const char *y_label,
              int n_series, const svg_series *series);

/* ---- a text as the GPT reads it (tokens.c) ---- */

/* The token ids of a text, and for BPE tokens each one's label. */
typedef struct viz_tokens {
    int T;                    /* tokens: 1 to the model's block size */
    int32_t *ids;             /* T ids */
    const char *const *names; /* T labels, each token's bytes made visible (a space as '␣',
                                 a byte outside valid UTF-8 as "\x80", a backslash as
                                 "\\"); NULL for characters, labelled by the text's bytes */
} viz_tokens;

/* The tokens of text for a GPT of block_size positions: with bpe NULL one a
 * byte of vocab, else bpe's, named; from arena a. 0, or -1 with a message
 * saying what (e.g. "--text") has how many characters or tokens. */
int viz_tokenize(qkv_arena *a, const qkv_tokenizer *vocab, const qkv_bpe *bpe,
                 const char *text, int block_size, const char *what, viz_tokens *out);

/* ---- a model's attention ---- */

/* How attn_svg draws the weights of one attention (1,H,Tq,Tk). */
typedef struct attn_svg_spec {
    const char *title;      /* above the panels, or NULL */
    int head;               /* draw this head only; -1 for one panel per head */
    bool average;           /* one panel: the mean over the heads (head is ignored) */
    bool causal;            /* a causal self-attention: query i saw keys 0..i only, and the
                               cells of the others are left blank */
    int row0;               /* the first row drawn is query row0 (rows drawn: a window) */
    const char *row_labels; /* Tq characters (the queries' text), or NULL */
    const char *col_labels; /* Tk characters (the keys' text), or NULL */
    const char *rows_name;  /* caption of the row axis, or NULL */
    const char *cols_name;  /* caption of the column axis, or NULL */
    const char *const *row_names; /* instead of row_labels: Tq labels (tokens' texts) */
    const char *const *col_names; /* instead of col_labels: Tk labels */
} attn_svg_spec;

/* Write attention weights (1,H,Tq,Tk) as a heatmap (svg_heatmap) to
 * path: one Tq×Tk panel per head drawn, one cell per unmasked weight, on a
 * colour scale from 0 to the largest weight drawn. 0, or -1 with a message
 * (bad shape or head, unwritable file). */
int attn_svg(const char *path, const qkv_tensor *weights, const attn_svg_spec *spec);

/* Write path: one self-contained interactive HTML page (inline CSS and
 * JavaScript, no network) of the causal self-attention of every layer and
 * head of the GPT m while it reads text (1 to block_size characters of
 * vocab), with the queries, keys, values and outputs of its real forward
 * pass, for the step-by-step view. 0, or -1 with a message (bad argument, a
 * character outside the vocabulary, an unwritable file). */
int attn_html_gpt(const char *path, const qkv_gpt *m, const qkv_tokenizer *vocab, const char *text);

/* The same page for a GPT of BPE tokens, bpe's: text is 1 to block_size
 * tokens, each query, key and next token labelled with its token's text. */
int attn_html_gpt_bpe(const char *path, const qkv_gpt *m, const qkv_bpe *bpe, const char *text);

/* The same page for the encoder-decoder m greedily decoding input (1 to
 * max_src characters of its alphabet): the encoder's self-attention, the
 * decoder's causal self-attention and its cross-attention over the input,
 * which is padded to max_src positions as in a training batch, so the
 * padding keys show (with weight 0). 0, or -1 with a message. */
int attn_html_seq2seq(const char *path, const qkv_seq2seq *m, const char *input);

/* What makes the page live: the WebAssembly module (`make wasm` builds
 * build/wasm/qkv_live.js and .wasm from the library's own sources) and the
 * checkpoint it runs, both embedded in the page, so the reader's edits
 * recompute every view in the page itself. */
typedef struct attn_live {
    const char *module_js; /* the module's JavaScript loader, NUL-terminated */
    const void *wasm;      /* the module's WebAssembly bytes */
    size_t wasm_len;
    const void *ckpt;      /* a checkpoint file's bytes: the model the page runs */
    size_t ckpt_len;
} attn_live;

/* attn_html_gpt, and with live (NULL: the recorded page) the live page:
 * its numbers with every float digit, for the page's self-check of the
 * module against this program. 0, or -1 with a message. */
int attn_html_gpt_live(const char *path, const qkv_gpt *m, const qkv_tokenizer *vocab,
                       const char *text, const attn_live *live);

/* attn_html_seq2seq, live when live is not NULL. */
int attn_html_seq2seq_live(const char *path, const qkv_seq2seq *m, const char *input,
                           const attn_live *live);

#endif
