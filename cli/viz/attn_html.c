/* The attention page: the page's fixed text around its data block (one JSON
 * object, attn_json.c), and for a live page its module and checkpoint,
 * built in memory and written in one go (see viz_internal.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "viz_internal.h"

#include "qkv/file.h"

/* n bytes as base64 (RFC 4648, with padding), which the page's atob reads. */
static void put_base64(qkv__attn_json *t, const unsigned char *b, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char quad[4];
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)b[i] << 16 | (i + 1 < n ? (unsigned)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        quad[0] = abc[v >> 18], quad[1] = abc[(v >> 12) & 63];
        quad[2] = i + 1 < n ? abc[(v >> 6) & 63] : '=';
        quad[3] = i + 2 < n ? abc[v & 63] : '=';
        qkv__attn_json_append(t, quad, 4);
    }
}

static void put(qkv__attn_json *t, const char *s) { qkv__attn_json_append(t, s, strlen(s)); }

/* The live block: the module's bytes and the checkpoint's as base64, and the
 * module's loader as an inline script (it must not end its own block). */
static int put_live(qkv__attn_json *t, const attn_live *live)
{
    for (const char *s = live->module_js; (s = strchr(s, '<')); s++)
        if (strncasecmp(s, "</script", 8) == 0)
            return qkv_set_error("attn html: the module's JavaScript contains \"</script\"; it "
                                 "cannot sit inline in the page");
    put(t, "<script type=\"application/octet-stream\" id=\"qkv-wasm\">");
    put_base64(t, live->wasm, live->wasm_len);
    put(t, "</script>\n<script type=\"application/octet-stream\" id=\"qkv-ckpt\">");
    put_base64(t, live->ckpt, live->ckpt_len);
    put(t, "</script>\n<script id=\"qkv-module\">\n");
    put(t, live->module_js);
    put(t, "\n</script>\n");
    return 0;
}

static int put_page(qkv__attn_json *t, const qkv__attn_page *p, const attn_live *live)
{
    const char *page = (const char *)qkv__attn_page_html;
    const char *csp = strstr(page, QKV__ATTN_CSP_SCRIPT);
    const char *data = strstr(page, QKV__ATTN_DATA_MARKER);
    const char *slot = strstr(page, QKV__ATTN_LIVE_MARKER);
    if (!csp || !data || !slot || csp > slot || slot > data)
        return qkv_set_error("attn html: the embedded page lacks its policy (%s), its live slot "
                             "(%s) or its data block (%s)", QKV__ATTN_CSP_SCRIPT,
                             QKV__ATTN_LIVE_MARKER, QKV__ATTN_DATA_MARKER);
    data += strlen(QKV__ATTN_DATA_MARKER);
    if (live) {
        csp += strlen(QKV__ATTN_CSP_SCRIPT);
        qkv__attn_json_append(t, page, (size_t)(csp - page));
        put(t, " 'wasm-unsafe-eval'");
        page = csp;
        slot += strlen(QKV__ATTN_LIVE_MARKER);
        qkv__attn_json_append(t, page, (size_t)(slot - page));
        if (put_live(t, live) < 0)
            return -1;
        page = slot;
    }
    qkv__attn_json_append(t, page, (size_t)(data - page));
    /* A live page checks its module against every float digit of this program's numbers. */
    t->digits = live ? 9 : 5;
    if (qkv__attn_json_data(t, p) < 0)
        return -1;
    put(t, "\n");
    put(t, data);
    return t->failed ? qkv_set_error("attn html: out of memory for the page") : 0;
}

/* Every byte the page writes to a file goes through here: the safe-output
 * path (qkv/file.h), which refuses a device, a FIFO or an input, checks
 * every write and renames the finished page into place. */
static int write_file(const char *path, const char *data, size_t len)
{
    qkv_output *o = qkv_output_open(path);
    if (!o)
        return viz_error_prefix("attn html");
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
    return qkv_output_commit(o) < 0 ? viz_error_prefix("attn html") : 0;
}

int qkv__attn_page_write(const char *path, const qkv__attn_page *p, const attn_live *live)
{
    qkv__attn_json t = {0};
    int rc = put_page(&t, p, live) < 0 ? -1 : write_file(path, t.text, t.len);
    qkv__attn_json_free(&t);
    return rc;
}

/* Where a recording's page goes: the file path, live or not. */
typedef struct page_dest {
    const char *path;
    const attn_live *live;
} page_dest;

static int write_page(const qkv__attn_page *p, void *user)
{
    const page_dest *d = user;
    return qkv__attn_page_write(d->path, p, d->live);
}

/* live, checked: NULL, or every part there. */
static int check_live(const char *who, const attn_live *live)
{
    if (live && (viz_null(who, "live->module_js", live->module_js) ||
                 viz_null(who, "live->wasm", live->wasm) || viz_null(who, "live->ckpt", live->ckpt)))
        return -1;
    return 0;
}

int attn_html_gpt_live(const char *path, const qkv_gpt *m, const qkv_tokenizer *vocab,
                       const char *text, const attn_live *live)
{
    const char *who = live ? "attn_html_gpt_live" : "attn_html_gpt";
    if (viz_null(who, "path", path) || check_live(who, live) < 0)
        return -1;
    page_dest d = {path, live};
    return qkv__attn_record_gpt(who, m, vocab, text, write_page, &d);
}

int attn_html_gpt(const char *path, const qkv_gpt *m, const qkv_tokenizer *vocab, const char *text)
{
    return attn_html_gpt_live(path, m, vocab, text, NULL);
}

int attn_html_gpt_bpe(const char *path, const qkv_gpt *m, const qkv_bpe *bpe, const char *text)
{
    if (viz_null("attn_html_gpt_bpe", "path", path))
        return -1;
    page_dest d = {path, NULL};
    return qkv__attn_record_gpt_bpe("attn_html_gpt_bpe", m, bpe, text, write_page, &d);
}

int attn_html_seq2seq_live(const char *path, const qkv_seq2seq *m, const char *input,
                           const attn_live *live)
{
    const char *who = live ? "attn_html_seq2seq_live" : "attn_html_seq2seq";
    if (viz_null(who, "path", path) || check_live(who, live) < 0)
        return -1;
    page_dest d = {path, live};
    return qkv__attn_record_seq2seq(who, m, input, NULL, write_page, &d);
}

int attn_html_seq2seq(const char *path, const qkv_seq2seq *m, const char *input)
{
    return attn_html_seq2seq_live(path, m, input, NULL);
}
