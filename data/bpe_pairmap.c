/* A map from token pairs to ints (data/bpe_internal.h): the merge ranks an
 * encode looks up and the pair slots training counts in. */
#include <string.h>

#include "data/bpe_internal.h"

/* A 64-bit mix (splitmix64's finaliser): pairs differ in few bits. */
static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 31;
    key *= 0x7fb5d329728ea185ULL;
    key ^= key >> 27;
    key *= 0x81dadef4bc2dabd9ULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

/* Arrays of cap empty slots into m. */
static int alloc_slots(qkv__pairmap *m, size_t cap)
{
    m->keys = qkv_alloc(cap * sizeof *m->keys);
    m->vals = qkv_alloc(cap * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        qkv_free(m->keys);
        qkv_free(m->vals);
        return -1;
    }
    memset(m->keys, 0xff, cap * sizeof *m->keys); /* every key QKV__PAIR_NONE */
    m->cap = cap;
    m->n = 0;
    return 0;
}

int qkv__pairmap_init(qkv__pairmap *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    return alloc_slots(m, cap);
}

void qkv__pairmap_free(qkv__pairmap *m)
{
    qkv_free(m->keys);
    qkv_free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find(const qkv__pairmap *m, uint64_t key)
{
    size_t i = slot_of(key, m->cap);
    while (m->keys[i] != key && m->keys[i] != QKV__PAIR_NONE)
        i = (i + 1) & (m->cap - 1);
    return i;
}

int32_t qkv__pairmap_get(const qkv__pairmap *m, uint64_t key)
{
    size_t i = find(m, key);
    return m->keys[i] == key ? m->vals[i] : -1;
}

/* Twice the slots, every key moved over. */
static int grow(qkv__pairmap *m)
{
    qkv__pairmap old = *m;
    if (alloc_slots(m, old.cap * 2) < 0) {
        *m = old;
        return -1;
    }
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i] != QKV__PAIR_NONE) {
            size_t j = find(m, old.keys[i]);
            m->keys[j] = old.keys[i];
            m->vals[j] = old.vals[i];
        }
    m->n = old.n;
    qkv__pairmap_free(&old);
    return 0;
}

int32_t *qkv__pairmap_put(qkv__pairmap *m, uint64_t key, int32_t val)
{
    size_t i = find(m, key);
    if (m->keys[i] == key)
        return &m->vals[i];
    if (2 * (m->n + 1) > m->cap) { /* at most half full: probes stay short */
        if (grow(m) < 0)
            return NULL;
        i = find(m, key);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return &m->vals[i];
}
