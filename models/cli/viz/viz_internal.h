/* Internal to models/cli/viz/: what the picture writers share. Not installed. */
#ifndef QKV_VIZ_INTERNAL_H
#define QKV_VIZ_INTERNAL_H

#include "models/cli/viz/viz.h"

/* ---- shared by every picture (svg.c) ---- */

/* The colour of t in [0, 1] on the viridis-like map, as "#rrggbb". */
const char *qkv__viz_colour(char hex[8], double t);

/* How label i is shown: its character made visible (a space as '␣', a
 * newline as '⏎', ...), or its number when labels is NULL. */
const char *qkv__viz_label(char buf[16], const char *labels, int i);

/* ---- the attention page (attn_page.html, attn_html.c) ---- */

/* One attention of a model, every layer of it, as the page shows it. */
typedef struct qkv__attn_view {
    const char *id;             /* the page's short name: "self", "enc", "dec", "cross" */
    const char *name;           /* what it is, for people ("cross-attention") */
    const char *rows_name;      /* caption of the queries ("output character") */
    const char *cols_name;      /* caption of the keys */
    const char *rows, *cols;    /* Tq and Tk label characters */
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
    int n_view;               /* 1 (a GPT) or 3 (an encoder-decoder) */
    qkv__attn_view views[3];
} qkv__attn_page;

/* Write the page p to path (attn_html.c): the fixed text around the data as
 * one JSON block. 0, or -1 with a message naming path. */
int qkv__attn_page_write(const char *path, const qkv__attn_page *p);

/* The page's fixed text: models/cli/viz/attn_page.html, its HTML, CSS and
 * the script that draws every view from the data block, which is empty there.
 * The Makefile embeds the file as this NUL-terminated array, so the page
 * written needs no file besides itself; the script reads nothing but the data
 * block, and the page's security policy forbids any request. */
extern const unsigned char qkv__attn_page_html[];

/* The marker that opens the data block; the block ends at the next "</script>".
 * The page's data goes right after the marker's one occurrence in the page. */
#define QKV__ATTN_DATA_MARKER "<script type=\"application/json\" id=\"qkv-data\">"

#endif
