/* GPT-2's tokenizer files written by tests (see gpt2_files.h). */
#include "gpt2_files.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPT-2's bytes_to_unicode(), as its Python reads: the printable bytes are
 * themselves; the others, in order, are 256, 257, ... */
static uint32_t byte_char(int b)
{
    int n = 0;
    for (int c = 0; c < 256; c++) {
        int printable = (c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || (c >= 0xae);
        if (c == b)
            return printable ? (uint32_t)c : 256u + (uint32_t)n;
        n += !printable;
    }
    return 0;
}

size_t qkv_test_gpt2_spell(const char *b, size_t n, char *out, int json)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = byte_char((unsigned char)b[i]);
        if (json && (c == '"' || c == '\\'))
            m += (size_t)sprintf(out + m, "\\%c", (char)c);
        else if (json && c >= 256)
            m += (size_t)sprintf(out + m, "\\u%04x", (unsigned)c);
        else if (c < 0x80)
            out[m++] = (char)c;
        else
            out[m++] = (char)(0xc0 | c >> 6), out[m++] = (char)(0x80 | (c & 0x3f));
    }
    return m;
}

char *qkv_test_gpt2_byte_vocab(const char *more)
{
    char *v = malloc(8192 + strlen(more)), buf[16];
    size_t n = (size_t)sprintf(v, "{");
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        size_t k = qkv_test_gpt2_spell(&c, 1, buf, 1);
        n += (size_t)sprintf(v + n, "\"%.*s\": %d%s", (int)k, buf, b, b < 255 || *more ? ", " : "");
    }
    sprintf(v + n, "%s}", more);
    return v;
}
