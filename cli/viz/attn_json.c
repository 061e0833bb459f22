/* The attention page's data as JSON (see viz_internal.h): every view, layer
 * and head, built in memory. The written page holds it as text; the live
 * page's module (cli/viz/live/) hands the numbers over as one float
 * array beside the JSON instead, so a recomputation prints no number. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "viz_internal.h"


/* Grow *buf (of *cap bytes, *len used) to hold need bytes; false when out of
 * memory (the buffer is then left as it was). */
static bool grow(void **buf, size_t *cap, size_t len, size_t need)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 1 << 16;
    while (c < need)
        c *= 2;
    char *grown = qkv_alloc(c);
    if (!grown)
        return false;
    if (len)
        memcpy(grown, *buf, len);
    qkv_free(*buf);
    *buf = grown, *cap = c;
    return true;
}

void qkv__attn_json_append(qkv__attn_json *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (!grow((void **)&t->text, &t->cap, t->len, t->len + n + 1)) {
        t->failed = true;
        return;
    }
    memcpy(t->text + t->len, s, n);
    t->len += n;
    t->text[t->len] = 0;
}

static void put_n(qkv__attn_json *t, const char *s, size_t n) { qkv__attn_json_append(t, s, n); }
static void put(qkv__attn_json *t, const char *s) { put_n(t, s, strlen(s)); }

static void putf(qkv__attn_json *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(qkv__attn_json *t, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= 0)
        put_n(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* s as a JSON string. '<', '>' and '&' are escaped too, so no text can end
 * the <script> block it sits in. */
static void put_string(qkv__attn_json *t, const char *s)
{
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            putf(t, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            putf(t, "\\u%04x", *p);
        else
            put_n(t, (const char *)p, 1);
    }
    put(t, "\"");
}

/* "key": for an object member (comma before all but the first). */
static void put_key(qkv__attn_json *t, bool first, const char *key)
{
    putf(t, "%s\"%s\":", first ? "" : ",", key);
}

/* n numbers as a JSON array, with p->digits significant digits (5 keep a
 * 64-character page small and every weight within 5e-6 of the model's; 9
 * give a float back exactly); an exact zero (a masked weight) stays exactly
 * 0. In binary mode the numbers go to t->bin and the array is
 * {"f":offset,"n":n} into it. A NaN or infinity has no JSON form: it is an
 * error. */
static int put_numbers(qkv__attn_json *t, const qkv_real *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite((double)x[i]))
            return qkv_set_error("attn html: the model produced a non-finite value (%g)",
                                 (double)x[i]);
    if (t->binary) {
        if (!grow((void **)&t->bin, &t->bin_cap, t->n_bin * sizeof *x,
                  (t->n_bin + n) * sizeof *x)) {
            t->failed = true;
            return 0;
        }
        memcpy(t->bin + t->n_bin, x, n * sizeof *x);
        putf(t, "{\"f\":%zu,\"n\":%zu}", t->n_bin, n);
        t->n_bin += n;
        return 0;
    }
    int digits = t->digits ? t->digits : 5;
    put(t, "[");
    for (size_t i = 0; i < n; i++) {
        if (x[i] == 0)
            put(t, i ? ",0" : "0");
        else
            putf(t, "%s%.*g", i ? "," : "", digits, (double)x[i]);
    }
    put(t, "]");
    return 0;
}

/* The n labels of a view's axis (names, else labels' characters) as an
 * array of visible strings; padding positions (valid[i] == 0) show as "·". */
static void put_labels(qkv__attn_json *t, const char *const *names, const char *labels, int n,
                       const uint8_t *valid)
{
    char buf[16];
    put(t, "[");
    for (int i = 0; i < n; i++) {
        put(t, i ? "," : "");
        put_string(t, valid && !valid[i] ? "\xC2\xB7"
                      : names      ? names[i]
                                   : qkv__viz_label(buf, labels, i));
    }
    put(t, "]");
}

/* One layer's call: its weights (H,Tq,Tk) and its q, out (Tq,C), k, v (Tk,C). */
static int put_call(qkv__attn_json *t, const qkv_attn_call *c)
{
    put_key(t, true, "w");
    if (put_numbers(t, c->weights->data, c->weights->size) < 0)
        return -1;
    const char *names[4] = {"q", "k", "v", "out"};
    const qkv_tensor *parts[4] = {c->q, c->k, c->v, c->out};
    for (int i = 0; i < 4; i++) {
        put_key(t, false, names[i]);
        if (put_numbers(t, parts[i]->data, parts[i]->size) < 0)
            return -1;
    }
    return 0;
}

static int put_view(qkv__attn_json *t, const qkv__attn_view *v)
{
    const qkv_attn_call *c0 = v->calls;
    int H = c0->n_head, Tq = c0->q->shape[1], Tk = c0->k->shape[1], C = c0->q->shape[2];
    put_key(t, true, "id"), put_string(t, v->id);
    put_key(t, false, "name"), put_string(t, v->name);
    put_key(t, false, "rows_name"), put_string(t, v->rows_name);
    put_key(t, false, "cols_name"), put_string(t, v->cols_name);
    putf(t, ",\"causal\":%s,\"layers\":%d,\"heads\":%d,\"Tq\":%d,\"Tk\":%d,\"C\":%d,\"d\":%d",
         c0->mask.causal ? "true" : "false", v->n_layer, H, Tq, Tk, C, C / H);
    put_key(t, false, "rows"), put_labels(t, v->row_names, v->rows, Tq, v->rows_valid);
    put_key(t, false, "cols"), put_labels(t, v->col_names, v->cols, Tk, v->key_valid);
    put_key(t, false, "valid");
    put(t, "[");
    for (int j = 0; j < Tk; j++)
        putf(t, "%s%d", j ? "," : "", v->key_valid ? v->key_valid[j] != 0 : 1);
    put(t, "]");
    put_key(t, false, "data");
    put(t, "[");
    for (int l = 0; l < v->n_layer; l++) {
        put(t, l ? ",{" : "{");
        if (put_call(t, &v->calls[(size_t)l * v->stride]) < 0)
            return -1;
        put(t, "}");
    }
    put(t, "]");
    return 0;
}

/* The next-token distribution: the vocabulary's characters (or tokens'
 * labels) and the logits the model gives the one after the last position. */
static int put_next(qkv__attn_json *t, const qkv__attn_page *p)
{
    if (p->next_names) /* the page then says "Next token" */
        put(t, ",\"tokens\":true");
    put_key(t, false, "next");
    put(t, "{\"chars\":");
    put_labels(t, p->next_names, p->next_chars, p->n_next, NULL);
    put(t, ",\"logits\":");
    if (put_numbers(t, p->next_logits, (size_t)p->n_next) < 0)
        return -1;
    put(t, "}");
    return 0;
}

int qkv__attn_json_data(qkv__attn_json *t, const qkv__attn_page *p)
{
    char hex[8];
    put(t, "{");
    put_key(t, true, "model"), put_string(t, p->model);
    put_key(t, false, "summary"), put_string(t, p->summary);
    /* What the model read, as typed: the live page edits it. */
    put_key(t, false, "text"), put_string(t, p->text);
    if (p->output)
        put_key(t, false, "output"), put_string(t, p->output);
    /* The heatmaps' colours, from the same map as the SVG pictures. */
    put_key(t, false, "colours");
    put(t, "[");
    for (int i = 0; i <= 16; i++)
        putf(t, "%s\"%s\"", i ? "," : "", qkv__viz_colour(hex, i / 16.0));
    put(t, "]");
    if (p->n_next > 0 && put_next(t, p) < 0)
        return -1;
    put_key(t, false, "views");
    put(t, "[");
    for (int i = 0; i < p->n_view; i++) {
        put(t, i ? ",{" : "{");
        if (put_view(t, &p->views[i]) < 0)
            return -1;
        put(t, "}");
    }
    put(t, "]}");
    return t->failed ? qkv_set_error("attn html: out of memory for the page's data") : 0;
}

void qkv__attn_json_free(qkv__attn_json *t)
{
    qkv_free(t->text);
    qkv_free(t->bin);
    *t = (qkv__attn_json){0};
}
