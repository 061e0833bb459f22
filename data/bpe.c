/* The BPE tokenizer (see qkv/bpe.h): made from merges, encode, decode. */
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_internal.h"
#include "data/bpe_gpt2.h"

void qkv_bpe_free(qkv_bpe *bpe)
{
    if (!bpe)
        return;
    qkv_free(bpe->merges);
    qkv__pairmap_free(&bpe->ranks);
    qkv_free(bpe->offset);
    qkv_free(bpe->length);
    qkv_free(bpe->bytes);
    qkv_free(bpe->to_ext);
    qkv_free(bpe->to_int);
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
    if (bpe)
        bpe->split = QKV__SPLIT_ASCII;
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

int qkv__bpe_set_vocab(qkv_bpe *bpe, int n_extra, const char *extra, const uint32_t *extra_len,
                       const int32_t *to_ext)
{
    int made = 256 + bpe->n_merges, size = made + n_extra;
    uint64_t total = bpe->offset[made - 1] + (uint64_t)bpe->length[made - 1];
    for (int j = 0; j < n_extra; j++)
        total += extra_len[j];
    if (total > UINT32_MAX)
        return qkv_set_error("the tokens' bytes come to more than 4 GB");
    uint32_t *offset = qkv_alloc((size_t)size * sizeof *offset);
    uint32_t *length = qkv_alloc((size_t)size * sizeof *length);
    char *bytes = qkv_alloc((size_t)total + 1);
    bpe->to_ext = qkv_alloc((size_t)size * sizeof *bpe->to_ext);
    bpe->to_int = qkv_alloc((size_t)size * sizeof *bpe->to_int);
    if (!offset || !length || !bytes || !bpe->to_ext || !bpe->to_int) {
        qkv_free(offset), qkv_free(length), qkv_free(bytes);
        return qkv_set_error("out of memory for %d tokens", size);
    }
    uint32_t at = bpe->offset[made - 1] + bpe->length[made - 1];
    memcpy(offset, bpe->offset, (size_t)made * sizeof *offset);
    memcpy(length, bpe->length, (size_t)made * sizeof *length);
    memcpy(bytes, bpe->bytes, at);
    for (int j = 0; j < n_extra; j++) {
        offset[made + j] = at, length[made + j] = extra_len[j];
        memcpy(bytes + at, extra, extra_len[j]);
        extra += extra_len[j], at += extra_len[j];
    }
    qkv_free(bpe->offset), qkv_free(bpe->length), qkv_free(bpe->bytes);
    bpe->offset = offset, bpe->length = length, bpe->bytes = bytes;
    bpe->n_extra = n_extra;
    bpe->split = QKV__SPLIT_GPT2;
    for (int k = 0; k < size; k++)
        bpe->to_int[k] = -1;
    for (int k = 0; k < size; k++) {
        int32_t e = to_ext[k];
        if (e < 0 || e >= size || bpe->to_int[e] >= 0)
            return qkv_set_error("token %d's id is %d: the ids are not 0 to %d, each once", k,
                                 (int)e, size - 1);
        bpe->to_ext[k] = e, bpe->to_int[e] = k;
    }
    return 0;
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
    return 256 + bpe->n_merges + bpe->n_extra;
}

/* The public id of internal token k, and back. */
static int32_t ext_id(const qkv_bpe *bpe, int32_t k) { return bpe->to_ext ? bpe->to_ext[k] : k; }

static int32_t int_id(const qkv_bpe *bpe, int32_t id) { return bpe->to_int ? bpe->to_int[id] : id; }

int qkv_bpe_merge(const qkv_bpe *bpe, int i, int32_t *left, int32_t *right)
{
    const char *fn = "qkv_bpe_merge";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "left", left) || qkv__null(fn, "right", right))
        return -1;
    if (i < 0 || i >= bpe->n_merges)
        return qkv_set_error("%s: i is %d; the tokenizer has merges 0 to %d", fn, i,
                             bpe->n_merges - 1);
    *left = ext_id(bpe, bpe->merges[2 * i]);
    *right = ext_id(bpe, bpe->merges[2 * i + 1]);
    return 0;
}

const char *qkv_bpe_token(const qkv_bpe *bpe, int32_t id, size_t *len)
{
    const char *fn = "qkv_bpe_token";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "len", len))
        return NULL;
    int size = qkv_bpe_size(bpe);
    if (id < 0 || id >= size) {
        qkv_set_error("%s: id %d is outside [0, %d)", fn, (int)id, size);
        return NULL;
    }
    *len = bpe->length[int_id(bpe, id)];
    return bpe->bytes + bpe->offset[int_id(bpe, id)];
}

/* What encoding one chunk of up to cap bytes needs: its tokens as a linked list
 * and a heap of the merges it could make. Grown for longer chunks. */
typedef struct chunk_work {
    int32_t *next;  /* position -> the next live token's position, or n */
    int32_t *prev;  /* position -> the previous live token's, or -1 */
    uint64_t *heap; /* candidates (rank << 32 | position), smallest first */
    size_t cap;     /* positions the arrays hold (the heap 3 times as many) */
} chunk_work;

/* Room in w for a chunk of n tokens. 0, or -1 when out of memory. */
static int work_reserve(chunk_work *w, size_t n)
{
    if (n <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < n)
        cap *= 2;
    qkv_free(w->next), qkv_free(w->prev), qkv_free(w->heap);
    w->next = qkv_alloc(cap * sizeof *w->next);
    w->prev = qkv_alloc(cap * sizeof *w->prev);
    w->heap = qkv_alloc(3 * cap * sizeof *w->heap);
    w->cap = w->next && w->prev && w->heap ? cap : 0;
    return w->cap ? 0 : -1;
}

/* Push (rank, i) when the tokens at i and after it are merge rank's pair. */
static void push_pair(const qkv_bpe *bpe, const int32_t *ids, const chunk_work *w, size_t *n_heap,
                      int32_t i, int32_t n)
{
    if (i < 0 || w->next[i] >= n)
        return;
    int32_t rank = qkv__pairmap_get(&bpe->ranks, qkv__pair(ids[i], ids[w->next[i]]));
    if (rank < 0)
        return;
    uint64_t key = (uint64_t)rank << 32 | (uint32_t)i, *h = w->heap;
    size_t k = (*n_heap)++;
    for (; k > 0 && h[(k - 1) / 2] > key; k = (k - 1) / 2)
        h[k] = h[(k - 1) / 2];
    h[k] = key;
}

static uint64_t pop_pair(uint64_t *h, size_t *n_heap)
{
    uint64_t top = h[0], last = h[--*n_heap];
    size_t k = 0, n = *n_heap;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= last)
            break;
        h[k] = h[c];
        k = c;
    }
    if (n)
        h[k] = last;
    return top;
}

/* Encode the n bytes of one chunk, whose ids are already in ids[0, n) as bytes:
 * the merge of lowest rank present is made first, its occurrences left to right
 * (the heap orders by rank, then position), until no pair is a merge. A merge
 * makes a token only later merges use, so each rank's turn sees all of its
 * pairs: the same as replaying the merges in order, in O(n log n). A candidate
 * whose tokens have changed since it was pushed is dropped when it comes up.
 * The number of ids left, compacted at the front of ids. */
static size_t merge_chunk(const qkv_bpe *bpe, int32_t *ids, int32_t n, chunk_work *w)
{
    size_t n_heap = 0;
    for (int32_t i = 0; i < n; i++)
        w->next[i] = i + 1, w->prev[i] = i - 1;
    for (int32_t i = 0; i + 1 < n; i++)
        push_pair(bpe, ids, w, &n_heap, i, n);
    while (n_heap > 0) {
        uint64_t key = pop_pair(w->heap, &n_heap);
        int32_t rank = (int32_t)(key >> 32), i = (int32_t)(key & 0xffffffff), j = w->next[i];
        if (ids[i] < 0 || j >= n || ids[i] != bpe->merges[2 * rank] ||
            ids[j] != bpe->merges[2 * rank + 1])
            continue; /* gone, or no longer this pair */
        ids[i] = 256 + rank;
        ids[j] = -1; /* j is merged into i */
        w->next[i] = w->next[j];
        if (w->next[j] < n)
            w->prev[w->next[j]] = i;
        push_pair(bpe, ids, w, &n_heap, w->prev[i], n);
        push_pair(bpe, ids, w, &n_heap, i, n);
    }
    size_t out = 0;
    for (int32_t i = 0; i < n; i = w->next[i])
        ids[out++] = ids[i];
    return out;
}

long long qkv_bpe_encode(const qkv_bpe *bpe, const char *text, size_t len, int32_t *ids)
{
    const char *fn = "qkv_bpe_encode";
    if (qkv__null(fn, "bpe", bpe) ||
        (len && (qkv__null(fn, "text", text) || qkv__null(fn, "ids", ids))))
        return -1;
    const unsigned char *t = (const unsigned char *)text;
    chunk_work w = {0};
    size_t out = 0;
    for (size_t pos = 0; pos < len;) {
        size_t end = bpe->split == QKV__SPLIT_GPT2 ? qkv__bpe_gpt2_chunk_end(t, len, pos)
                                                   : qkv__bpe_chunk_end(t, len, pos);
        if (end - pos > INT32_MAX / 2 || work_reserve(&w, end - pos) < 0) {
            qkv_free(w.next), qkv_free(w.prev), qkv_free(w.heap);
            return qkv_set_error("%s: out of memory for a chunk of %zu bytes at %zu", fn,
                                 end - pos, pos);
        }
        for (size_t i = pos; i < end; i++)
            ids[out + i - pos] = t[i]; /* every byte is a token: nothing is unknown */
        size_t n = merge_chunk(bpe, ids + out, (int32_t)(end - pos), &w);
        for (size_t i = 0; i < n; i++)
            ids[out + i] = ext_id(bpe, ids[out + i]);
        out += n;
        pos = end;
    }
    qkv_free(w.next), qkv_free(w.prev), qkv_free(w.heap);
    return (long long)out;
}

long long qkv_bpe_decode(const qkv_bpe *bpe, const int32_t *ids, size_t n, char *text,
                         size_t cap)
{
    const char *fn = "qkv_bpe_decode";
    if (qkv__null(fn, "bpe", bpe) || (n && qkv__null(fn, "ids", ids)) ||
        (cap && qkv__null(fn, "text", text)))
        return -1;
    int size = qkv_bpe_size(bpe);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= size)
            return qkv_set_error("%s: token id %d at position %zu is outside [0, %d)", fn,
                                 (int)ids[i], i, size);
        int32_t t = int_id(bpe, ids[i]);
        size_t k = bpe->length[t];
        if (text) {
            if (cap - at < k)
                return qkv_set_error("%s: the %zu ids decode to more than cap (%zu bytes)", fn,
                                     n, cap);
            memcpy(text + at, bpe->bytes + bpe->offset[t], k);
        }
        at += k;
    }
    return (long long)at;
}
