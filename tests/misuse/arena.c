/* Misuse cases for qkv/arena.h: the step arena. */
#include "misuse.h"

MISUSE(qkv_arena_new, size_max) { FAILS_NULL(qkv_arena_new(SIZE_MAX), "too large"); }
MISUSE(qkv_arena_new, half_size_max) { FAILS_NULL(qkv_arena_new(SIZE_MAX / 2 + 1), "too large"); }
MISUSE(qkv_arena_free, null) { HARMLESS((qkv_arena_free(NULL), 0)); }
MISUSE(qkv_arena_free, twice)
{
    qkv_arena *a = qkv_arena_new(4096);
    qkv_arena_free(&a);
    MISUSE_ASSERT(a == NULL);
    HARMLESS((qkv_arena_free(&a), 0));
}
MISUSE(qkv_arena_alloc, null_arena) { FAILS_NULL(qkv_arena_alloc(NULL, 8), "arena is NULL"); }
MISUSE(qkv_arena_alloc, huge) { FAILS_NULL(qkv_arena_alloc(arena(), SIZE_MAX), "too large"); }
MISUSE(qkv_arena_alloc, growth_overflow)
{
    /* A first block near SIZE_MAX/4 must not wrap when the arena grows. */
    qkv_arena *a = qkv_arena_new(4096);
    MISUSE_ASSERT(a != NULL);
    FAILS_NULL(qkv_arena_alloc(a, SIZE_MAX / 4 - 4096), "too large");
    MISUSE_ASSERT(qkv_arena_alloc(a, 8) != NULL);
    qkv_arena_free(&a);
}
MISUSE(qkv_arena_calloc, null_arena) { FAILS_NULL(qkv_arena_calloc(NULL, 8), "arena is NULL"); }
MISUSE(qkv_arena_calloc, huge) { FAILS_NULL(qkv_arena_calloc(arena(), SIZE_MAX), "too large"); }
MISUSE(qkv_arena_reset, null) { REFUSES(qkv_arena_reset(NULL), "arena is NULL"); }
MISUSE(qkv_arena_used, null) { FAILS_AS(0, qkv_arena_used(NULL), "arena is NULL"); }
MISUSE(qkv_arena_capacity, null) { FAILS_AS(0, qkv_arena_capacity(NULL), "arena is NULL"); }
