/* Reading the labels of qkv attn's pictures of a BPE model back (see token_labels.h). */
#include "token_labels.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "attn_page_read.h"

const char token_labels_text[] = "the cat sat\ton \\ the mat\nna\xC3\xAFve \xFF";

/* The bytes a label stands for, its escapes taken back (the plain reading of
 * the rule: '␣' a space, '⏎' a newline, '⇥' a tab, "\\" a backslash, "\xHH"
 * a byte, anything else itself), into out; their number. A label must be
 * UTF-8 with no control byte: it is also checked here. */
static size_t unescape(const char *label, char *out)
{
    size_t n = 0;
    for (const char *p = label; *p;) {
        ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "label '%s' has a control byte",
                      label);
        if (strncmp(p, "\xE2\x90\xA3", 3) == 0)
            out[n++] = ' ', p += 3;
        else if (strncmp(p, "\xE2\x8F\x8E", 3) == 0)
            out[n++] = '\n', p += 3;
        else if (strncmp(p, "\xE2\x87\xA5", 3) == 0)
            out[n++] = '\t', p += 3;
        else if (strncmp(p, "\\\\", 2) == 0)
            out[n++] = '\\', p += 2;
        else if (strncmp(p, "\\x", 2) == 0) {
            unsigned v;
            ck_assert_msg(sscanf(p + 2, "%2X", &v) == 1, "label '%s': a bad escape", label);
            out[n++] = (char)v, p += 4;
        } else
            out[n++] = *p++;
    }
    return n;
}

void check_label(const qkv_bpe *bpe, int32_t id, const char *label)
{
    size_t len, n;
    const char *bytes = qkv_bpe_token(bpe, id, &len);
    char back[64];
    ck_assert_int_lt(strlen(label), sizeof back);
    n = unescape(label, back);
    ck_assert_msg(n == len && memcmp(back, bytes, len) == 0, "token %d's label '%s' is not its "
                  "%zu bytes", id, label, len);
}

int svg_labels(const char *svg, const char *attrs, char labels[][64], int cap)
{
    int n = 0;
    for (const char *p = svg; (p = strstr(p, "<text ")); p++) {
        const char *end = strchr(p, '>'), *close = strstr(p, "</text>");
        char head[256];
        snprintf(head, sizeof head, "%.*s", (int)(end - p), p);
        if (!strstr(head, attrs) || n == cap)
            continue;
        snprintf(labels[n++], 64, "%.*s", (int)(close - end - 1), end + 1);
    }
    return n;
}

void check_bpe_page(const char *path, const qkv_bpe *bpe)
{
    int32_t ids[64];
    int T = (int)qkv_bpe_encode(bpe, token_labels_text, strlen(token_labels_text), ids);
    jval data = attn_page_data(path);
    ck_assert_str_eq(json_get(&data, "text")->str, token_labels_text);
    const jval *v = &json_get(&data, "views")->items[0];
    ck_assert_int_eq(json_get_int(v, "Tq"), T);
    ck_assert_int_eq(json_get_int(v, "Tk"), T);
    const jval *rows = json_get(v, "rows"), *cols = json_get(v, "cols");
    ck_assert_int_eq(rows->n, T);
    for (int t = 0; t < T; t++) {
        check_label(bpe, ids[t], rows->items[t].str);
        ck_assert_str_eq(cols->items[t].str, rows->items[t].str);
    }
    /* The next token's distribution: every token, by its text, in id order. */
    const jval *next = json_get(&data, "next"), *chars = json_get(next, "chars");
    ck_assert_int_eq(chars->n, qkv_bpe_size(bpe));
    ck_assert_int_eq(json_get(next, "logits")->n, qkv_bpe_size(bpe));
    for (int i = 0; i < chars->n; i++)
        check_label(bpe, i, chars->items[i].str);
    json_free(&data);
}
