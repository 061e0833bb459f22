/* Misuse cases for qkv/optim.h: optimizers, the learning-rate schedule, gradient clipping. */
#include "misuse.h"

MISUSE(qkv_adamw_defaults, takes_no_arguments)
{
    MISUSE_ASSERT(qkv_adamw_defaults().kind == QKV_OPTIM_ADAMW);
}
MISUSE(qkv_sgd_defaults, takes_no_arguments)
{
    MISUSE_ASSERT(qkv_sgd_defaults().kind == QKV_OPTIM_SGD);
}
MISUSE(qkv_optim_new, null_params)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    FAILS_NULL(qkv_optim_new(NULL, &cfg), "p is NULL");
}
MISUSE(qkv_optim_new, null_config) { FAILS_NULL(qkv_optim_new(params(), NULL), "cfg is NULL"); }
MISUSE(qkv_optim_new, bad_kind)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.kind = (qkv_optim_kind)7;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "kind 7");
}
MISUSE(qkv_optim_new, nan_weight_decay)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.weight_decay = NAN;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "weight decay (nan)");
}
MISUSE(qkv_optim_free, null) { HARMLESS((qkv_optim_free(NULL), 0)); }
MISUSE(qkv_optim_step, null_optim) { FAILS_INT(qkv_optim_step(NULL, params(), 1e-3), "o is NULL"); }
MISUSE(qkv_optim_step, null_params) { FAILS_INT(qkv_optim_step(optim(), NULL, 1e-3), "p is NULL"); }
MISUSE(qkv_optim_step, nan_lr) { FAILS_INT(qkv_optim_step(optim(), params(), NAN), "lr"); }
MISUSE(qkv_optim_step, negative_lr) { FAILS_INT(qkv_optim_step(optim(), params(), -1e-3), "lr"); }
MISUSE(qkv_optim_step, infinite_lr)
{
    FAILS_INT(qkv_optim_step(optim(), params(), INFINITY), "lr");
}
MISUSE(qkv_lr_at, null) { FAILS_NAN(qkv_lr_at(NULL, 0), "s is NULL"); }
MISUSE(qkv_lr_at, negative_step)
{
    qkv_lr_schedule s = {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 10, .decay_iters = 50};
    FAILS_NAN(qkv_lr_at(&s, -5), "-5");
}
MISUSE(qkv_clip_grad_norm, null) { FAILS_INT(qkv_clip_grad_norm(NULL, 1), "p is NULL"); }
MISUSE(qkv_clip_grad_norm, negative_max)
{
    FAILS_INT(qkv_clip_grad_norm(params(), -1), "max_norm");
}
MISUSE(qkv_clip_grad_norm, nan_max) { FAILS_INT(qkv_clip_grad_norm(params(), NAN), "max_norm"); }

MISUSE(qkv_optim_set_group, null_optim) { REFUSES(qkv_optim_set_group(NULL, params(), "", 1, 0), "o is NULL"); }
MISUSE(qkv_optim_set_group, bad_values)
{
    qkv_optim *o = optim();
    REFUSES(qkv_optim_set_group(o, NULL, "", 1, 0), "p is NULL");
    REFUSES(qkv_optim_set_group(o, params(), NULL, 1, 0), "prefix is NULL");
    REFUSES(qkv_optim_set_group(o, params(), "", -1, 0), "lr_scale -1");
    REFUSES(qkv_optim_set_group(o, params(), "", NAN, 0), "lr_scale nan");
    REFUSES(qkv_optim_set_group(o, params(), "", 1, -0.5), "weight_decay -0.5");
    REFUSES(qkv_optim_set_group(o, params(), "nothing.", 1, 0), "prefix 'nothing.'");
    qkv_params *other = qkv_params_new();
    qkv_params_add(other, "x", QKV_SHAPE(1), QKV_INIT_ZEROS, 0);
    qkv_params_alloc(other, NULL);
    REFUSES(qkv_optim_set_group(o, other, "", 1, 0), "o was made for");
    qkv_params_free(&other);
}

/* A scale or decay that would leave a weight at ±inf: refused, naming the argument. */
MISUSE(qkv_optim_set_group, scale_that_blows_up)
{
    REFUSES(qkv_optim_set_group(optim(), params(), "", 1e300, 0), "lr_scale 1e+300");
    REFUSES(qkv_optim_set_group(optim(), params(), "", 1, 1e300), "weight_decay 1e+300");
}
MISUSE(qkv_optim_new, weight_decay_that_blows_up)
{
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.weight_decay = 1e300;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "weight_decay 1e+300");
}
/* A rate beyond qkv_real's range, from a scale within its own: refused at the step. */
MISUSE(qkv_optim_step, rate_beyond_the_real_range)
{
    MISUSE_ASSERT(qkv_optim_set_group(optim(), params(), "w", 1e6, 0) == 1);
    FAILS_INT(qkv_optim_step(optim(), params(), 1e300), "lr 1e+300 x lr_scale 1e+06 of 'w'");
    MISUSE_ASSERT(isfinite(params()->data[0]));
}
/* Parameters of their own, a weight of n values and a bias of 1. */
static qkv_params *other_params(int n)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", QKV_SHAPE(n), QKV_INIT_ONES, 0);
    qkv_params_add(p, "b", QKV_SHAPE(1), QKV_INIT_ZEROS, 0);
    MISUSE_ASSERT(qkv_params_alloc(p, rng()) == 0);
    return p;
}
/* An optimizer made for a 4-value weight, and parameters of as many values
 * once padded with a 9-value one, for call to refuse. */
#define WITH_OTHER_PARAMETERS(call)                                                                \
    do {                                                                                           \
        qkv_params *four = other_params(4), *nine = other_params(9);                               \
        MISUSE_ASSERT(four->count == nine->count && four->total == nine->total);                   \
        qkv_optim_config cfg = qkv_adamw_defaults();                                               \
        qkv_optim *o = qkv_optim_new(four, &cfg);                                                  \
        MISUSE_ASSERT(o != NULL);                                                                  \
        call;                                                                                      \
        qkv_optim_free(o);                                                                         \
        qkv_params_free(&four);                                                                    \
        qkv_params_free(&nine);                                                                    \
    } while (0)
MISUSE(qkv_optim_step, optimizer_of_other_parameters)
{
    WITH_OTHER_PARAMETERS(FAILS_INT(qkv_optim_step(o, nine, 1e-3), "o was made for other"));
}
MISUSE(qkv_optim_set_group, optimizer_of_other_parameters)
{
    WITH_OTHER_PARAMETERS(REFUSES(qkv_optim_set_group(o, nine, "", 1, 0), "o was made for other"));
}
MISUSE(qkv_muon_defaults, takes_no_arguments)
{
    MISUSE_ASSERT(qkv_muon_defaults().kind == QKV_OPTIM_MUON);
}
MISUSE(qkv_optim_new, muon_momentum_1)
{
    qkv_optim_config cfg = qkv_muon_defaults();
    cfg.momentum = 1;
    FAILS_NULL(qkv_optim_new(params(), &cfg), "momentum < 1, not 1");
}

/* A Muon optimizer for params() (its "w" is Muon's, "b" AdamW's). */
static qkv_optim *muon(void)
{
    qkv_optim_config cfg = qkv_muon_defaults();
    qkv_optim *o = qkv_optim_new(params(), &cfg);
    MISUSE_ASSERT(o != NULL);
    return o;
}

MISUSE(qkv_optim_set_muon, null_optim)
{
    REFUSES(qkv_optim_set_muon(NULL, params(), "", false), "o is NULL");
}
MISUSE(qkv_optim_set_muon, bad_values)
{
    qkv_optim *o = muon();
    REFUSES(qkv_optim_set_muon(o, NULL, "", false), "p is NULL");
    REFUSES(qkv_optim_set_muon(o, params(), NULL, false), "prefix is NULL");
    REFUSES(qkv_optim_set_muon(o, params(), "nothing.", false), "prefix 'nothing.'");
    REFUSES(qkv_optim_set_muon(o, params(), "b", true), "'b' has 1 dimensions");
    REFUSES(qkv_optim_set_muon(optim(), params(), "w", true), "not a Muon optimizer");
    qkv_params *other = qkv_params_new();
    qkv_params_add(other, "x", QKV_SHAPE(1), QKV_INIT_ZEROS, 0);
    qkv_params_alloc(other, NULL);
    REFUSES(qkv_optim_set_muon(o, other, "", false), "o was made for");
    qkv_params_free(&other);
    MISUSE_ASSERT(qkv_optim_is_muon(o, params(), "w") == 1); /* the refusals changed nothing */
    qkv_optim_free(o);
}
MISUSE(qkv_optim_is_muon, null) { FAILS_INT(qkv_optim_is_muon(NULL, params(), "w"), "o is NULL"); }
MISUSE(qkv_optim_is_muon, bad_values)
{
    qkv_optim *o = muon();
    FAILS_INT(qkv_optim_is_muon(o, NULL, "w"), "p is NULL");
    FAILS_INT(qkv_optim_is_muon(o, params(), NULL), "name is NULL");
    FAILS_INT(qkv_optim_is_muon(o, params(), "v"), "no parameter is named 'v'");
    qkv_params *other = qkv_params_new();
    qkv_params_add(other, "x", QKV_SHAPE(1), QKV_INIT_ZEROS, 0);
    qkv_params_alloc(other, NULL);
    FAILS_INT(qkv_optim_is_muon(o, other, "x"), "o was made for");
    qkv_params_free(&other);
    qkv_optim_free(o);
}
MISUSE(qkv_newton_schulz, null_input)
{
    qkv_real out[4];
    FAILS_INT(qkv_newton_schulz(NULL, 2, 2, out), "g is NULL");
}
MISUSE(qkv_newton_schulz, null_output)
{
    qkv_real g[4] = {1, 2, 3, 4};
    FAILS_INT(qkv_newton_schulz(g, 2, 2, NULL), "out is NULL");
}
MISUSE(qkv_newton_schulz, bad_shape)
{
    qkv_real g[4] = {1, 2, 3, 4}, out[4];
    FAILS_INT(qkv_newton_schulz(g, 0, 2, out), "a 0 x 2 matrix");
    FAILS_INT(qkv_newton_schulz(g, 2, -1, out), "a 2 x -1 matrix");
    FAILS_INT(qkv_newton_schulz(g, 1 << 30, 1 << 30, out), "rows and cols");
}
