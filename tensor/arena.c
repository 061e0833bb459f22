/* The step arena: a chain of blocks, bump-allocated (see qkv/arena.h). */
#include "qkv/arena.h"

#include <string.h>

#include "check.h"
#include "graph.h"

/* The largest block or allocation: far below SIZE_MAX, so no size sum or
 * rounding here can wrap around. */
#define ARENA_MAX (SIZE_MAX / 4)

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
    uint64_t generation; /* resets so far: stamped into each tensor, so an op can
                          * refuse one from before the last reset (tensor.c) */
};

static block *block_new(const char *fn, size_t size, block *prev)
{
    if (size > ARENA_MAX) {
        qkv_set_error("%s: %zu bytes is too large for an arena", fn, size);
        return NULL;
    }
    block *b = qkv_alloc(sizeof *b + QKV_ALIGN + size);
    if (!b)
        qkv_set_error("%s: out of memory for an arena block of %zu bytes", fn, size);
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
    if (initial_bytes > ARENA_MAX) {
        qkv_set_error("qkv_arena_new: %zu bytes is too large for an arena", initial_bytes);
        return NULL;
    }
    qkv_arena *a = qkv_alloc(sizeof *a);
    if (!a)
        return NULL;
    if (initial_bytes < 4096)
        initial_bytes = 4096;
    a->top = block_new("qkv_arena_new", initial_bytes, NULL);
    if (!a->top) {
        qkv_free(a);
        return NULL;
    }
    a->capacity = initial_bytes;
    a->used = 0;
    a->generation = 0;
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

/* In parentheses: the name, not the header's checking macro (qkv/arena.h). */
void(qkv_arena_free)(qkv_arena **a)
{
    if (!a || !*a)
        return;
    free_blocks((*a)->top);
    qkv_free(*a);
    *a = NULL; /* a second free of the same pointer finds NULL: harmless */
}

/* qkv_arena_alloc, with fn naming the public function in a message. */
static void *alloc_in(const char *fn, qkv_arena *a, size_t size)
{
    if (qkv__null(fn, "arena", a))
        return NULL;
    if (size > ARENA_MAX) {
        qkv_set_error("%s: %zu bytes is too large for an arena", fn, size);
        return NULL;
    }
    size = (size + QKV_ALIGN - 1) & ~(size_t)(QKV_ALIGN - 1);
    block *b = a->top;
    if (b->size - b->used < size) {
        /* Grow geometrically so a step needs few blocks before the reset
         * merges them; the capacity itself stays below ARENA_MAX. */
        size_t want = a->capacity > size ? a->capacity : size;
        if (want > ARENA_MAX - a->capacity) {
            qkv_set_error("%s: %zu more bytes are too large for an arena of %zu", fn, size,
                          a->capacity);
            return NULL;
        }
        block *nb = block_new(fn, want, b);
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

void *qkv_arena_alloc(qkv_arena *a, size_t size) { return alloc_in("qkv_arena_alloc", a, size); }

void *qkv_arena_calloc(qkv_arena *a, size_t size)
{
    void *p = alloc_in("qkv_arena_calloc", a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void qkv_arena_reset(qkv_arena *a)
{
    if (qkv__null("qkv_arena_reset", "arena", a))
        return;
    if (a->top->prev) {
        block *merged = block_new("qkv_arena_reset", a->capacity, NULL);
        if (merged) { /* on failure keep the chain: still correct, just not merged */
            free_blocks(a->top);
            a->top = merged;
        }
    }
    a->top->used = 0;
    a->used = 0;
    a->generation++;
}

uint64_t qkv__arena_generation(const qkv_arena *a) { return a->generation; }

size_t qkv_arena_used(const qkv_arena *a)
{
    return qkv__null("qkv_arena_used", "arena", a) ? 0 : a->used;
}

size_t qkv_arena_capacity(const qkv_arena *a)
{
    return qkv__null("qkv_arena_capacity", "arena", a) ? 0 : a->capacity;
}
