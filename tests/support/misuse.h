/* The misuse suite's machinery (tests/api/test_misuse.c, its cases in
 * tests/misuse/): each case calls one public function with a NULL or
 * out-of-range argument, in a child process of its own, and must see the
 * documented failure value and a message that starts with the function's name
 * (and names the argument), never a signal.
 *
 *     MISUSE(qkv_matmul, null_x)
 *     {
 *         FAILS_NULL(qkv_matmul(arena(), NULL, tensor(QKV_SHAPE(2, 2)), false, false), "x");
 *     }
 *
 * tests/misuse_coverage.sh fails when a function declared in the public headers
 * has no MISUSE(name, ...) case. */
#ifndef QKV_MISUSE_H
#define QKV_MISUSE_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "qkv/qkv.h"
#include "qkv/seq2seq.h"
#include "runs.h"

/* One case: which public function it misuses, how, and the call itself. */
typedef struct misuse_case {
    const char *fn;    /* "qkv_matmul" */
    const char *label; /* "null_x" */
    void (*run)(void);
} misuse_case;

/* Register a case (done by MISUSE before main runs); cases run in order of
 * function and label. */
void misuse_add(const char *fn, const char *label, void (*run)(void));

/* Number of cases registered. */
int misuse_count(void);

/* Run case i in a child process; a Check failure when it crashed, hung or
 * failed its checks, naming the function and the case. */
void misuse_run(int i);

/* Record why the running case failed (printf-style) and end its process. */
_Noreturn void misuse_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The public function the running case misuses. */
extern const char *misuse_fn;

/* Define a case misusing fn; the braces after it are the case's body. */
#define MISUSE(fn, label)                                                                          \
    static void misuse_##fn##_##label(void);                                                       \
    __attribute__((constructor)) static void misuse_add_##fn##_##label(void)                       \
    {                                                                                              \
        misuse_add(#fn, #label, misuse_##fn##_##label);                                            \
    }                                                                                              \
    static void misuse_##fn##_##label(void)

/* Fail unless the last message starts with the running case's function name
 * and holds every one of the n strings. */
void misuse_check_message(const char *call, int n, const char *const *parts);

#define MISUSE_PARTS(...)                                                                          \
    (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), (const char *[])          \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }

/* The call must give NULL, and a message naming the function and each string. */
#define FAILS_NULL(call, ...)                                                                      \
    do {                                                                                           \
        qkv_clear_error();                                                                         \
        if ((call) != NULL)                                                                        \
            misuse_fail("%s did not return NULL", #call);                                          \
        misuse_check_message(#call, MISUSE_PARTS(__VA_ARGS__));                                    \
    } while (0)

/* The call must give -1, and a message as for FAILS_NULL. */
#define FAILS_INT(call, ...)                                                                       \
    do {                                                                                           \
        qkv_clear_error();                                                                         \
        long long got_ = (long long)(call);                                                        \
        if (got_ != -1)                                                                            \
            misuse_fail("%s returned %lld, not -1", #call, got_);                                  \
        misuse_check_message(#call, MISUSE_PARTS(__VA_ARGS__));                                    \
    } while (0)

/* The call must give NAN, and a message as for FAILS_NULL. */
#define FAILS_NAN(call, ...)                                                                       \
    do {                                                                                           \
        qkv_clear_error();                                                                         \
        double got_ = (double)(call);                                                              \
        if (!isnan(got_))                                                                          \
            misuse_fail("%s returned %g, not NAN", #call, got_);                                   \
        misuse_check_message(#call, MISUSE_PARTS(__VA_ARGS__));                                    \
    } while (0)

/* The call must give the value want (a documented failure value: 0, false,
 * an empty string's length ...), and a message as for FAILS_NULL. */
#define FAILS_AS(want, call, ...)                                                                  \
    do {                                                                                           \
        qkv_clear_error();                                                                         \
        if ((call) != (want))                                                                      \
            misuse_fail("%s did not return %s", #call, #want);                                     \
        misuse_check_message(#call, MISUSE_PARTS(__VA_ARGS__));                                    \
    } while (0)

/* A call that returns nothing: it must do nothing, leaving a message as for FAILS_NULL. */
#define REFUSES(call, ...)                                                                         \
    do {                                                                                           \
        qkv_clear_error();                                                                         \
        call;                                                                                      \
        misuse_check_message(#call, MISUSE_PARTS(__VA_ARGS__));                                    \
    } while (0)

/* A call documented to accept this argument (free(NULL)): it must simply return. */
#define HARMLESS(call) ((void)(call))

/* Fail the case unless cond holds. */
#define MISUSE_ASSERT(cond)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            misuse_fail("%s:%d: %s is false (last error: %s)", __FILE__, __LINE__, #cond,          \
                        qkv_last_error());                                                         \
    } while (0)

/* ---- what the cases call with: built on first use in the case's process ---- */

#define SHAPE23 QKV_SHAPE(2, 3)                 /* the shape most cases make tensors of */
qkv_arena *arena(void);                         /* 1 MB */
qkv_tensor *tensor(int ndim, const int *shape); /* filled with small values */
qkv_rng *rng(void);                             /* seeded */
qkv_ctx *ctx(void);                             /* arena(), rng(), not training */
qkv_params *params(void);                       /* "w" (2,3) and "b" (3), allocated */
qkv_optim *optim(void);                         /* AdamW over params() */
qkv_tokenizer *tok(void);                       /* the vocabulary of "abc" */
const char *text_path(void);                    /* a small text file */
qkv_corpus *corpus(void);                       /* text_path() loaded */
qkv_gpt *gpt(void);                             /* vocab 5, block 8, 1 layer, 2 heads, C 8 */
qkv_seq2seq *s2s(void);                         /* the dates task, 1 layer, 2 heads, C 16 */
qkv_seq2seq_batch *s2s_batch(void);             /* 2 pairs of s2s() */
test_run *gpt_run(void);                        /* a GPT's run on corpus(), 4 steps long */
test_run *s2s_run(void);                        /* an encoder-decoder's run of the dates task */
qkv_training_model borrowed(void);              /* gpt_run()'s model side, for a run that
                                                   must leave it to gpt_run() (no release) */
qkv_batcher *batcher(void);                     /* B 2 windows of 8 of corpus()'s val split */
const char *ckpt_path(void);                    /* gpt_run() saved */
const char *s2s_ckpt_path(void);                /* s2s() saved */
const char *tmp_path(const char *name);         /* a path in the case's directory */
qkv_block_config *block_config(void);           /* C 8, 2 heads, 1 layer */
extern const qkv_sample_opts OPTS;              /* temperature 1, every token kept */
extern const qkv_lm FLAT; /* uniform logits over 5 tokens, context 4; fails when .model is set */

#endif
