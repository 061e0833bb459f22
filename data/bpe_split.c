/* The BPE pre-split: where a chunk of text ends (see qkv/bpe.h). Merges never
 * cross a chunk's edge, so a token is never half a word and half a space or a
 * comma: GPT-2's pattern, with ASCII classes and without its contractions. */
#include "data/bpe_internal.h"

enum { LETTER, DIGIT, SPACE, OTHER };

/* Bytes >= 0x80 are letters: a UTF-8 word stays one chunk. */
static int byte_class(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)
        return LETTER;
    if (c >= '0' && c <= '9')
        return DIGIT;
    if (c == ' ' || (c >= '\t' && c <= '\r'))
        return SPACE;
    return OTHER;
}

size_t qkv__bpe_chunk_end(const unsigned char *text, size_t len, size_t pos)
{
    size_t i = pos;
    /* One space goes with the word, number or punctuation after it. */
    if (text[i] == ' ' && i + 1 < len && byte_class(text[i + 1]) != SPACE)
        i++;
    int c = byte_class(text[i]);
    while (i < len && byte_class(text[i]) == c)
        i++;
    /* A run of whitespace leaves its last space to the word that follows. */
    if (c == SPACE && i < len && i - pos > 1 && text[i - 1] == ' ')
        i--;
    return i;
}
