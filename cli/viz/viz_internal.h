/* Internal to the program's pictures (cli/viz/, and cli/attn_live.c, the live
 * page's parts): what the picture writers share. Not installed. */
#ifndef QKV_VIZ_INTERNAL_H
#define QKV_VIZ_INTERNAL_H

#include "cli/viz/viz.h"

/* ---- the pictures' messages (errors.c), worded as the library's ---- */

/* True, with the message "fn: arg is NULL", when p is NULL. */
bool viz_null(const char *fn, const char *arg, const void *p);

/* 0 when t is a tensor with values; else -1 with a message naming fn and
 * arg (for a NULL t, a failed call before: its message follows). */
int viz_check_weights(const char *fn, const char *arg, const qkv_tensor *t);

/* Put "fn: " before the current message, unless it already starts with fn:
 * a picture reporting a failure of the code it called. -1. */
int viz_fail_in(const char *fn);

/* Put prefix and ": " before the current message; -1. */
int viz_error_prefix(const char *prefix);

/* ---- shared by every picture (svg.c) ---- */

/* The colour of t in [0, 1] on the viridis-like map, as "#rrggbb". */
const char *qkv__viz_colour(char hex[8], double t);

/* How label i is shown: its character made visible (a space as '␣', a
 * newline as '⏎', ...), or its number when labels is NULL. */
const char *qkv__viz_label(char buf[16], const char *labels, int i);

/* ---- the labels of tokens (tokens.c) ---- */

/* The n bytes of a token made visible, from arena a: as a character label
 * ('␣', '⏎', '⇥'), other control bytes, a backslash and bytes outside valid
 * UTF-8 as escapes ("\x80", "\\"), whole UTF-8 characters as they are.
 * NULL when out of memory. */
const char *qkv__viz_token_name(qkv_arena *a, const char *bytes, size_t n);

/* Width of a label in characters (UTF-8 characters counted once). */
int qkv__viz_label_width(const char *name);

/* ---- the attention page (attn_page.html, attn_html.c) ---- */

/* One attention of a model, every layer of it, as the page shows it. */
typedef struct qkv__attn_view {
    const char *id;             /* the page's short name: "self", "enc", "dec", "cross" */
    const char *name;           /* what it is, for people ("cross-attention") */
    const char *rows_name;      /* caption of the queries ("output character") */
    const char *cols_name;      /* caption of the keys */
    const char *rows, *cols;    /* Tq and Tk label characters */
    const char *const *row_names, *const *col_names; /* or else Tq and Tk labels (tokens) */
    const uint8_t *rows_valid;  /* Tq: 0 marks a padding position's query; NULL = all real */
    const uint8_t *key_valid;   /* Tk: 1 = a real key, 0 = padding; NULL = all real */
    int n_layer;                /* layers, each with one call */
    const qkv_attn_call *calls; /* layer l's call is calls[l * stride] */
    int stride;
} qkv__attn_view;

/* Everything the page shows. */
typedef struct qkv__attn_page {
    const char *model;        /* "gpt" or "seq2seq" */
    const char *summary;      /* one line: the model's sizes and what it read */
    const char *text;         /* what the model read, as given (the GPT's text, the input) */
    const char *output;       /* the encoder-decoder's output as given or decoded; NULL for a GPT */
    int n_next;               /* the next-token distribution's size V, or 0 for none */
    const char *next_chars;   /* its V characters (the vocabulary's bytes, in id order) */
    const char *const *next_names; /* or else its V tokens' labels */
    const qkv_real *next_logits; /* V logits for the token after the last position */
    int n_view;               /* 1 (a GPT) or 3 (an encoder-decoder) */
    qkv__attn_view views[3];
} qkv__attn_page;

/* What the recording hands its page to (while the forward's tensors live):
 * 0, or -1 with a message. */
typedef int (*qkv__attn_page_fn)(const qkv__attn_page *p, void *user);

/* Run the GPT m over text (1 to block_size characters of vocab) with a
 * record of every attention call, and give the page of it to fn
 * (attn_record.c). 0, or -1 with a message naming `who`. */
int qkv__attn_record_gpt(const char *who, const qkv_gpt *m, const qkv_tokenizer *vocab,
                         const char *text, qkv__attn_page_fn fn, void *user);

/* The same for a GPT of BPE tokens: text is 1 to block_size tokens of bpe,
 * and every label is a token's text. */
int qkv__attn_record_gpt_bpe(const char *who, const qkv_gpt *m, const qkv_bpe *bpe,
                             const char *text, qkv__attn_page_fn fn, void *user);

/* The same for the encoder-decoder m reading input (padded to max_src, as in
 * a training batch): with output NULL it decodes greedily and replays its own
 * answer; else the decoder reads output (at most max_tgt - 1 characters of
 * the alphabet) teacher-forced, and the page's next-token distribution is
 * for the character after it. */
int qkv__attn_record_seq2seq(const char *who, const qkv_seq2seq *m, const char *input,
                             const char *output, qkv__attn_page_fn fn, void *user);

/* The page's data as JSON (attn_json.c), growing in memory; a failed
 * allocation sticks (failed), so only the end checks. */
typedef struct qkv__attn_json {
    char *text;       /* the JSON, NUL-terminated */
    size_t len, cap;
    bool failed;
    int digits;       /* significant digits of each number; 0 = 5 */
    bool binary;      /* numbers go to bin, each array written as {"f":offset,"n":count} */
    qkv_real *bin;    /* binary mode: every number, in the order written */
    size_t n_bin, bin_cap;
} qkv__attn_json;

/* Append the data block of p to t (one JSON object). 0, or -1 with a message. */
int qkv__attn_json_data(qkv__attn_json *t, const qkv__attn_page *p);

/* Append n bytes of s to t. */
void qkv__attn_json_append(qkv__attn_json *t, const char *s, size_t n);

/* Free t's buffers (and zero it). */
void qkv__attn_json_free(qkv__attn_json *t);

/* Write the page p to path: the fixed text around the data as one JSON
 * block, and with live (else NULL) the module and the checkpoint in the
 * page's live block. 0, or -1 with a message naming path. */
int qkv__attn_page_write(const char *path, const qkv__attn_page *p, const attn_live *live);

/* The page's fixed text: cli/viz/attn_page.html, its HTML, CSS and
 * the script that draws every view from the data block, which is empty there.
 * The Makefile embeds the file as this NUL-terminated array, so the page
 * written needs no file besides itself; the script reads nothing but the data
 * block, and the page's security policy forbids any request. */
extern const unsigned char qkv__attn_page_html[];

/* The marker that opens the data block; the block ends at the next "</script>".
 * The page's data goes right after the marker's one occurrence in the page. */
#define QKV__ATTN_DATA_MARKER "<script type=\"application/json\" id=\"qkv-data\">"

/* A live page may compile its embedded module: its security policy gets
 * 'wasm-unsafe-eval' after this (a recorded page runs no WebAssembly). */
#define QKV__ATTN_CSP_SCRIPT "script-src 'unsafe-inline'"

/* Where a live page's module and checkpoint go (a comment in the page file;
 * a recorded page keeps it as it is). */
#define QKV__ATTN_LIVE_MARKER "<!-- qkv-live -->"

#endif
