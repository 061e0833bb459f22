/* BPE training (see qkv/bpe.h): pair counts kept up to date merge by merge, and
 * a heap to find the most frequent pair, so a merge costs the words it touches,
 * not a rescan of the text. The heap is lazy: an entry whose count is no longer
 * the pair's is dropped when it comes to the top, or put back with the pair's
 * lower count. Counts only fall except for pairs with the new token, which are
 * pushed after each merge, so the top entry that matches is the true maximum. */
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_train.h"

/* One distinct pair: its count over all words and the words it occurs in. */
typedef struct pair_info {
    int64_t count;  /* occurrences (word counts included) */
    int32_t *words; /* words it occurs or occurred in (a word may be listed after the pair left it) */
    int n, cap;     /* words listed, room */
    int touched;    /* the last merge that raised its count, so it is pushed once */
} pair_info;

typedef struct heap_entry {
    int64_t count;
    int32_t left, right;
} heap_entry;

typedef struct trainer {
    qkv__bpe_words w;
    int32_t *sym;       /* every word's tokens, word i's from start[i], len[i] of them */
    size_t *start;      /* word -> its first token in sym */
    int *stamp;         /* word -> the last merge that rewrote it */
    qkv__pairmap index; /* pair -> its pair_info in pairs */
    pair_info *pairs;
    int n_pairs, cap_pairs;
    heap_entry *heap;
    size_t heap_n, heap_cap;
    int32_t *fresh; /* the pairs with the new token this merge made */
    int n_fresh, cap_fresh;
    int32_t *merges; /* 2 per merge */
    int n_merges;
} trainer;

/* True when a should be above b: the higher count, then the smaller left, then right. */
static int above(const heap_entry *a, const heap_entry *b)
{
    if (a->count != b->count)
        return a->count > b->count;
    if (a->left != b->left)
        return a->left < b->left;
    return a->right < b->right;
}

static int heap_push(trainer *t, heap_entry e)
{
    if (t->heap_n == t->heap_cap) {
        size_t cap = t->heap_cap ? 2 * t->heap_cap : 4096;
        heap_entry *h = qkv_alloc(cap * sizeof *h);
        if (!h)
            return -1;
        if (t->heap_n)
            memcpy(h, t->heap, t->heap_n * sizeof *h);
        qkv_free(t->heap);
        t->heap = h, t->heap_cap = cap;
    }
    size_t i = t->heap_n++;
    while (i > 0 && above(&e, &t->heap[(i - 1) / 2])) {
        t->heap[i] = t->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->heap[i] = e;
    return 0;
}

static heap_entry heap_pop(trainer *t)
{
    heap_entry top = t->heap[0], last = t->heap[--t->heap_n];
    size_t i = 0, n = t->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && above(&t->heap[c + 1], &t->heap[c]))
            c++;
        if (!above(&t->heap[c], &last))
            break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (n)
        t->heap[i] = last;
    return top;
}

/* The pair_info of (l, r), made with count 0 when new; NULL when out of memory. */
static pair_info *pair_of(trainer *t, int32_t l, int32_t r)
{
    int32_t *slot = qkv__pairmap_put(&t->index, qkv__pair(l, r), t->n_pairs);
    if (!slot)
        return NULL;
    if (*slot == t->n_pairs) { /* new */
        if (t->n_pairs == t->cap_pairs) {
            int cap = t->cap_pairs ? 2 * t->cap_pairs : 4096;
            pair_info *p = qkv_alloc((size_t)cap * sizeof *p);
            if (!p)
                return NULL;
            if (t->n_pairs)
                memcpy(p, t->pairs, (size_t)t->n_pairs * sizeof *p);
            qkv_free(t->pairs);
            t->pairs = p, t->cap_pairs = cap;
        }
        t->pairs[t->n_pairs++] = (pair_info){.touched = -1};
    }
    return &t->pairs[*slot];
}

/* List word in p's words (once in a row). */
static int list_word(pair_info *p, int32_t word)
{
    if (p->n && p->words[p->n - 1] == word)
        return 0;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 4;
        int32_t *w = qkv_alloc((size_t)cap * sizeof *w);
        if (!w)
            return -1;
        if (p->n)
            memcpy(w, p->words, (size_t)p->n * sizeof *w);
        qkv_free(p->words);
        p->words = w, p->cap = cap;
    }
    p->words[p->n++] = word;
    return 0;
}

/* Add c times the pairs of word i to the counts (c < 0 takes them away); with
 * z >= 0, the pairs holding z are listed with the word and kept to push. */
static int count_word(trainer *t, int32_t i, int64_t c, int32_t z)
{
    const int32_t *s = t->sym + t->start[i];
    for (int32_t k = 0; k + 1 < t->w.len[i]; k++) {
        pair_info *p = pair_of(t, s[k], s[k + 1]);
        if (!p)
            return -1;
        p->count += c;
        if (z < 0 && c > 0 && list_word(p, i) < 0)
            return -1;
        if (z >= 0 && (s[k] == z || s[k + 1] == z)) {
            if (list_word(p, i) < 0)
                return -1;
            if (p->touched != t->n_merges) {
                p->touched = t->n_merges;
                if (t->n_fresh == t->cap_fresh) {
                    int cap = t->cap_fresh ? 2 * t->cap_fresh : 256;
                    int32_t *f = qkv_alloc((size_t)cap * 2 * sizeof *f);
                    if (!f)
                        return -1;
                    if (t->n_fresh)
                        memcpy(f, t->fresh, (size_t)t->n_fresh * 2 * sizeof *f);
                    qkv_free(t->fresh);
                    t->fresh = f, t->cap_fresh = cap;
                }
                t->fresh[2 * t->n_fresh] = s[k];
                t->fresh[2 * t->n_fresh + 1] = s[k + 1];
                t->n_fresh++;
            }
        }
    }
    return 0;
}

/* Replace (l, r) by z in word i, left to right; true when it held the pair. */
static int rewrite_word(trainer *t, int32_t i, int32_t l, int32_t r, int32_t z)
{
    int32_t *s = t->sym + t->start[i];
    int32_t n = t->w.len[i], out = 0;
    for (int32_t k = 0; k < n; k++) {
        if (k + 1 < n && s[k] == l && s[k + 1] == r) {
            s[out++] = z;
            k++;
        } else {
            s[out++] = s[k];
        }
    }
    t->w.len[i] = out;
    return out < n;
}

/* Does word i hold the pair (l, r)? */
static int holds(const trainer *t, int32_t i, int32_t l, int32_t r)
{
    const int32_t *s = t->sym + t->start[i];
    for (int32_t k = 0; k + 1 < t->w.len[i]; k++)
        if (s[k] == l && s[k + 1] == r)
            return 1;
    return 0;
}

/* Merge (l, r) into the next token everywhere, and bring the counts up to date. */
static int merge(trainer *t, int32_t l, int32_t r)
{
    int32_t z = 256 + t->n_merges;
    t->merges[2 * t->n_merges] = l;
    t->merges[2 * t->n_merges + 1] = r;
    /* The pair's word list does not move: only pairs with z get new words. */
    pair_info *p = &t->pairs[qkv__pairmap_get(&t->index, qkv__pair(l, r))];
    int32_t *words = p->words;
    int n = p->n;
    t->n_fresh = 0;
    for (int k = 0; k < n; k++) {
        int32_t i = words[k];
        if (t->stamp[i] == t->n_merges || !holds(t, i, l, r))
            continue;
        t->stamp[i] = t->n_merges;
        if (count_word(t, i, -t->w.count[i], -1) < 0)
            return -1;
        rewrite_word(t, i, l, r, z);
        if (count_word(t, i, t->w.count[i], z) < 0)
            return -1;
    }
    for (int k = 0; k < t->n_fresh; k++) {
        int32_t fl = t->fresh[2 * k], fr = t->fresh[2 * k + 1];
        pair_info *f = &t->pairs[qkv__pairmap_get(&t->index, qkv__pair(fl, fr))];
        if (f->count > 0 && heap_push(t, (heap_entry){f->count, fl, fr}) < 0)
            return -1;
    }
    t->n_merges++;
    return 0;
}

/* Every word's bytes as its first tokens, the pair counts and the heap. */
static int start(trainer *t, int n_merges)
{
    int nw = t->w.n;
    t->sym = qkv_alloc((t->w.total + 1) * sizeof *t->sym);
    t->start = qkv_alloc(((size_t)nw + 1) * sizeof *t->start);
    t->stamp = qkv_alloc(((size_t)nw + 1) * sizeof *t->stamp);
    t->merges = qkv_alloc(((size_t)n_merges * 2 + 1) * sizeof *t->merges);
    if (!t->sym || !t->start || !t->stamp || !t->merges ||
        qkv__pairmap_init(&t->index, 1 << 16) < 0)
        return -1;
    size_t at = 0;
    for (int i = 0; i < nw; i++) {
        t->start[i] = at;
        t->stamp[i] = -1;
        for (int32_t k = 0; k < t->w.len[i]; k++)
            t->sym[at + k] = t->w.src[i][k];
        at += (size_t)t->w.len[i];
        if (count_word(t, i, t->w.count[i], -1) < 0)
            return -1;
    }
    for (size_t s = 0; s < t->index.cap; s++)
        if (t->index.keys[s] != QKV__PAIR_NONE) {
            int64_t c = t->pairs[t->index.vals[s]].count;
            heap_entry e = {c, (int32_t)(t->index.keys[s] >> 32), (int32_t)t->index.keys[s]};
            if (heap_push(t, e) < 0)
                return -1;
        }
    return 0;
}

/* Merges until n_merges or no pair is left. */
static int run(trainer *t, int n_merges)
{
    while (t->n_merges < n_merges && t->heap_n > 0) {
        heap_entry e = heap_pop(t);
        int64_t now = t->pairs[qkv__pairmap_get(&t->index, qkv__pair(e.left, e.right))].count;
        if (now == e.count) {
            if (merge(t, e.left, e.right) < 0)
                return -1;
        } else if (now > 0 && now < e.count) {
            e.count = now; /* fell since pushed: back in at its place */
            if (heap_push(t, e) < 0)
                return -1;
        } /* else gone, or a larger entry of it is in the heap */
    }
    return 0;
}

static void trainer_free(trainer *t)
{
    qkv__bpe_words_free(&t->w);
    for (int k = 0; k < t->n_pairs; k++)
        qkv_free(t->pairs[k].words);
    qkv_free(t->pairs);
    qkv__pairmap_free(&t->index);
    qkv_free(t->sym), qkv_free(t->start), qkv_free(t->stamp);
    qkv_free(t->heap), qkv_free(t->fresh), qkv_free(t->merges);
}

qkv_bpe *qkv_bpe_train(const char *text, size_t len, int vocab_size)
{
    const char *fn = "qkv_bpe_train";
    if (len && qkv__null(fn, "text", text))
        return NULL;
    if (vocab_size < 256 || vocab_size > QKV_BPE_MAX_VOCAB) {
        qkv_set_error("%s: vocab_size is %d; a byte-level BPE has 256 to %d tokens", fn,
                      vocab_size, QKV_BPE_MAX_VOCAB);
        return NULL;
    }
    trainer t = {0};
    qkv_bpe *bpe = NULL;
    if (qkv__bpe_words_count(&t.w, (const unsigned char *)text, len) < 0 ||
        start(&t, vocab_size - 256) < 0 || run(&t, vocab_size - 256) < 0)
        qkv_set_error("%s: out of memory for the pairs of %zu bytes of text", fn, len);
    else if (!(bpe = qkv__bpe_make(t.merges, t.n_merges)))
        qkv__error_prefix("%s", fn);
    trainer_free(&t);
    return bpe;
}
