/* A text as the GPT reads it, for the pictures (see viz_internal.h): its
 * token ids and, for BPE tokens, a label of each token's bytes. A BPE token
 * is any run of bytes (part of a UTF-8 character, a control byte, a NUL), so
 * its label must show every byte without breaking the SVG or the page. */
#include <stdio.h>
#include <string.h>

#include "viz_internal.h"

/* Length of the well-formed UTF-8 character of two or more bytes at p (n
 * bytes there), or 0 when there is none (a stray, overlong, surrogate or
 * too-large sequence, or one cut short). */
static size_t utf8_char(const unsigned char *p, size_t n)
{
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    /* The second byte's range rules out overlongs, surrogates and > U+10FFFF. */
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) ||
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F))
        return 0;
    return len;
}

const char *qkv__viz_token_name(qkv_arena *a, const char *bytes, size_t n)
{
    char *name = qkv_arena_alloc(a, 4 * n + 1), *o = name; /* at most 4 bytes a byte ("\x80") */
    if (!name)
        return NULL;
    const unsigned char *p = (const unsigned char *)bytes;
    for (size_t i = 0; i < n;) {
        char one[2] = {(char)p[i], 0}, buf[16];
        size_t len = p[i] >= 0x80 ? utf8_char(p + i, n - i) : 0;
        if (len) { /* a whole character, as it is */
            memcpy(o, p + i, len), o += len, i += len;
            continue;
        }
        if (p[i] == '\\')
            memcpy(o, "\\\\", 2), o += 2;
        else if (p[i] == ' ' || p[i] == '\n' || p[i] == '\t' || (p[i] >= 0x20 && p[i] < 0x7f)) {
            const char *shown = qkv__viz_label(buf, one, 0);
            memcpy(o, shown, strlen(shown)), o += strlen(shown);
        } else
            o += sprintf(o, "\\x%02X", p[i]);
        i++;
    }
    *o = 0;
    return name;
}

int qkv__viz_label_width(const char *name)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        w += (*p & 0xC0) != 0x80; /* a character's first byte */
    return w;
}

int viz_tokenize(qkv_arena *a, const qkv_tokenizer *vocab, const qkv_bpe *bpe,
                      const char *text, int block_size, const char *what, viz_tokens *out)
{
    size_t len = strlen(text);
    int32_t *ids = qkv_arena_alloc(a, (len ? len : 1) * sizeof *ids);
    if (!ids)
        return -1;
    if (!bpe) {
        if (len < 1 || len > (size_t)block_size)
            return qkv_set_error("%s has %zu characters; the model reads 1 to %d", what, len,
                                 block_size);
        *out = (viz_tokens){.T = (int)len, .ids = ids};
        return qkv_encode(vocab, text, len, ids);
    }
    long long T = qkv_bpe_encode(bpe, text, len, ids);
    if (T < 0)
        return -1;
    if (T < 1 || T > block_size)
        return qkv_set_error("%s has %lld tokens (%zu bytes); the model reads 1 to %d tokens",
                             what, T, len, block_size);
    const char **names = qkv_arena_alloc(a, (size_t)T * sizeof *names);
    for (long long t = 0; names && t < T; t++) {
        size_t n;
        const char *bytes = qkv_bpe_token(bpe, ids[t], &n);
        if (!(names[t] = qkv__viz_token_name(a, bytes, n)))
            return -1;
    }
    *out = (viz_tokens){.T = (int)T, .ids = ids, .names = names};
    return names ? 0 : -1;
}
