/* qkv/optim.h — optimizers, the learning-rate schedule, gradient clipping.
 *
 * An optimizer keeps its state (the moments) in flat buffers parallel to a
 * qkv_params' data, so one step is one pass over every value. A training
 * step reads:
 *
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1);
 *     qkv_params *params = qkv_params_new();
 *     qkv_params_add(params, "fc.weight", QKV_SHAPE(64, 16), QKV_INIT_NORMAL, 0.02);
 *     qkv_params_alloc(params, &rng);
 *     qkv_optim_config cfg = qkv_adamw_defaults();   // then change fields as needed
 *     qkv_optim *opt = qkv_optim_new(params, &cfg);
 *     qkv_lr_schedule sched = {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 100,
 *                              .decay_iters = 2000};
 *     for (int64_t it = 0; it < 2000; it++) {
 *         qkv_params_zero_grad(params);
 *         // ... forward, qkv_backward ...
 *         qkv_clip_grad_norm(params, 1.0);      // returns the norm before clipping
 *         qkv_optim_step(opt, params, qkv_lr_at(&sched, it));
 *     }
 *     qkv_optim_free(opt);
 *     qkv_params_free(&params);
 *
 * Weight decay applies only to parameters with two or more dimensions
 * (weight matrices and embedding tables), never to biases or LayerNorm
 * gains: shrinking those towards 0 does not regularise anything useful.
 * This is nanoGPT's rule; qkv_optim_set_group changes it for a group, and
 * frozen parameters (qkv_params_freeze) are left alone:
 *
 *     qkv_params_freeze(params, "wte.", true);                  // no update at all
 *     qkv_optim_set_group(opt, params, "lm_head.", 0.1, 0.0);   // 10x slower, no decay
 *
 * Muon (QKV_OPTIM_MUON, qkv_muon_defaults) updates each hidden weight
 * matrix with its Nesterov momentum orthogonalised (qkv_newton_schulz) and
 * the other parameters with AdamW. Which ones are Muon's is a rule: every
 * 2-D parameter except embedding tables and output heads, i.e. those named
 * "wte.weight", "wpe.weight" or "lm_head.weight" (or ending in ".wte.weight"
 * and so on: the names qkv's models give them); biases, gains and anything
 * not 2-D are AdamW's. qkv_optim_set_muon changes it for a prefix:
 *
 *     qkv_optim_config mc = qkv_muon_defaults();
 *     qkv_optim *opt = qkv_optim_new(params, &mc);
 *     qkv_optim_set_muon(opt, params, "h.0.attn.c_attn.", false);   // AdamW for this one
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h);
 * (qkv_optim_config){0} is AdamW, (qkv_lr_schedule){0} a constant 1e-3.
 */
#ifndef QKV_OPTIM_H
#define QKV_OPTIM_H

#include "qkv/params.h"

QKV_BEGIN_DECLS

/* Which update rule. The values are stored in checkpoints: never renumber. */
typedef enum qkv_optim_kind {
    QKV_OPTIM_ADAMW = 1, /* Adam with decoupled weight decay */
    QKV_OPTIM_SGD = 2,   /* stochastic gradient descent with momentum */
    QKV_OPTIM_MUON = 3,  /* orthogonalised momentum for hidden matrices, AdamW for the rest */
} qkv_optim_kind;

/* Zero-initialised, (qkv_optim_config){0} is AdamW with nanoGPT's betas and
 * eps and no weight decay. qkv_optim_new fills the zero fields in o->cfg. (A
 * beta of exactly 0 therefore means the default: for no averaging give a tiny
 * value such as 1e-12.) */
typedef struct qkv_optim_config {
    qkv_optim_kind kind; /* the update rule; 0 = QKV_OPTIM_ADAMW */
    double beta1;        /* AdamW (and Muon's AdamW part): decay of the mean of gradients;
                            0 = 0.9 */
    double beta2;        /* AdamW (and Muon's): decay of the mean of squared gradients; 0 = 0.99 */
    double eps;          /* AdamW (and Muon's): added to the denominator; 0 = 1e-8 */
    double momentum;     /* SGD: decay of the velocity, 0 = none (plain SGD); Muon: its
                            Nesterov momentum, in [0, 1), 0 = 0.95 */
    double weight_decay; /* on parameters with ndim >= 2 only; AdamW and Muon: decoupled,
                            SGD: L2; 0 = none */
} qkv_optim_config;

/* nanoGPT's AdamW recipe: the zero config plus weight decay 0.1 (beta1 0.9,
 * beta2 0.99, eps 1e-8 written out). */
qkv_optim_config qkv_adamw_defaults(void);

/* SGD with momentum 0.9 and no weight decay. */
qkv_optim_config qkv_sgd_defaults(void);

/* Muon with momentum 0.95 and weight decay 0.1, AdamW's betas and eps for its AdamW part. */
qkv_optim_config qkv_muon_defaults(void);

typedef struct qkv_optim {
    qkv_optim_config cfg; /* hyperparameters (the learning rate is given per step) */
    int64_t step;         /* updates done so far (AdamW's bias correction uses it) */
    size_t n;             /* length of each moment buffer: the params' total */
    int n_moments;        /* moment buffers in use: 2 for AdamW and Muon, 1 for SGD */
    qkv_real *m;          /* AdamW: mean of gradients; SGD: velocity; Muon: its matrices'
                             momentum, the other parameters' AdamW mean */
    qkv_real *v;          /* AdamW: mean of squared gradients (Muon: of its AdamW part, 0 on
                             its matrices); NULL for SGD */
    int n_params;         /* the parameters it was made for (their count) */
    double *lr_scale;     /* per parameter: it learns at lr·lr_scale (1 unless a group says) */
    double *decay;        /* per parameter: its weight decay (cfg's on ndim >= 2, else 0,
                             unless a group says) */
} qkv_optim;

/* An optimizer for p (allocated) with zeroed moments and step 0, its config
 * cfg with the zero fields set to their defaults; NULL on a bad config or no
 * memory. */
qkv_optim *qkv_optim_new(const qkv_params *p, const qkv_optim_config *cfg);

/* A parameter group, as in PyTorch: every parameter of p whose name starts
 * with prefix ("" for all) learns at lr·lr_scale and decays with
 * weight_decay (whatever its ndim), from the next step on. The groups are the
 * program's setup, not saved in checkpoints: set them again after a resume.
 * Frozen parameters (requires_grad false, qkv_params_freeze) are never
 * touched: no update, no decay, no moments. The number of parameters set,
 * or -1 (none matched, a bad value, o not made for p). */
int qkv_optim_set_group(qkv_optim *o, const qkv_params *p, const char *prefix, double lr_scale,
                        double weight_decay);

/* Free the optimizer and its moments (NULL is fine). */
void qkv_optim_free(qkv_optim *o);

/* One update of every parameter of p from its gradient, with learning rate
 * lr. AdamW is PyTorch's formula, with t = step after incrementing it:
 *     w ← w·(1 − lr·wd)                       (ndim >= 2 only)
 *     m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²
 *     w ← w − lr/(1 − β1^t) · m / (√v / √(1 − β2^t) + eps)
 * SGD is PyTorch's with dampening 0: g ← g + wd·w (ndim >= 2 only),
 * m ← μ·m + g, w ← w − lr·m. Muon, on each of its r×c matrices (the rest
 * AdamW's as above), is torch.optim.Muon's with Moonshot's scale:
 *     m ← μ·m + g,   u = g + μ·m                        (Nesterov)
 *     w ← w·(1 − lr·wd) − lr·0.2·√max(r, c)·NS(u)
 * where NS is qkv_newton_schulz; an orthogonal r×c matrix has RMS
 * 1/√max(r, c), so the update's RMS is 0.2, about AdamW's, and one lr serves
 * both groups. 0, or -1 when p is not the params o was made for or lr is
 * negative, NaN or infinite. */
int qkv_optim_step(qkv_optim *o, qkv_params *p, double lr);

/* Set whether the parameters whose names start with prefix take Muon's
 * update (on) or AdamW's, from the next step on (their moments are shared:
 * switching mid-run carries the first moment over). Like the groups it is
 * setup, not saved: set it again after a resume. The number set, or -1 (o
 * not Muon or not made for p, none matched, or on for one that is not 2-D). */
int qkv_optim_set_muon(qkv_optim *o, const qkv_params *p, const char *prefix, bool on);

/* 1 when the parameter of p named name takes Muon's update, 0 when not (any
 * other kind of optimizer: 0), -1 when there is none so named or o was not
 * made for p. */
int qkv_optim_is_muon(const qkv_optim *o, const qkv_params *p, const char *name);

/* Muon's orthogonalisation of the rows×cols matrix g (row-major) into out
 * (which may be g): X = g/‖g‖_F, transposed when rows > cols so that
 * A = XXᵀ is the smaller Gram matrix, then 5 times X ← aX + (bA + cA²)X with
 * (a, b, c) = (3.4445, −4.7750, 2.0315), transposed back. Its singular
 * values end near 1 (about 0.7 to 1.2), the vectors g's; a g of norm below
 * 1e-7 is scaled by 1e7 instead. Deterministic: the same bytes at every
 * thread count. 0, or -1 (NULL, rows or cols < 1, no memory). */
int qkv_newton_schulz(const qkv_real *g, int rows, int cols, qkv_real *out);

/* ---- learning-rate schedule ---- */

/* Linear warmup, then cosine decay to a floor: nanoGPT's get_lr. Or, with
 * wsd_decay > 0, warmup-stable-decay: after the warmup the rate stays at lr
 * and only the last wsd_decay of the run decays, linearly, to the floor.
 * Zero-initialised it is a constant 1e-3; (qkv_lr_schedule){.lr = 3e-4} a constant 3e-4. */
typedef struct qkv_lr_schedule {
    double lr;            /* peak learning rate, reached at the end of warmup; 0 = 1e-3 */
    double min_lr;        /* the floor the decay ends at; 0 = 0 */
    int64_t warmup_iters; /* steps of linear warmup; 0 = none */
    int64_t decay_iters;  /* step where the decay reaches min_lr (and stays); 0 = no decay:
                             lr from the end of warmup on */
    double wsd_decay;     /* 0: cosine; in (0, 1]: the fraction of decay_iters at its end
                             that decays linearly (warmup-stable-decay) */
} qkv_lr_schedule;

/* The learning rate for step it (from 0): lr·(it+1)/(warmup+1) while
 * it < warmup; then, with wsd_decay = 0,
 * min_lr + ½(1 + cos(π·(it−warmup)/(decay−warmup)))·(lr − min_lr) up to
 * decay_iters; with wsd_decay > 0, lr until s = decay − round(wsd_decay·decay)
 * (rounded to the nearest step, halves away from 0, so the decay spans a whole
 * number of steps; at least warmup), then lr + (min_lr − lr)·(it − s)/(decay − s); then min_lr
 * (with decay_iters 0: lr after the warmup). NAN (with a message) for a NULL
 * s or a negative it. */
double qkv_lr_at(const qkv_lr_schedule *s, int64_t it);

/* ---- gradient clipping ---- */

/* The L2 norm of all of p's gradients together, computed in double in a fixed
 * order (the same at every thread count); when it exceeds max_norm every
 * gradient is scaled by max_norm / (norm + 1e-6), as PyTorch's
 * clip_grad_norm_. Returns the norm before clipping (a NaN or infinite norm
 * is returned and nothing is scaled), or -1 when p has no gradients or
 * max_norm is negative or NaN. */
double qkv_clip_grad_norm(qkv_params *p, double max_norm);

QKV_END_DECLS
#endif
