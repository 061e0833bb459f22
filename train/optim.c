/* AdamW and SGD with momentum over a qkv_params (see qkv/optim.h), and
 * the AdamW part of Muon (its matrices' update is in muon.c). */
#include "qkv/optim.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "tensor/kernels/adamw.h"
#include "tensor/kernels/gemm_bf16_held.h"
#include "train/internal.h"

/* The largest value of qkv_real. */
#ifdef QKV_DOUBLE
#define REAL_MAX DBL_MAX
#else
#define REAL_MAX FLT_MAX
#endif

qkv_optim_config qkv_adamw_defaults(void)
{
    return (qkv_optim_config){
        .kind = QKV_OPTIM_ADAMW, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.1};
}

qkv_optim_config qkv_sgd_defaults(void)
{
    return (qkv_optim_config){.kind = QKV_OPTIM_SGD, .momentum = 0.9, .weight_decay = 0};
}

int qkv__optim_moments(int kind)
{
    return kind == QKV_OPTIM_ADAMW || kind == QKV_OPTIM_MUON ? 2 : kind == QKV_OPTIM_SGD ? 1 : 0;
}

/* cfg with each field left 0 replaced by its default (see qkv_optim_config). */
static qkv_optim_config with_defaults(const qkv_optim_config *cfg)
{
    qkv_optim_config c = *cfg;
    if (c.kind == 0)
        c.kind = QKV_OPTIM_ADAMW;
    if (c.kind == QKV_OPTIM_MUON)
        c.momentum = c.momentum != 0 ? c.momentum : 0.95;
    if (c.kind == QKV_OPTIM_ADAMW || c.kind == QKV_OPTIM_MUON) { /* Muon's AdamW part too */
        c.beta1 = c.beta1 != 0 ? c.beta1 : 0.9;
        c.beta2 = c.beta2 != 0 ? c.beta2 : 0.99;
        c.eps = c.eps != 0 ? c.eps : 1e-8;
    }
    return c;
}

/* A hash (FNV-1a) of where each parameter of p lies and its shape: two
 * parameter sets of the same count and padded total (a 4-value and a 9-value
 * weight) differ here, so a moment is never applied to another value. */
static uint64_t layout_of(const qkv_params *p)
{
    uint64_t h = 1469598103934665603u;
    uint64_t words[3 + QKV_MAX_DIMS];
    for (int k = 0; k < p->count; k++) {
        const qkv_tensor *t = p->items[k].t;
        int n = 0;
        words[n++] = p->items[k].offset;
        words[n++] = t->size;
        words[n++] = (uint64_t)t->ndim;
        for (int d = 0; d < t->ndim && d < QKV_MAX_DIMS; d++)
            words[n++] = (uint64_t)t->shape[d];
        const unsigned char *b = (const unsigned char *)words;
        for (size_t i = 0; i < (size_t)n * sizeof *words; i++)
            h = (h ^ b[i]) * 1099511628211u;
    }
    return h;
}

int qkv__optim_made_for(const char *fn, const qkv_optim *o, const qkv_params *p)
{
    if (p->count != o->n_params || p->total != o->n)
        return qkv_set_error("%s: o was made for %d parameters (%zu values), p has %d (%zu)", fn,
                             o->n_params, o->n, p->count, p->total);
    if (((const qkv__optim_ext *)o)->layout != layout_of(p))
        return qkv_set_error("%s: o was made for other parameters than p: as many (%d) and as "
                             "many values (%zu), of other sizes or shapes", fn, p->count, p->total);
    return 0;
}

/* A group's lr_scale and weight_decay, and an optimizer's weight decay, are
 * at most this: beyond it, every rate a run uses makes them blow a weight up. */
#define SCALE_MAX 1e6

/* 0 when cfg is a usable configuration for the allocated params p, else -1. */
static int check_config(const qkv_params *p, const qkv_optim_config *cfg)
{
    const char *fn = "qkv_optim_new";
    if (!p->data)
        return qkv_set_error("%s: the parameters are not allocated yet (qkv_params_alloc)", fn);
    if (qkv__optim_moments(cfg->kind) == 0)
        return qkv_set_error("%s: unknown kind %d", fn, (int)cfg->kind);
    if (cfg->kind == QKV_OPTIM_MUON && !(cfg->momentum < 1))
        return qkv_set_error("%s: Muon needs momentum < 1, not %g", fn, cfg->momentum);
    if (cfg->kind != QKV_OPTIM_SGD &&
        !(cfg->beta1 >= 0 && cfg->beta1 < 1 && cfg->beta2 >= 0 && cfg->beta2 < 1 && cfg->eps > 0))
        return qkv_set_error(
            "qkv_optim_new: AdamW (and Muon's AdamW part) needs 0 <= beta1, beta2 < 1 and eps > 0, not %g, %g, %g",
            cfg->beta1, cfg->beta2, cfg->eps);
    if (!(cfg->weight_decay >= 0 && cfg->momentum >= 0))
        return qkv_set_error("%s: weight decay (%g) and momentum (%g) must be >= 0", fn,
                             cfg->weight_decay, cfg->momentum);
    if (!(cfg->weight_decay <= SCALE_MAX))
        return qkv_set_error("%s: weight_decay %g is above %g: it would blow the weights up", fn,
                             cfg->weight_decay, SCALE_MAX);
    return 0;
}

qkv_optim *qkv_optim_new(const qkv_params *p, const qkv_optim_config *cfg)
{
    if (qkv__null("qkv_optim_new", "p", p) || qkv__null("qkv_optim_new", "cfg", cfg))
        return NULL;
    qkv_optim_config c = with_defaults(cfg);
    if (check_config(p, &c) < 0)
        return NULL;
    qkv__optim_ext *e = qkv_calloc(sizeof *e); /* room for Muon's part (internal.h) */
    if (!e)
        return NULL;
    e->layout = layout_of(p);
    qkv_optim *o = &e->o;
    o->cfg = c;
    o->n = p->total;
    o->n_moments = qkv__optim_moments(c.kind);
    o->m = qkv_calloc(o->n * sizeof(qkv_real));
    if (o->m && o->n_moments == 2)
        o->v = qkv_calloc(o->n * sizeof(qkv_real));
    o->n_params = p->count;
    o->lr_scale = qkv_calloc(((size_t)p->count + 1) * sizeof *o->lr_scale);
    o->decay = qkv_calloc(((size_t)p->count + 1) * sizeof *o->decay);
    if (!o->m || (o->n_moments == 2 && !o->v) || !o->lr_scale || !o->decay ||
        (c.kind == QKV_OPTIM_MUON && qkv__muon_init(o, p) < 0)) {
        qkv_optim_free(o);
        return NULL;
    }
    /* nanoGPT's rule until a group says otherwise: decay the matrices only. */
    for (int k = 0; k < p->count; k++) {
        o->lr_scale[k] = 1;
        o->decay[k] = p->items[k].t->ndim >= 2 ? c.weight_decay : 0;
    }
    return o;
}

void qkv_optim_free(qkv_optim *o)
{
    if (!o)
        return;
    qkv_free(o->m);
    qkv_free(o->v);
    qkv_free(o->lr_scale);
    qkv_free(o->decay);
    qkv__muon_free(o);
    qkv_free(o);
}

int qkv_optim_set_group(qkv_optim *o, const qkv_params *p, const char *prefix, double lr_scale,
                        double weight_decay)
{
    const char *fn = "qkv_optim_set_group";
    if (qkv__null(fn, "o", o) || qkv__null(fn, "p", p) || qkv__null(fn, "prefix", prefix))
        return -1;
    if (qkv__optim_made_for(fn, o, p) < 0)
        return -1;
    if (!(lr_scale >= 0 && lr_scale <= SCALE_MAX))
        return qkv_set_error("%s: lr_scale %g must be a number in [0, %g]", fn, lr_scale,
                             SCALE_MAX);
    if (!(weight_decay >= 0 && weight_decay <= SCALE_MAX))
        return qkv_set_error("%s: weight_decay %g must be a number in [0, %g]", fn, weight_decay,
                             SCALE_MAX);
    int matched = 0;
    for (int k = 0; k < p->count; k++)
        if (strncmp(p->items[k].name, prefix, strlen(prefix)) == 0) {
            o->lr_scale[k] = lr_scale;
            o->decay[k] = weight_decay;
            matched++;
        }
    if (!matched)
        return qkv_set_error("%s: no parameter's name starts with prefix '%s'", fn, prefix);
    return matched;
}

enum { UPDATE_CHUNK = 8192 }; /* values per task of an update loop */

/* One AdamW update of a tensor (n values), in chunks shared out among the
 * threads. A worksharing loop: called inside a parallel region. */
static void adamw_update(qkv_real *w, qkv_real *m, qkv_real *v, const qkv_real *g, size_t n,
                         const qkv__adamw_coef *c, qkv_real decay)
{
#pragma omp for schedule(static) nowait
    for (size_t lo = 0; lo < n; lo += UPDATE_CHUNK) {
        size_t len = n - lo < UPDATE_CHUNK ? n - lo : UPDATE_CHUNK;
        qkv__adamw_chunk(w + lo, m + lo, v + lo, g + lo, len, c, decay);
    }
}

/* One SGD-with-momentum update of a tensor; wd is the L2 coefficient (0 when
 * not decayed). w, vel, g are (n). A worksharing loop, as adamw_update. */
static void sgd_update(qkv_real *restrict w, qkv_real *restrict vel, const qkv_real *restrict g,
                       size_t n, qkv_real lr, qkv_real momentum, qkv_real wd, qkv_real scale)
{
#pragma omp for simd schedule(static) nowait
    for (size_t i = 0; i < n; i++) {
        vel[i] = momentum * vel[i] + (g[i] * scale + wd * w[i]);
        w[i] -= lr * vel[i];
    }
}

/* 0 when lr with each parameter's scale is a rate qkv_real holds; else -1
 * naming the parameter and the numbers (lr 1e30 x lr_scale 1e10 would
 * otherwise leave the weight at ±inf with no error). */
static int check_rates(const char *fn, const qkv_optim *o, const qkv_params *p, double lr)
{
    for (int k = 0; k < p->count; k++) {
        double lr_k = lr * o->lr_scale[k];
        if (!(lr_k <= REAL_MAX))
            return qkv_set_error("%s: lr %g x lr_scale %g of '%s' is not a finite rate", fn, lr,
                                 o->lr_scale[k], p->items[k].name);
    }
    return 0;
}

int qkv_optim_step(qkv_optim *o, qkv_params *p, double lr) { return qkv__optim_step_scaled(o, p, lr, 1); }

int qkv__optim_step_scaled(qkv_optim *o, qkv_params *p, double lr, qkv_real grad_scale)
{
    const char *fn = "qkv_optim_step";
    if (qkv__null(fn, "o", o) || qkv__null(fn, "p", p))
        return -1;
    if (!(lr >= 0 && isfinite(lr))) /* a negative rate climbs the loss; NaN poisons every weight */
        return qkv_set_error("%s: lr %g must be a finite number >= 0", fn, lr);
    if (!p->data)
        return qkv_set_error("%s: the parameters are not allocated (qkv_params_alloc)", fn);
    if (qkv__optim_made_for(fn, o, p) < 0 || check_rates(fn, o, p, lr) < 0)
        return -1;
    o->step++;
    qkv__bf16_held_changed(); /* the weights move: a generation's bf16 copies are stale */
    const qkv_optim_config *cfg = &o->cfg;
    const double bc1 = 1 - pow(cfg->beta1, (double)o->step);
    const qkv_real inv_bc2 = 1 / (qkv_real)sqrt(1 - pow(cfg->beta2, (double)o->step));
    /* One parallel region; each tensor's loop is shared out without a barrier
     * after it, since tensors do not depend on one another. */
#pragma omp parallel
    for (int k = 0; k < p->count; k++) {
        const qkv_param *it = &p->items[k];
        if (!it->t->requires_grad || qkv__muon_takes(o, k)) /* frozen (no update, no decay,
                                                              no moments), or Muon's below */
            continue;
        size_t off = it->offset, n = it->t->size;
        double lr_k = lr * o->lr_scale[k], wd = o->decay[k];
        if (cfg->kind != QKV_OPTIM_SGD) {
            const qkv__adamw_coef c = {
                .beta1 = (qkv_real)cfg->beta1,
                .beta2 = (qkv_real)cfg->beta2,
                .one_m_beta1 = (qkv_real)(1 - cfg->beta1),
                .one_m_beta2 = (qkv_real)(1 - cfg->beta2),
                .step_size = (qkv_real)(lr_k / bc1),
                .inv_bc2 = inv_bc2,
                .eps = (qkv_real)cfg->eps,
                .grad_scale = grad_scale,
            };
            adamw_update(p->data + off, o->m + off, o->v + off, p->grad + off, n, &c,
                         wd > 0 ? (qkv_real)(1 - lr_k * wd) : 1);
        } else
            sgd_update(p->data + off, o->m + off, p->grad + off, n, (qkv_real)lr_k,
                       (qkv_real)cfg->momentum, (qkv_real)wd, grad_scale);
    }
    if (cfg->kind == QKV_OPTIM_MUON) /* its products run parallel themselves: after the region */
        qkv__muon_step(o, p, lr, grad_scale);
    return 0;
}
