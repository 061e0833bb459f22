/* Internal: helpers the train/ files share. Not installed. */
#ifndef QKV_TRAIN_INTERNAL_H
#define QKV_TRAIN_INTERNAL_H

#include <stdbool.h>

#include "qkv/base.h"
#include "qkv/optim.h"
#include "qkv/params.h"

/* The whole regular file at path in one qkv_alloc'd block (freed with
 * qkv_free), with its length in *len and a NUL after the last byte. NULL on
 * failure, with a message naming the path and the reason (strerror).
 * An empty file is returned with *len = 0; callers decide if that is wrong. (file.c) */
unsigned char *qkv__read_file(const char *path, size_t *len);

/* Put a printf-style prefix and ": " before the current error message;
 * returns -1. (file.c) */
int qkv__error_prefix(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Hold the lock of the output path (see qkv/file.h): *taken is true when this
 * call took it (give it back with qkv__lock_give), false when this process
 * held it already. 0, or -1 at once when another process holds it. (file_lock.c) */
int qkv__lock_take(const char *path, bool *taken);

/* Give back the lock on path and remove PATH.lock. (file_lock.c) */
void qkv__lock_give(const char *path);

/* 0 when bytes[0..n) can be a vocabulary: 0 to 256 strictly ascending
 * bytes (so no duplicates); else -1 with a message saying what is wrong.
 * The one rule both a checkpoint's save and its load apply. (tokenizer.c) */
int qkv__vocab_check(const uint8_t *bytes, long long n);

/* The moment buffers an optimizer of this qkv_optim_kind keeps: 2 for AdamW,
 * 1 for SGD, 0 for anything else (a checkpoint's 0 means no optimizer).
 * The one place this rule is written. (optim.c) */
int qkv__optim_moments(int kind);

/* The L2 norm of all of p's gradients (p->grad allocated), in double, in a
 * fixed order whatever the thread count. (clip.c) */
double qkv__grad_norm(const qkv_params *p);

/* The factor clipping to max_norm puts on gradients of this norm: 1 when
 * the norm is within max_norm or not finite. (clip.c) */
qkv_real qkv__clip_coef(double norm, double max_norm);

/* qkv_optim_step with every gradient taken as g·grad_scale (rounded to
 * qkv_real, as clipping the gradients first would store it), so clipping
 * costs no pass of its own. (optim.c) */
int qkv__optim_step_scaled(qkv_optim *o, qkv_params *p, double lr, qkv_real grad_scale);

#endif
