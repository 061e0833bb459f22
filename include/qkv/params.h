/* qkv/params.h — a model's parameters: named tensors in one flat buffer.
 *
 * Modules declare their parameters (name, shape, how to initialise) and the
 * model then allocates them all at once: the values sit in one flat buffer
 * and the gradients in another, so zeroing gradients is one memset, the
 * optimizer is one loop, and a checkpoint is one write per buffer.
 *
 *     qkv_params *p = qkv_params_new();
 *     qkv_tensor *w = qkv_params_add(p, "fc.weight", QKV_SHAPE(64, 16), QKV_INIT_NORMAL, 0.02);
 *     qkv_rng rng; qkv_rng_seed(&rng, 1);
 *     qkv_params_alloc(p, &rng);            // w->data and w->grad now valid
 *     // ...
 *     qkv_params_free(&p);
 */
#ifndef QKV_PARAMS_H
#define QKV_PARAMS_H

#include "qkv/tensor.h"

#include <stdio.h>

QKV_BEGIN_DECLS

/* How qkv_params_alloc fills a parameter. */
typedef enum qkv_init {
    QKV_INIT_ZEROS,  /* 0 (biases) */
    QKV_INIT_ONES,   /* 1 (LayerNorm weight) */
    QKV_INIT_NORMAL, /* N(0, std²) (weights, embeddings) */
} qkv_init;

#define QKV_PARAM_NAME_MAX 64

typedef struct qkv_param {
    char name[QKV_PARAM_NAME_MAX]; /* unique, dotted: "h.0.attn.c_attn.weight" */
    qkv_tensor *t;                 /* the tensor; data/grad point into the flat buffers */
    size_t offset;                 /* index of its first value in the flat buffers */
    qkv_init init;                 /* how it is initialised */
    qkv_real std;                  /* standard deviation for QKV_INIT_NORMAL */
} qkv_param;

typedef struct qkv_params {
    qkv_param *items; /* in declaration order (the order of init draws and checkpoints) */
    int count;        /* number of parameters */
    int cap;          /* allocated length of items */
    size_t total;     /* number of values over all parameters */
    qkv_real *data;   /* all values, NULL until qkv_params_alloc */
    qkv_real *grad;   /* all gradients, same layout as data */
} qkv_params;

/* An empty parameter list; NULL on failure. */
qkv_params *qkv_params_new(void);

/* Free the list *p, its tensors and buffers, and set *p to NULL, so freeing
 * twice is harmless (p or *p NULL is fine). */
void qkv_params_free(qkv_params **p);

/* Declare a parameter; its data is valid after qkv_params_alloc. NULL on a
 * bad shape, a duplicate or too long name, or after qkv_params_alloc. */
qkv_tensor *qkv_params_add(qkv_params *p, const char *name, int ndim, const int *shape,
                           qkv_init init, qkv_real std);

/* Allocate the flat buffers and initialise every parameter, in declaration
 * order, drawing from rng; gradients start at 0. 0 or -1. */
int qkv_params_alloc(qkv_params *p, qkv_rng *rng);

/* Set every gradient to 0. */
void qkv_params_zero_grad(qkv_params *p);

/* The parameter with this name, or NULL. */
qkv_param *qkv_params_find(const qkv_params *p, const char *name);

/* Freeze (frozen true) or unfreeze every parameter whose name starts with
 * prefix ("" for all): a frozen one gets no gradient (requires_grad false)
 * and no optimizer step touches it. The number of parameters matched, or -1
 * when none did. */
int qkv_params_freeze(qkv_params *p, const char *prefix, bool frozen);

/* A model summary on f: one line per parameter (name, shape, values, "frozen"
 * when it is) and the totals, trainable and frozen. 0, or -1 (NULL, a write
 * error). */
int qkv_params_print(const qkv_params *p, FILE *f);

QKV_END_DECLS
#endif
