/* Internal: what the training run's files (train/) share: the optimizers'
 * moments, the gradient norm and clipping. Not installed. */
#ifndef QKV_TRAIN_INTERNAL_H
#define QKV_TRAIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qkv/base.h"
#include "qkv/optim.h"
#include "qkv/params.h"

/* The moment buffers an optimizer of this qkv_optim_kind keeps: 2 for AdamW
 * and Muon (the momentum of its matrices in the first, their second moment
 * 0), 1 for SGD, 0 for anything else (a checkpoint's 0 means no optimizer).
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

/* An optimizer as qkv_optim_new allocates it: the public struct (whose
 * layout is ABI) first, then what Muon keeps besides. A qkv_optim * from
 * qkv_optim_new always points at one of these. */
typedef struct qkv__optim_ext {
    qkv_optim o;     /* the public part */
    bool *muon;      /* Muon only, per parameter: whether Muon's update is its (else AdamW's) */
    qkv_real *work;  /* Muon only: the updates of the matrices of one shape and their
                        Newton–Schulz scratch */
    int *batch;      /* Muon only: the parameters of one Newton–Schulz batch */
    uint64_t layout; /* where p's parameters lie and their shapes, checked by every call given a p */
} qkv__optim_ext;

/* 0 when o was made for p (its count, values and their layout), else -1
 * naming fn. (optim.c) */
int qkv__optim_made_for(const char *fn, const qkv_optim *o, const qkv_params *p);

/* Muon's part of a new optimizer o for p: the grouping rule's choice of
 * matrices, the scratch for the largest. 0 or -1 (no memory). (muon.c) */
int qkv__muon_init(qkv_optim *o, const qkv_params *p);

/* Free what qkv__muon_init allocated (either may be NULL). (muon.c) */
void qkv__muon_free(qkv_optim *o);

/* Whether parameter k takes Muon's update (false for any other kind). (muon.c) */
bool qkv__muon_takes(const qkv_optim *o, int k);

/* Muon's update of every parameter it takes (see qkv_optim_step), gradients
 * scaled by grad_scale; o->step already counts this step. (muon.c) */
void qkv__muon_step(qkv_optim *o, qkv_params *p, double lr, qkv_real grad_scale);

/* qkv_newton_schulz of count rows×cols matrices stored one after the other
 * in g, into out (which may be g), with the caller's scratch: count·(2·m·n +
 * 2·m²) values, m and n the smaller and larger of rows and cols. Each
 * matrix's result is the same bytes as alone. (muon.c) */
void qkv__newton_schulz(int count, const qkv_real *g, int rows, int cols, qkv_real *out,
                        qkv_real *work);

/* The first of the n bytes where a and b differ; n when none does: what a
 * refused config blob's message names. (training.c) */
size_t qkv__first_difference(const uint8_t *a, const uint8_t *b, size_t n);

#endif
