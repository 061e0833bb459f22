/* GPT-2's tokenizer files (see qkv/bpe.h): vocab.json (encoder.json) and
 * merges.txt (vocab.bpe) made into a qkv_bpe with GPT-2's ids and pre-split.
 *
 * Both files spell a token's bytes as characters, one per byte, through
 * GPT-2's byte-to-unicode table (a printable byte stands for itself, the other
 * 68 for U+0100 onwards, so "Ġ" is a space). The tokens are looked up by their
 * bytes in vocab.json sorted by bytes; merge i's halves must be tokens made
 * before it, and what it makes must be a token of vocab.json no other merge
 * makes. Tokens of vocab.json no merge makes (<|endoftext|>) are extra tokens:
 * decoded as their bytes, never made by encoding. */
#include <stdlib.h>
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_internal.h"
#include "data/bpe_gpt2.h"
#include "qkv/file.h"

/* Whether GPT-2 prints byte b as itself: '!'..'~', '¡'..'¬', '®'..'ÿ'. */
static int printable(int b)
{
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

/* The byte code point c stands for in GPT-2's files, or -1: the printable
 * bytes are themselves, and U+0100 + k is the k-th byte that is not. */
static int char_byte(uint32_t c)
{
    if (c < 256)
        return printable((int)c) ? (int)c : -1;
    for (int b = 0, k = 256; b < 256; b++)
        if (!printable(b) && k++ == (int)c)
            return b;
    return -1;
}

/* The bytes the n UTF-8 bytes of s spell, into out (room for n): the length,
 * or -1 when a character is none of GPT-2's 256. */
static long long spell(const char *s, size_t n, unsigned char *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        int valid, b;
        i += qkv__utf8_decode((const unsigned char *)s + i, n - i, &c, &valid);
        if (!valid || (b = char_byte(c)) < 0)
            return -1;
        out[m++] = (unsigned char)b;
    }
    return (long long)m;
}

/* A token of vocab.json by its bytes. */
typedef struct entry {
    const unsigned char *p;
    uint32_t len;
    int32_t id;
} entry;

static int by_bytes(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The id of the token of bytes p[0, n) among the n_vocab sorted ones, or -1. */
static int32_t find(const entry *v, int n_vocab, const unsigned char *p, size_t n)
{
    entry key = {p, (uint32_t)n, 0};
    const entry *e = bsearch(&key, v, (size_t)n_vocab, sizeof *v, by_bytes);
    return e ? e->id : -1;
}

/* What loading builds: vocab.json's tokens by bytes, and the ids merges.txt
 * gives the internal tokens. */
typedef struct loading {
    entry *vocab;         /* sorted by bytes */
    unsigned char *spelt; /* their bytes */
    int n_vocab;
    int32_t *to_int; /* public id -> internal, -1 for an extra token */
    int32_t *to_ext; /* internal id -> public */
    int32_t *merges; /* internal ids, 2 a merge */
    int n_merges;
} loading;

/* vocab.json into l->vocab, sorted, checked: every token GPT-2's characters,
 * no two alike, the ids 0 to n - 1 each once. */
static int read_vocab(loading *l, const char *json, size_t len)
{
    qkv__gpt2_vocab v;
    if (qkv__gpt2_vocab_parse(&v, json, len) < 0)
        return -1;
    int rc = -1;
    if (v.n > QKV_BPE_MAX_VOCAB) {
        qkv_set_error("%d tokens; a tokenizer has at most %d", v.n, QKV_BPE_MAX_VOCAB);
        goto done;
    }
    l->vocab = qkv_alloc((size_t)v.n * sizeof *l->vocab + 1);
    l->spelt = qkv_alloc(v.n ? v.off[v.n - 1] + v.len[v.n - 1] + 1 : 1);
    l->to_int = qkv_alloc((size_t)v.n * sizeof *l->to_int + 1);
    if (!l->vocab || !l->spelt || !l->to_int) {
        qkv_set_error("out of memory for %d tokens", v.n);
        goto done;
    }
    for (int k = 0; k < v.n; k++)
        l->to_int[k] = -2; /* no token has this id yet */
    for (int k = 0; k < v.n; k++) {
        unsigned char *out = l->spelt + v.off[k];
        long long m = spell(v.text + v.off[k], v.len[k], out);
        if (m < 0) {
            qkv_set_error("token \"%s\" has a character that stands for no byte",
                          v.text + v.off[k]);
            goto done;
        }
        if (v.id[k] >= v.n || l->to_int[v.id[k]] != -2) {
            qkv_set_error("token \"%s\" has id %d: the ids must be 0 to %d, each once",
                          v.text + v.off[k], (int)v.id[k], v.n - 1);
            goto done;
        }
        l->to_int[v.id[k]] = -1;
        l->vocab[k] = (entry){out, (uint32_t)m, v.id[k]};
    }
    l->n_vocab = v.n;
    qsort(l->vocab, (size_t)v.n, sizeof *l->vocab, by_bytes);
    for (int k = 1; k < v.n; k++)
        if (by_bytes(&l->vocab[k - 1], &l->vocab[k]) == 0) {
            qkv_set_error("tokens %d and %d have the same bytes", (int)l->vocab[k - 1].id,
                          (int)l->vocab[k].id);
            goto done;
        }
    rc = 0;
done:
    qkv__gpt2_vocab_free(&v);
    return rc;
}

/* Internal token k is public token id: -1 when id is already another's. */
static int assign(loading *l, int k, int32_t id)
{
    if (l->to_int[id] >= 0)
        return -1;
    l->to_int[id] = k;
    l->to_ext[k] = id;
    return 0;
}

/* The 256 bytes: each must be a token of vocab.json. */
static int assign_bytes(loading *l)
{
    for (int b = 0; b < 256; b++) {
        unsigned char c = (unsigned char)b;
        int32_t id = find(l->vocab, l->n_vocab, &c, 1);
        if (id < 0)
            return qkv_set_error("byte 0x%02x is not a token of vocab.json", b);
        assign(l, b, id);
    }
    return 0;
}

/* Merge line "a b" (n bytes at s, line number line_no) as merge l->n_merges. */
static int add_merge(loading *l, const char *s, size_t n, int line_no, unsigned char *buf)
{
    const char *space = memchr(s, ' ', n);
    if (!space || space == s || space + 1 == s + n ||
        memchr(space + 1, ' ', (size_t)(s + n - space - 1)))
        return qkv_set_error("line %d is not two tokens and a space between them", line_no);
    size_t na = (size_t)(space - s);
    long long a = spell(s, na, buf), b = a < 0 ? -1 : spell(space + 1, n - na - 1, buf + a);
    if (a < 0 || b < 0)
        return qkv_set_error("line %d has a character that stands for no byte", line_no);
    int32_t left = find(l->vocab, l->n_vocab, buf, (size_t)a);
    int32_t right = find(l->vocab, l->n_vocab, buf + a, (size_t)b);
    int32_t made = find(l->vocab, l->n_vocab, buf, (size_t)(a + b));
    if (left < 0 || right < 0 || l->to_int[left] < 0 || l->to_int[right] < 0)
        return qkv_set_error("line %d merges a token no earlier line makes", line_no);
    if (made < 0)
        return qkv_set_error("line %d makes a token vocab.json does not have", line_no);
    int i = l->n_merges;
    if (assign(l, 256 + i, made) < 0)
        return qkv_set_error("line %d makes a token an earlier line makes", line_no);
    l->merges[2 * i] = l->to_int[left];
    l->merges[2 * i + 1] = l->to_int[right];
    l->n_merges++;
    return 0;
}

/* merges.txt: an optional "#version" line, then a merge a line (blank lines skipped). */
static int read_merges(loading *l, const char *text, size_t len)
{
    int n_lines = 1;
    for (size_t i = 0; i < len; i++)
        n_lines += text[i] == '\n';
    l->merges = qkv_alloc(2 * (size_t)n_lines * sizeof *l->merges);
    unsigned char *buf = qkv_alloc(len + 1);
    int rc = l->merges && buf ? 0 : qkv_set_error("out of memory for %d merges", n_lines);
    int line_no = 0;
    for (size_t at = 0; rc == 0 && at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len, n = end - at;
        line_no++;
        if (n && text[at + n - 1] == '\r')
            n--;
        if (n && !(line_no == 1 && n >= 8 && memcmp(text + at, "#version", 8) == 0))
            rc = add_merge(l, text + at, n, line_no, buf);
        at = end + 1;
    }
    qkv_free(buf);
    return rc;
}

/* The tokens of vocab.json no merge makes, in the order of their ids, given
 * to bpe as its extra tokens, with every token's public id. */
static int add_extra(loading *l, qkv_bpe *bpe)
{
    int made = 256 + l->n_merges, n_extra = l->n_vocab - made;
    size_t total = 0;
    for (int k = 0; k < l->n_vocab; k++)
        total += l->vocab[k].len;
    const entry **by_id = qkv_alloc((size_t)l->n_vocab * sizeof *by_id + 1);
    uint32_t *extra_len = qkv_alloc((size_t)n_extra * sizeof *extra_len + 1);
    unsigned char *extra = qkv_alloc(total + 1);
    int rc = -1;
    if (!by_id || !extra_len || !extra) {
        qkv_set_error("out of memory for %d tokens", l->n_vocab);
        goto done;
    }
    for (int k = 0; k < l->n_vocab; k++)
        by_id[l->vocab[k].id] = &l->vocab[k];
    size_t at = 0;
    for (int id = 0, j = 0; id < l->n_vocab; id++) {
        if (l->to_int[id] >= 0)
            continue;
        memcpy(extra + at, by_id[id]->p, by_id[id]->len);
        at += by_id[id]->len;
        extra_len[j] = by_id[id]->len;
        l->to_ext[made + j++] = id;
    }
    rc = qkv__bpe_set_vocab(bpe, n_extra, (const char *)extra, extra_len, l->to_ext);
done:
    qkv_free(by_id), qkv_free(extra_len), qkv_free(extra);
    return rc;
}

/* The tokenizer of the two files' contents: NULL with a message naming which
 * file is wrong and how. */
static qkv_bpe *from_files(const char *vocab, size_t vocab_len, const char *merges,
                           size_t merges_len)
{
    loading l = {0};
    qkv_bpe *bpe = NULL;
    if (read_vocab(&l, vocab, vocab_len) < 0) {
        qkv__error_prefix("vocab.json");
        goto done;
    }
    if (!(l.to_ext = qkv_alloc((size_t)l.n_vocab * sizeof *l.to_ext + 1))) {
        qkv_set_error("out of memory for %d tokens", l.n_vocab);
        goto done;
    }
    if (assign_bytes(&l) < 0) {
        qkv__error_prefix("vocab.json");
        goto done;
    }
    if (read_merges(&l, merges, merges_len) < 0) {
        qkv__error_prefix("merges.txt");
        goto done;
    }
    bpe = qkv__bpe_make(l.merges, l.n_merges);
    if (!bpe || add_extra(&l, bpe) < 0) {
        qkv_bpe_free(bpe);
        bpe = NULL;
    }
done:
    qkv_free(l.vocab), qkv_free(l.spelt), qkv_free(l.to_int), qkv_free(l.to_ext);
    qkv_free(l.merges);
    return bpe;
}

qkv_bpe *qkv_bpe_load_gpt2(const char *vocab_path, const char *merges_path)
{
    const char *fn = "qkv_bpe_load_gpt2";
    if (qkv__null(fn, "vocab_path", vocab_path) || qkv__null(fn, "merges_path", merges_path))
        return NULL;
    size_t vocab_len, merges_len;
    char *vocab = (char *)qkv_input_read(vocab_path, &vocab_len);
    char *merges = vocab ? (char *)qkv_input_read(merges_path, &merges_len) : NULL;
    qkv_bpe *bpe = NULL;
    if (!merges)
        qkv__error_prefix("%s", fn);
    else if (!(bpe = from_files(vocab, vocab_len, merges, merges_len)))
        qkv__error_prefix("%s: %s and %s", fn, vocab_path, merges_path);
    qkv_free(vocab), qkv_free(merges);
    return bpe;
}
