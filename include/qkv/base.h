/* qkv/base.h — the element type, error reporting and the allocation hook.
 *
 * Every fallible qkv function reports failure by returning NULL (or -1, or
 * NAN, as its comment says) and leaving a message for the caller; the library
 * never exits or aborts:
 *
 *     qkv_arena *arena = qkv_arena_new(1 << 16);
 *     qkv_tensor *x = qkv_zeros(arena, QKV_SHAPE(2, 3));
 *     qkv_tensor *w = qkv_zeros(arena, QKV_SHAPE(4, 5));
 *     qkv_tensor *y = qkv_matmul(arena, x, w, false, true);   // x·wᵀ: 3 and 5 differ
 *     if (!y) fprintf(stderr, "qkv: %s\n", qkv_last_error()); // the message names both shapes
 *     qkv_arena_free(&arena);
 *
 * The argument contract: every public function checks its pointers, sizes
 * and enumerations, and a bad one is a failure whose message starts with the
 * function's name and names the argument ("qkv_gpt_load: vocab is NULL"). A
 * function that returns nothing does nothing and leaves such a message. A
 * failure further in keeps its own words after the name of each public
 * function it went through ("qkv_gpt_load: qkv_checkpoint_open: cannot open
 * 'x.ckpt': No such file or directory").
 *
 * A NULL tensor is how a failed op hands its failure on, so ops take NULL
 * inputs: they fail too, and the message names the op and the input and
 * keeps the first failure as its cause, once, however long the chain:
 *
 *     qkv_gelu(a, qkv_add(a, qkv_matmul(a, x, w, false, false), b));
 *     // "qkv_gelu: input x is NULL: an earlier call failed: qkv_matmul: inner
 *     //  dimensions differ: shapes (2,3) and (2,3)"
 *
 * so a chain of ops can be checked once at its end.
 *
 * When the message is valid: right after a call reported failure. A call
 * that succeeds leaves the message as it was, so a message from an old
 * failure can still be there: read it only when a call has just failed.
 * After handling a failure and going on, call qkv_clear_error(), or a later
 * NULL input would name that old failure as its cause.
 *
 * Configs, the one rule for every public config struct (qkv_optim_config,
 * qkv_lr_schedule, qkv_block_config, qkv_gpt_config, qkv_sample_opts,
 * qkv_seq2seq_config, qkv_train_config, ...): a field left 0 (or false, or
 * NULL) takes the default its comment names ("0 = ..."), so a
 * zero-initialised config, or one that sets only what it changes, is valid:
 *
 *     qkv_optim_config oc = {0};                                   // AdamW
 *     qkv_sample_opts so = {.temperature = 0.8, .top_k = 5};       // top_p: all
 *
 * The exception is a model's sizes (vocab_size, n_embd, n_head, ...), which
 * have no sensible default: left 0 they are an error naming the field.
 * Functions named qkv_*_defaults() return a tested recipe (nanoGPT's).
 */
#ifndef QKV_BASE_H
#define QKV_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every public header wraps its declarations in QKV_BEGIN_DECLS ...
 * QKV_END_DECLS: C linkage for C++ programs, and default (exported)
 * visibility. The library is compiled with -fvisibility=hidden, so whatever
 * no public header declares (the internal functions) stays out of
 * libqkv.so's symbol table and is hidden in libqkv.a's objects too. */
#if defined(__GNUC__)
#define QKV_VISIBILITY_PUSH _Pragma("GCC visibility push(default)")
#define QKV_VISIBILITY_POP _Pragma("GCC visibility pop")
#else
#define QKV_VISIBILITY_PUSH
#define QKV_VISIBILITY_POP
#endif
#ifdef __cplusplus
#define QKV_BEGIN_DECLS QKV_VISIBILITY_PUSH extern "C" {
#define QKV_END_DECLS } QKV_VISIBILITY_POP
#else
#define QKV_BEGIN_DECLS QKV_VISIBILITY_PUSH
#define QKV_END_DECLS QKV_VISIBILITY_POP
#endif

QKV_BEGIN_DECLS

/* The element type of every tensor: float, or double when the library (and
 * the program using it) is compiled with -DQKV_DOUBLE. The tests build a
 * double copy to check gradients against finite differences at 1e-6. */
#ifdef QKV_DOUBLE
typedef double qkv_real;
#else
typedef float qkv_real;
#endif

/* The precision guard: the float library defines only
 * qkv_library_built_without_QKV_DOUBLE, the double one only
 * qkv_library_built_with_QKV_DOUBLE, and every file that includes a qkv
 * header refers to the one matching its own qkv_real. A program compiled
 * with -DQKV_DOUBLE against the float library (or the other way round) so
 * fails to link, and a mismatched libqkv.so at run time fails to load,
 * with the missing symbol's name saying which precision it needs, instead
 * of computing garbage. */
#ifdef QKV_DOUBLE
#define QKV_PRECISION_SYMBOL qkv_library_built_with_QKV_DOUBLE
#else
#define QKV_PRECISION_SYMBOL qkv_library_built_without_QKV_DOUBLE
#endif
extern const int QKV_PRECISION_SYMBOL;
#if defined(__GNUC__)
/* "used" keeps the reference even though nothing reads it. */
__attribute__((used)) static const int *const qkv_precision_guard = &QKV_PRECISION_SYMBOL;
#endif

/* Alignment of every buffer qkv allocates, in bytes (one AVX-512 register). */
#define QKV_ALIGN 64

/* The message of the last failure on this thread ("" when none since the
 * start or qkv_clear_error). Valid right after a call failed; successes do
 * not clear it. */
const char *qkv_last_error(void);

/* Forget the last failure message on this thread. */
void qkv_clear_error(void);

/* Record a printf-style failure message for this thread; always returns -1
 * (a NULL fmt records "qkv_set_error: fmt is NULL"). */
int qkv_set_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Route every allocation qkv makes through alloc/release (NULL, NULL restores
 * malloc/free). Set it before creating any qkv object. */
void qkv_set_allocator(void *(*alloc)(size_t), void (*release)(void *));

/* A QKV_ALIGN-aligned block of size bytes from the hook; NULL (with a message) on failure. */
void *qkv_alloc(size_t size);

/* Like qkv_alloc, and the block is zeroed. */
void *qkv_calloc(size_t size);

/* Give back a block from qkv_alloc/qkv_calloc (NULL is fine). */
void qkv_free(void *p);

/* How many blocks qkv has asked its allocation hook for since the process
 * started: a steady training step must not change it. */
uint64_t qkv_alloc_count(void);

/* The most threads qkv_set_threads accepts (fewer when OMP_THREAD_LIMIT is
 * lower): more than any machine qkv runs on has cores, and far below where
 * libgomp itself breaks (100000 threads overflow its stack, INT_MAX makes it
 * exit the process). */
#define QKV_MAX_THREADS 1024

/* Run qkv's parallel kernels on n threads (1..QKV_MAX_THREADS, and at most
 * OMP_THREAD_LIMIT), or with n = 0 on the default: the count before the
 * first qkv_set_threads (OMP_NUM_THREADS, else every core available). As
 * OpenMP's omp_set_num_threads, it holds for work started from the calling
 * thread. 0, or -1 when n is outside that range (the setting is unchanged).
 *
 * Fork: OpenMP (libgomp) is not fork-safe. A child forked (fork(), without
 * exec) by a process that had threads running, qkv's or its own, runs qkv
 * on one thread: a team of more would wait forever for threads the child
 * does not have. There qkv_threads() is 1 and qkv_set_threads refuses any n
 * but 1, saying why. A child forked before any thread started, or one that
 * execs, keeps every thread. */
int qkv_set_threads(int n);

/* The number of threads qkv's parallel kernels use from the calling thread. */
int qkv_threads(void);

QKV_END_DECLS
/* Every file that includes a qkv header gets the version and its guard. */
#include "qkv/version.h"

#endif
