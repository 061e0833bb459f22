/* The BPE tokenizer (see qkv/bpe.h): made from merges, encode, decode. */
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_internal.h"

void qkv_bpe_free(qkv_bpe *bpe)
{
    if (!bpe)
        return;
    qkv_free(bpe->merges);
    qkv__pairmap_free(&bpe->ranks);
    qkv_free(bpe->offset);
    qkv_free(bpe->length);
    qkv_free(bpe->bytes);
    qkv_free(bpe);
}

/* -1 with a message when merge i (left, right) cannot be token 256 + i:
 * both halves must be earlier tokens, and no pair is merged twice. */
static int check_merge(const qkv_bpe *bpe, int i, int32_t left, int32_t right)
{
    if (left < 0 || left >= 256 + i || right < 0 || right >= 256 + i)
        return qkv_set_error("merge %d is (%d, %d); its tokens must be in [0, %d)", i, (int)left,
                             (int)right, 256 + i);
    int32_t before = qkv__pairmap_get(&bpe->ranks, qkv__pair(left, right));
    if (before >= 0)
        return qkv_set_error("merge %d is (%d, %d), the pair merge %d made already", i,
                             (int)left, (int)right, (int)before);
    return 0;
}

/* The bytes of every token, from the merges: a token's are its left's then its
 * right's. 0, or -1 with a message. */
static int spell_tokens(qkv_bpe *bpe)
{
    int size = 256 + bpe->n_merges;
    bpe->offset = qkv_alloc((size_t)size * sizeof *bpe->offset);
    bpe->length = qkv_alloc((size_t)size * sizeof *bpe->length);
    if (!bpe->offset || !bpe->length)
        return qkv_set_error("out of memory for %d tokens", size);
    uint64_t total = 0;
    for (int t = 0; t < size; t++) {
        uint64_t n = t < 256 ? 1
                             : (uint64_t)bpe->length[bpe->merges[2 * (t - 256)]] +
                                   bpe->length[bpe->merges[2 * (t - 256) + 1]];
        total += n;
        if (total > UINT32_MAX)
            return qkv_set_error("the tokens' bytes come to more than 4 GB at token %d", t);
        bpe->length[t] = (uint32_t)n;
    }
    bpe->bytes = qkv_alloc((size_t)total);
    if (!bpe->bytes)
        return qkv_set_error("out of memory for %llu bytes of tokens",
                             (unsigned long long)total);
    uint32_t at = 0;
    for (int t = 0; t < size; t++) {
        bpe->offset[t] = at;
        if (t < 256) {
            bpe->bytes[at] = (char)t;
        } else {
            int32_t l = bpe->merges[2 * (t - 256)], r = bpe->merges[2 * (t - 256) + 1];
            memcpy(bpe->bytes + at, bpe->bytes + bpe->offset[l], bpe->length[l]);
            memcpy(bpe->bytes + at + bpe->length[l], bpe->bytes + bpe->offset[r], bpe->length[r]);
        }
        at += bpe->length[t];
    }
    return 0;
}

qkv_bpe *qkv__bpe_make(const int32_t *merges, int n)
{
    if (n < 0 || n > QKV_BPE_MAX_VOCAB - 256) {
        qkv_set_error("%d merges; a tokenizer has 0 to %d", n, QKV_BPE_MAX_VOCAB - 256);
        return NULL;
    }
    qkv_bpe *bpe = qkv_calloc(sizeof *bpe);
    if (!bpe || qkv__pairmap_init(&bpe->ranks, (size_t)n) < 0 ||
        !(bpe->merges = qkv_alloc((size_t)(2 * n + 1) * sizeof *bpe->merges)))
        goto no_memory;
    for (int i = 0; i < n; i++) {
        if (check_merge(bpe, i, merges[2 * i], merges[2 * i + 1]) < 0)
            goto fail;
        bpe->merges[2 * i] = merges[2 * i];
        bpe->merges[2 * i + 1] = merges[2 * i + 1];
        if (!qkv__pairmap_put(&bpe->ranks, qkv__pair(merges[2 * i], merges[2 * i + 1]), i))
            goto no_memory;
        bpe->n_merges = i + 1;
    }
    if (spell_tokens(bpe) < 0)
        goto fail;
    return bpe;
no_memory:
    qkv_set_error("out of memory for a tokenizer of %d merges", n);
fail:
    qkv_bpe_free(bpe);
    return NULL;
}

qkv_bpe *qkv_bpe_from_merges(const int32_t *merges, int n)
{
    if (n != 0 && qkv__null("qkv_bpe_from_merges", "merges", merges))
        return NULL;
    qkv_bpe *bpe = qkv__bpe_make(merges, n);
    if (!bpe)
        qkv__error_prefix("qkv_bpe_from_merges");
    return bpe;
}

int qkv_bpe_size(const qkv_bpe *bpe)
{
    if (qkv__null("qkv_bpe_size", "bpe", bpe))
        return -1;
    return 256 + bpe->n_merges;
}

int qkv_bpe_merge(const qkv_bpe *bpe, int i, int32_t *left, int32_t *right)
{
    const char *fn = "qkv_bpe_merge";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "left", left) || qkv__null(fn, "right", right))
        return -1;
    if (i < 0 || i >= bpe->n_merges)
        return qkv_set_error("%s: i is %d; the tokenizer has merges 0 to %d", fn, i,
                             bpe->n_merges - 1);
    *left = bpe->merges[2 * i];
    *right = bpe->merges[2 * i + 1];
    return 0;
}

const char *qkv_bpe_token(const qkv_bpe *bpe, int32_t id, size_t *len)
{
    const char *fn = "qkv_bpe_token";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "len", len))
        return NULL;
    if (id < 0 || id >= 256 + bpe->n_merges) {
        qkv_set_error("%s: id %d is outside [0, %d)", fn, (int)id, 256 + bpe->n_merges);
        return NULL;
    }
    *len = bpe->length[id];
    return bpe->bytes + bpe->offset[id];
}

/* Encode the n bytes of one chunk, whose ids are already in ids[0, n) as bytes:
 * merge the lowest-ranked pair present, every occurrence left to right, until
 * no pair is a merge. The number of ids left. */
static size_t merge_chunk(const qkv_bpe *bpe, int32_t *ids, size_t n)
{
    while (n > 1) {
        int32_t best = INT32_MAX;
        for (size_t i = 0; i + 1 < n; i++) {
            int32_t r = qkv__pairmap_get(&bpe->ranks, qkv__pair(ids[i], ids[i + 1]));
            if (r >= 0 && r < best)
                best = r;
        }
        if (best == INT32_MAX)
            break;
        int32_t l = bpe->merges[2 * best], r = bpe->merges[2 * best + 1];
        size_t out = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 1 < n && ids[i] == l && ids[i + 1] == r) {
                ids[out++] = 256 + best;
                i++;
            } else {
                ids[out++] = ids[i];
            }
        }
        n = out;
    }
    return n;
}

long long qkv_bpe_encode(const qkv_bpe *bpe, const char *text, size_t len, int32_t *ids)
{
    const char *fn = "qkv_bpe_encode";
    if (qkv__null(fn, "bpe", bpe) ||
        (len && (qkv__null(fn, "text", text) || qkv__null(fn, "ids", ids))))
        return -1;
    const unsigned char *t = (const unsigned char *)text;
    size_t out = 0;
    for (size_t pos = 0; pos < len;) {
        size_t end = qkv__bpe_chunk_end(t, len, pos);
        for (size_t i = pos; i < end; i++)
            ids[out + i - pos] = t[i]; /* every byte is a token: nothing is unknown */
        out += merge_chunk(bpe, ids + out, end - pos);
        pos = end;
    }
    return (long long)out;
}

long long qkv_bpe_decode(const qkv_bpe *bpe, const int32_t *ids, size_t n, char *text,
                         size_t cap)
{
    const char *fn = "qkv_bpe_decode";
    if (qkv__null(fn, "bpe", bpe) || (n && qkv__null(fn, "ids", ids)) ||
        (cap && qkv__null(fn, "text", text)))
        return -1;
    int size = 256 + bpe->n_merges;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= size)
            return qkv_set_error("%s: token id %d at position %zu is outside [0, %d)", fn,
                                 (int)ids[i], i, size);
        size_t k = bpe->length[ids[i]];
        if (text) {
            if (cap - at < k)
                return qkv_set_error("%s: the %zu ids decode to more than cap (%zu bytes)", fn,
                                     n, cap);
            memcpy(text + at, bpe->bytes + bpe->offset[ids[i]], k);
        }
        at += k;
    }
    return (long long)at;
}
