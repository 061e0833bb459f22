/* Internal: checking the arguments of a public function. Every layer uses
 * these, so a NULL argument reads the same everywhere:
 *
 *     if (qkv__null("qkv_gpt_load", "vocab", vocab)) return NULL;
 *     // -> "qkv_gpt_load: vocab is NULL"
 *     if (qkv__check_inputs("qkv_matmul", a, "x w", 2, (qkv_tensor *[]){x, w}) < 0) return NULL;
 *     // a NULL x -> "qkv_matmul: input x is NULL: an earlier call failed: <its message>"
 *
 * A NULL tensor is how a failed op hands its failure on, so the message of a
 * NULL input keeps the cause: the first failure's message, once, however
 * long the chain of ops it went through. Not installed. */
#ifndef QKV_CHECK_H
#define QKV_CHECK_H

#include "qkv/tensor.h"

/* True, with the message "fn: arg is NULL", when p is NULL. */
bool qkv__null(const char *fn, const char *arg, const void *p);

/* The message for a NULL tensor input: "fn: input arg is NULL", then
 * ": an earlier call failed: " and the first message of the chain, if any
 * failure came before. Returns -1. (base.c) */
int qkv__null_input(const char *fn, const char *arg);

/* 0 when t is a tensor with values; -1 with a message naming fn and arg for a
 * NULL t (qkv__null_input) or one whose values do not exist yet (a parameter
 * before qkv_params_alloc). */
int qkv__check_input(const char *fn, const char *arg, const qkv_tensor *t);

/* An op's arguments: qkv__check_input for n tensors named by the
 * space-separated names ("x w"), then the arena the result comes from. */
int qkv__check_inputs(const char *fn, const qkv_arena *a, const char *names, int n,
                      qkv_tensor *const *ts);

/* Put "fn: " before the current message, unless it already starts with
 * fn: a public function reporting a failure of the code it called. -1. */
int qkv__fail_in(const char *fn);

/* y, naming fn in the message when y is NULL (qkv__fail_in): the end of a
 * public function that returns what the ops it called made. */
qkv_tensor *qkv__result(const char *fn, qkv_tensor *y);

/* True, with a message naming fn and arg, when x is NaN or infinite. */
bool qkv__not_finite(const char *fn, const char *arg, double x);

/* Put a printf-style prefix and ": " before the current error message;
 * returns -1. (base.c) */
int qkv__error_prefix(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#endif
