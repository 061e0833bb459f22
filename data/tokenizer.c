/* The byte-level character tokenizer (see qkv/data.h). */
#include "qkv/data.h"

#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "data/internal.h"
#include "io/internal.h"

/* Fill tok from a table of which bytes are present: ids in byte order. */
static void from_present(qkv_tokenizer *tok, const bool present[256])
{
    tok->size = 0;
    for (int b = 0; b < 256; b++) {
        tok->id[b] = -1;
        if (present[b]) {
            tok->id[b] = (int16_t)tok->size;
            tok->byte[tok->size++] = (uint8_t)b;
        }
    }
}

void qkv_tokenizer_build(qkv_tokenizer *tok, const char *text, size_t len)
{
    if (qkv__null("qkv_tokenizer_build", "tok", tok))
        return;
    bool present[256] = {false};
    if (qkv__null("qkv_tokenizer_build", "text", text) && len > 0)
        len = 0; /* an empty vocabulary, not garbage */
    for (size_t i = 0; i < len; i++)
        present[(unsigned char)text[i]] = true;
    from_present(tok, present);
}

int qkv__vocab_check(const uint8_t *bytes, long long n)
{
    if (n < 0 || n > 256)
        return qkv_set_error("a vocabulary of %lld bytes; a byte vocabulary has 0 to 256", n);
    if (n > 0 && !bytes)
        return qkv_set_error("a vocabulary of %lld bytes at NULL", n);
    for (long long i = 1; i < n; i++)
        if (bytes[i] <= bytes[i - 1])
            return qkv_set_error("a vocabulary's bytes must be strictly ascending, but byte %lld "
                                 "is 0x%02x after 0x%02x%s",
                                 i, bytes[i], bytes[i - 1],
                                 bytes[i] == bytes[i - 1] ? " (a duplicate)" : "");
    return 0;
}

int qkv_tokenizer_from_bytes(qkv_tokenizer *tok, const uint8_t *bytes, int n)
{
    const char *fn = "qkv_tokenizer_from_bytes";
    if (qkv__null(fn, "tok", tok) || (n > 0 && qkv__null(fn, "bytes", bytes)))
        return -1;
    if (qkv__vocab_check(bytes, n) < 0)
        return qkv__error_prefix("%s", fn);
    bool present[256] = {false};
    for (int i = 0; i < n; i++)
        present[bytes[i]] = true;
    from_present(tok, present);
    return 0;
}

/* A byte as a reader would type it in C: 'a', '\n', '\'', '\xe2'. */
static const char *printable(unsigned char c, char buf[8])
{
    const char *esc = c == '\n'   ? "\\n"
                      : c == '\t' ? "\\t"
                      : c == '\r' ? "\\r"
                      : c == '\\' ? "\\\\"
                      : c == '\'' ? "\\'"
                      : c == 0    ? "\\0"
                                  : NULL;
    if (esc)
        snprintf(buf, 8, "'%s'", esc);
    else if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 8, "'%c'", c);
    else
        snprintf(buf, 8, "'\\x%02x'", c);
    return buf;
}

/* 0 when tok, and the arrays of a len-long encode or decode, are there. */
static int check_args(const char *fn, const qkv_tokenizer *tok, const void *in, const char *in_name,
                      const void *out, const char *out_name, size_t len)
{
    if (qkv__null(fn, "tok", tok) ||
        (len && (qkv__null(fn, in_name, in) || qkv__null(fn, out_name, out))))
        return -1;
    if (tok->size < 0 || tok->size > 256)
        return qkv_set_error("%s: tok has %d tokens; a byte vocabulary has 0 to 256", fn,
                             tok->size);
    return 0;
}

int qkv_encode(const qkv_tokenizer *tok, const char *text, size_t len, int32_t *ids)
{
    if (check_args("qkv_encode", tok, text, "text", ids, "ids", len) < 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (tok->id[c] >= tok->size)
            return qkv_set_error("qkv_encode: tok maps byte 0x%02x to id %d, outside its %d "
                                 "tokens: not a vocabulary qkv_tokenizer_build made",
                                 c, tok->id[c], tok->size);
        if (tok->id[c] < 0) {
            char buf[8];
            return qkv_set_error(
                "qkv_encode: character %s at position %zu is not in the vocabulary "
                "(%d characters)",
                printable(c, buf), i, tok->size);
        }
        ids[i] = tok->id[c];
    }
    return 0;
}

int qkv_decode(const qkv_tokenizer *tok, const int32_t *ids, size_t n, char *text)
{
    if (check_args("qkv_decode", tok, ids, "ids", text, "text", n) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= tok->size)
            return qkv_set_error("qkv_decode: token id %d at position %zu is outside [0, %d)",
                                 (int)ids[i], i, tok->size);
        text[i] = (char)tok->byte[ids[i]];
    }
    return 0;
}
