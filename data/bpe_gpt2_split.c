/* GPT-2's pre-split (see data/bpe_gpt2.h): its pattern matched by hand over
 * UTF-8, with the Unicode classes of data/bpe_gpt2_classes.c. No regex library:
 * the pattern's alternatives are tried in order at the chunk's start, as a
 * backtracking regex engine tries them. */
#include "data/bpe_gpt2.h"

enum { LETTER, NUMBER, SPACE, OTHER };

/* Unicode's White_Space property (PropList.txt), which the pattern's \s is in
 * the regex module GPT-2 uses. */
static int is_space(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
           c == 0x205f || c == 0x3000;
}

/* Whether c is in one of the n sorted ranges r. */
static int in_ranges(const uint32_t (*r)[2], int n, uint32_t c)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c < r[mid][0])
            hi = mid - 1;
        else if (c > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

size_t qkv__utf8_decode(const unsigned char *p, size_t n, uint32_t *c, int *valid)
{
    *valid = 1;
    *c = p[0];
    if (p[0] < 0x80)
        return 1;
    size_t k = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (k == 0 || p[0] >= 0xf5 || k > n)
        goto invalid;
    uint32_t v = p[0] & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            goto invalid;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < least[k] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        goto invalid;
    *c = v;
    return k;
invalid:
    *valid = 0;
    return 1;
}

/* The class of the code point at text[i] (i < len) and its length in *k. */
static int class_at(const unsigned char *text, size_t len, size_t i, size_t *k)
{
    uint32_t c;
    int valid;
    *k = qkv__utf8_decode(text + i, len - i, &c, &valid);
    if (!valid)
        return OTHER; /* a stray byte: punctuation to the pattern, a byte token to BPE */
    if (is_space(c))
        return SPACE;
    if (in_ranges(qkv__unicode_letters, qkv__unicode_n_letters, c))
        return LETTER;
    if (in_ranges(qkv__unicode_numbers, qkv__unicode_n_numbers, c))
        return NUMBER;
    return OTHER;
}

/* The length of the contraction ('s 't 're 've 'm 'll 'd, lower case only) at
 * p, n bytes there, p[0] an apostrophe; 0 when there is none. */
static size_t contraction(const unsigned char *p, size_t n)
{
    if (n >= 2 && (p[1] == 's' || p[1] == 't' || p[1] == 'm' || p[1] == 'd'))
        return 2;
    if (n >= 3 && ((p[1] == 'r' && p[2] == 'e') || (p[1] == 'v' && p[2] == 'e') ||
                   (p[1] == 'l' && p[2] == 'l')))
        return 3;
    return 0;
}

size_t qkv__bpe_gpt2_chunk_end(const unsigned char *text, size_t len, size_t pos)
{
    if (text[pos] == '\'') {
        size_t k = contraction(text + pos, len - pos);
        if (k)
            return pos + k;
    }
    size_t k, i = pos;
    int c = class_at(text, len, pos, &k);
    /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: one space (U+0020 only) may
     * lead a run of letters, numbers or other code points. */
    if (text[pos] == ' ' && pos + 1 < len) {
        size_t k2;
        int c2 = class_at(text, len, pos + 1, &k2);
        if (c2 != SPACE)
            c = c2, i = pos + 1;
    }
    if (c != SPACE) {
        while (i < len && class_at(text, len, i, &k) == c)
            i += k;
        return i;
    }
    /* `\s+(?!\S)`: a run of white space that ends the text, or the run less its
     * last code point (which stays before the non-space); `\s+` when that leaves
     * nothing. */
    size_t last = pos;
    while (i < len && class_at(text, len, i, &k) == SPACE)
        last = i, i += k;
    if (i == len)
        return i;
    return last > pos ? last : i;
}
