/* The attention page's data: every view, layer and head as one JSON block
 * between the page's fixed text, built in memory and written in one go (see
 * viz_internal.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "viz_internal.h"

#include "train/internal.h"
#include "qkv/file.h"

/* A growing text; a failed allocation sticks, so only the end checks. */
typedef struct {
    char *text;
    size_t len, cap;
    bool failed;
} page_text;

/* Append n bytes of s. */
static void put_n(page_text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *grown = qkv_alloc(cap);
        if (!grown) {
            t->failed = true;
            return;
        }
        if (t->len)
            memcpy(grown, t->text, t->len);
        qkv_free(t->text);
        t->text = grown, t->cap = cap;
    }
    memcpy(t->text + t->len, s, n);
    t->len += n;
}

static void put(page_text *t, const char *s) { put_n(t, s, strlen(s)); }

static void putf(page_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(page_text *t, const char *fmt, ...)
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
static void put_string(page_text *t, const char *s)
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
static void put_key(page_text *t, bool first, const char *key)
{
    putf(t, "%s\"%s\":", first ? "" : ",", key);
}

/* n numbers as a JSON array. Five significant digits keep a 64-character
 * page small and every weight within 5e-6 of the model's; an exact zero
 * (a masked weight) stays exactly 0. A NaN or infinity has no JSON form:
 * it is an error. */
static int put_numbers(page_text *t, const qkv_real *x, size_t n)
{
    put(t, "[");
    for (size_t i = 0; i < n; i++) {
        if (!isfinite((double)x[i]))
            return qkv_set_error("attn html: the model produced a non-finite value (%g)",
                                 (double)x[i]);
        if (x[i] == 0)
            put(t, i ? ",0" : "0");
        else
            putf(t, "%s%.5g", i ? "," : "", (double)x[i]);
    }
    put(t, "]");
    return 0;
}

/* The n labels of a view's axis as an array of visible strings; padding
 * positions (valid[i] == 0) show as "·". */
static void put_labels(page_text *t, const char *labels, int n, const uint8_t *valid)
{
    char buf[16];
    put(t, "[");
    for (int i = 0; i < n; i++) {
        put(t, i ? "," : "");
        put_string(t, valid && !valid[i] ? "\xC2\xB7" : qkv__viz_label(buf, labels, i));
    }
    put(t, "]");
}

/* One layer's call: its weights (H,Tq,Tk) and its q, out (Tq,C), k, v (Tk,C). */
static int put_call(page_text *t, const qkv_attn_call *c)
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

static int put_view(page_text *t, const qkv__attn_view *v)
{
    const qkv_attn_call *c0 = v->calls;
    int H = c0->n_head, Tq = c0->q->shape[1], Tk = c0->k->shape[1], C = c0->q->shape[2];
    put_key(t, true, "id"), put_string(t, v->id);
    put_key(t, false, "name"), put_string(t, v->name);
    put_key(t, false, "rows_name"), put_string(t, v->rows_name);
    put_key(t, false, "cols_name"), put_string(t, v->cols_name);
    putf(t, ",\"causal\":%s,\"layers\":%d,\"heads\":%d,\"Tq\":%d,\"Tk\":%d,\"C\":%d,\"d\":%d",
         c0->mask.causal ? "true" : "false", v->n_layer, H, Tq, Tk, C, C / H);
    put_key(t, false, "rows"), put_labels(t, v->rows, Tq, v->rows_valid);
    put_key(t, false, "cols"), put_labels(t, v->cols, Tk, v->key_valid);
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

static int put_page(page_text *t, const qkv__attn_page *p)
{
    char hex[8];
    const char *page = (const char *)qkv__attn_page_html;
    const char *data = strstr(page, QKV__ATTN_DATA_MARKER);
    if (!data)
        return qkv_set_error("attn html: the embedded page has no data block (%s)",
                             QKV__ATTN_DATA_MARKER);
    data += strlen(QKV__ATTN_DATA_MARKER);
    put_n(t, page, (size_t)(data - page));
    put(t, "{");
    put_key(t, true, "model"), put_string(t, p->model);
    put_key(t, false, "summary"), put_string(t, p->summary);
    /* The heatmaps' colours, from the same map as the SVG pictures. */
    put_key(t, false, "colours");
    put(t, "[");
    for (int i = 0; i <= 16; i++)
        putf(t, "%s\"%s\"", i ? "," : "", qkv__viz_colour(hex, i / 16.0));
    put(t, "]");
    put_key(t, false, "views");
    put(t, "[");
    for (int i = 0; i < p->n_view; i++) {
        put(t, i ? ",{" : "{");
        if (put_view(t, &p->views[i]) < 0)
            return -1;
        put(t, "}");
    }
    put(t, "]}\n");
    put(t, data);
    return t->failed ? -1 : 0;
}

/* Every byte the page writes to a file goes through here: the safe-output
 * path (qkv/file.h), which refuses a device, a FIFO or an input, checks
 * every write and renames the finished page into place. */
static int write_file(const char *path, const char *data, size_t len)
{
    qkv_output *o = qkv_output_open(path);
    if (!o)
        return qkv__error_prefix("attn html");
    /* One large fwrite goes past the stream's buffer: when it fails, only its
     * errno says why (a full disk, a file too large), so it is kept here; the
     * commit would see just the stream's error flag. */
    errno = 0;
    if (fwrite(data, 1, len, qkv_output_file(o)) != len) {
        int err = errno ? errno : EIO;
        qkv_output_abort(o);
        return qkv_set_error("attn html: cannot write '%s': %s (the file there, if any, is left "
                             "as it was)", path, strerror(err));
    }
    return qkv_output_commit(o) < 0 ? qkv__error_prefix("attn html") : 0;
}

int qkv__attn_page_write(const char *path, const qkv__attn_page *p)
{
    page_text t = {0};
    int rc = put_page(&t, p) < 0 ? -1 : write_file(path, t.text, t.len);
    qkv_free(t.text);
    return rc;
}
