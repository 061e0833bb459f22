/* The weights a generation holds in bf16 (gemm_bf16_held.h): a short list per
 * thread, searched by the weight's address and shape (a model has a few
 * dozen matrices; a search costs nothing beside a product). */
#include "gemm_bf16_held.h"

#include <omp.h>
#include <stdatomic.h>

#include "qkv/base.h"

/* One weight's copy: what it was made from and for. */
typedef struct held {
    const qkv__gemm_bf16_kernel *path;
    const float *b;
    int ldb, k, n, kc;
    bool tb;
    uint32_t *packed;
} held;

/* Bumped by qkv__bf16_held_changed; a hold made under another count is stale. */
static atomic_uint_fast64_t changes;

/* This thread's hold: its nesting depth, the count its copies were made under, the copies. */
static _Thread_local struct {
    int depth;
    uint_fast64_t changes;
    int n, cap;
    held *list;
    uint64_t made; /* copies made, ever */
} hold;

static void drop_copies(void)
{
    for (int i = 0; i < hold.n; i++)
        qkv_free(hold.list[i].packed);
    hold.n = 0;
}

void qkv__bf16_held_open(void)
{
    if (hold.depth++ == 0)
        hold.changes = atomic_load(&changes);
}

void qkv__bf16_held_close(void)
{
    if (hold.depth > 0 && --hold.depth == 0) {
        drop_copies();
        qkv_free(hold.list);
        hold.list = NULL;
        hold.cap = 0;
    }
}

void qkv__bf16_held_changed(void) { atomic_fetch_add(&changes, 1); }

uint64_t qkv__bf16_held_made(void) { return hold.made; }

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* A new copy of op(B) for path, or NULL with no memory. */
static uint32_t *pack(const qkv__gemm_bf16_kernel *path, bool tb, int K, int N, int kc,
                      const float *B, int ldb)
{
    const size_t row = (size_t)ceil_div(N, path->nr) * path->nr; /* words per pair of steps */
    uint32_t *packed = qkv_alloc((size_t)ceil_div(K, 2) * row * sizeof *packed);
    if (!packed)
        return NULL;
    const int blocks = ceil_div(K, kc);
    /* each block is packed on its own: any split gives the same words */
#pragma omp parallel for schedule(static) if (blocks > 1 && !omp_in_parallel())
    for (int blk = 0; blk < blocks; blk++) {
        const int p0 = blk * kc, kb = K - p0 < kc ? K - p0 : kc;
        const float *src = tb ? B + p0 : B + (size_t)p0 * ldb;
        path->pack_b(packed + (size_t)p0 / 2 * row, src, ldb, tb, kb, N, path->nr);
    }
    return packed;
}

const uint32_t *qkv__bf16_held(const qkv__gemm_bf16_kernel *path, bool tb, int K, int N, int kc,
                               const float *B, int ldb)
{
    if (hold.depth == 0)
        return NULL;
    const uint_fast64_t now = atomic_load(&changes);
    if (hold.changes != now) {
        drop_copies();
        hold.changes = now;
    }
    for (int i = 0; i < hold.n; i++) {
        const held *h = &hold.list[i];
        if (h->b == B && h->path == path && h->tb == tb && h->k == K && h->n == N &&
            h->ldb == ldb && h->kc == kc)
            return h->packed;
    }
    if (hold.n == hold.cap) {
        int cap = hold.cap ? 2 * hold.cap : 64;
        held *list = qkv_alloc((size_t)cap * sizeof *list);
        if (!list)
            return NULL;
        for (int i = 0; i < hold.n; i++)
            list[i] = hold.list[i];
        qkv_free(hold.list);
        hold.list = list, hold.cap = cap;
    }
    uint32_t *packed = pack(path, tb, K, N, kc, B, ldb);
    if (!packed)
        return NULL;
    hold.list[hold.n++] = (held){path, B, ldb, K, N, kc, tb, packed};
    hold.made++;
    return packed;
}
