/* qkv/arena.h — a step arena: everything one training step creates.
 *
 * Allocation is a pointer bump and freeing everything is one reset, so the
 * tensors, graph nodes and intermediate gradients of a step cost no malloc
 * once the arena has grown to the size a step needs:
 *
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1);
 *     qkv_arena *step = qkv_arena_new(1 << 20);
 *     for (int it = 0; step && it < 100; it++) {
 *         qkv_tensor *x = qkv_randn(step, QKV_SHAPE(8, 16), 1, &rng);   // this step's input
 *         qkv_set_requires_grad(x, true);
 *         qkv_tensor *loss = qkv_sum(step, qkv_mul(step, x, x));     // and its graph
 *         qkv_backward(step, loss);
 *         // ... an optimizer step reads the gradients here ...
 *         qkv_arena_reset(step);       // the step's tensors, nodes and gradients, at once
 *     }
 *     qkv_arena_free(&step);
 */
#ifndef QKV_ARENA_H
#define QKV_ARENA_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

typedef struct qkv_arena qkv_arena;

/* A new arena whose first block holds initial_bytes; NULL on failure (no
 * memory, or more than SIZE_MAX / 4 bytes). */
qkv_arena *qkv_arena_new(size_t initial_bytes);

/* Free the arena *a and everything allocated from it, and set *a to NULL, so
 * freeing twice is harmless (a or *a NULL is fine). */
void qkv_arena_free(qkv_arena **a);

/* 0.x freed with qkv_arena_free(a); 1.x takes &a. C lets the old call through
 * with a warning and the wrong pointer at run time, so in C11 the call is
 * checked here: anything but a qkv_arena ** (or NULL) is a compile error,
 * "'_Generic' selector of type 'qkv_arena *' is not compatible". The same
 * symbol is called (the ABI is unchanged); (qkv_arena_free)(p) goes around the
 * check. C++ refuses the old call by itself. */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define qkv_arena_free(a) qkv_arena_free(_Generic((a), qkv_arena **: (a), void *: (a)))
#endif

/* size bytes, QKV_ALIGN-aligned, valid until the next reset; NULL on failure. */
void *qkv_arena_alloc(qkv_arena *a, size_t size);

/* Like qkv_arena_alloc, and the bytes are zeroed. */
void *qkv_arena_calloc(qkv_arena *a, size_t size);

/* Forget every allocation. O(1) once the arena fits a step: the first reset
 * after it grew merges its blocks into one big enough for the whole step. */
void qkv_arena_reset(qkv_arena *a);

/* Bytes handed out since the last reset (0 for a NULL arena). */
size_t qkv_arena_used(const qkv_arena *a);

/* Bytes the arena holds from the allocator (0 for a NULL arena). */
size_t qkv_arena_capacity(const qkv_arena *a);

QKV_END_DECLS
#endif
