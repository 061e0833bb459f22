/* The step arena: a chain of blocks, bump-allocated (see qkv/arena.h). */
#include "qkv/arena.h"

#include <string.h>

typedef struct block {
    struct block *prev; /* the block filled before this one */
    size_t size;        /* usable bytes in data */
    size_t used;        /* bytes handed out from data */
    unsigned char *data;
} block;

struct qkv_arena {
    block *top;      /* the block allocations come from */
    size_t capacity; /* sum of all block sizes */
    size_t used;     /* bytes handed out since the last reset, over all blocks */
};

static block *block_new(size_t size, block *prev)
{
    block *b = qkv_alloc(sizeof *b + QKV_ALIGN + size);
    if (!b)
        return NULL;
    b->prev = prev;
    b->size = size;
    b->used = 0;
    b->data = (unsigned char *)b + ((sizeof *b + QKV_ALIGN - 1) & ~(size_t)(QKV_ALIGN - 1));
    return b;
}

qkv_arena *qkv_arena_new(size_t initial_bytes)
{
    qkv_arena *a = qkv_alloc(sizeof *a);
    if (!a)
        return NULL;
    if (initial_bytes < 4096)
        initial_bytes = 4096;
    a->top = block_new(initial_bytes, NULL);
    if (!a->top) {
        qkv_free(a);
        return NULL;
    }
    a->capacity = initial_bytes;
    a->used = 0;
    return a;
}

static void free_blocks(block *b)
{
    while (b) {
        block *prev = b->prev;
        qkv_free(b);
        b = prev;
    }
}

void qkv_arena_free(qkv_arena *a)
{
    if (!a)
        return;
    free_blocks(a->top);
    qkv_free(a);
}

void *qkv_arena_alloc(qkv_arena *a, size_t size)
{
    if (size > SIZE_MAX / 4) { /* rounding up or the block header would wrap around */
        qkv_set_error("arena: allocation of %zu bytes is too large", size);
        return NULL;
    }
    size = (size + QKV_ALIGN - 1) & ~(size_t)(QKV_ALIGN - 1);
    block *b = a->top;
    if (b->size - b->used < size) {
        /* Grow geometrically so a step needs few blocks before the reset merges them. */
        size_t want = a->capacity > size ? a->capacity : size;
        block *nb = block_new(want, b);
        if (!nb)
            return NULL;
        a->top = b = nb;
        a->capacity += want;
    }
    void *p = b->data + b->used;
    b->used += size;
    a->used += size;
    return p;
}

void *qkv_arena_calloc(qkv_arena *a, size_t size)
{
    void *p = qkv_arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void qkv_arena_reset(qkv_arena *a)
{
    if (a->top->prev) {
        block *merged = block_new(a->capacity, NULL);
        if (merged) { /* on failure keep the chain: still correct, just not merged */
            free_blocks(a->top);
            a->top = merged;
        }
    }
    a->top->used = 0;
    a->used = 0;
}

size_t qkv_arena_used(const qkv_arena *a) { return a->used; }

size_t qkv_arena_capacity(const qkv_arena *a) { return a->capacity; }
