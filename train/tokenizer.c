/* The byte-level character tokenizer (see qkv/data.h). */
#include "qkv/data.h"

#include <stdio.h>
#include <string.h>

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
    bool present[256] = {false};
    for (size_t i = 0; i < len; i++)
        present[(unsigned char)text[i]] = true;
    from_present(tok, present);
}

int qkv_tokenizer_from_bytes(qkv_tokenizer *tok, const uint8_t *bytes, int n)
{
    if (n < 0 || n > 256)
        return qkv_set_error("vocabulary: %d bytes; a byte vocabulary has 0 to 256", n);
    bool present[256] = {false};
    for (int i = 0; i < n; i++) {
        if (i > 0 && bytes[i] <= bytes[i - 1])
            return qkv_set_error("vocabulary: bytes must be strictly ascending, but byte %d is "
                                 "0x%02x after 0x%02x",
                                 i, bytes[i], bytes[i - 1]);
        present[bytes[i]] = true;
    }
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

int qkv_encode(const qkv_tokenizer *tok, const char *text, size_t len, int32_t *ids)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (tok->id[c] < 0) {
            char buf[8];
            return qkv_set_error("encode: character %s at position %zu is not in the vocabulary "
                                 "(%d characters)",
                                 printable(c, buf), i, tok->size);
        }
        ids[i] = tok->id[c];
    }
    return 0;
}

int qkv_decode(const qkv_tokenizer *tok, const int32_t *ids, size_t n, char *text)
{
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= tok->size)
            return qkv_set_error("decode: token id %d at position %zu is outside [0, %d)",
                                 (int)ids[i], i, tok->size);
        text[i] = (char)tok->byte[ids[i]];
    }
    return 0;
}
