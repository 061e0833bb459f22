/* Misuse cases for qkv/params.h: a model's parameters. */
#include "misuse.h"

MISUSE(qkv_params_new, takes_no_arguments)
{
    qkv_params *p = qkv_params_new();
    qkv_params_free(&p);
}
MISUSE(qkv_params_free, null) { HARMLESS((qkv_params_free(NULL), 0)); }
MISUSE(qkv_params_free, twice)
{
    qkv_params *p = qkv_params_new();
    qkv_params_free(&p);
    MISUSE_ASSERT(p == NULL);
    HARMLESS((qkv_params_free(&p), 0));
}
MISUSE(qkv_params_add, null_params)
{
    FAILS_NULL(qkv_params_add(NULL, "w", SHAPE23, QKV_INIT_ZEROS, 0), "p is NULL");
}
MISUSE(qkv_params_add, null_name)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, NULL, SHAPE23, QKV_INIT_ZEROS, 0), "name is NULL");
    qkv_params_free(&p);
}
MISUSE(qkv_params_add, null_shape)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", 2, NULL, QKV_INIT_ZEROS, 0), "shape is NULL");
    qkv_params_free(&p);
}
MISUSE(qkv_params_add, bad_init)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", SHAPE23, (qkv_init)9, 0), "init 9");
    qkv_params_free(&p);
}
MISUSE(qkv_params_add, negative_std)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "w", SHAPE23, QKV_INIT_NORMAL, -1), "std");
    qkv_params_free(&p);
}
MISUSE(qkv_params_add, empty_name)
{
    qkv_params *p = qkv_params_new();
    FAILS_NULL(qkv_params_add(p, "", SHAPE23, QKV_INIT_ZEROS, 0), "name");
    qkv_params_free(&p);
}
MISUSE(qkv_params_add, after_alloc)
{
    FAILS_NULL(qkv_params_add(params(), "z", SHAPE23, QKV_INIT_ZEROS, 0), "alloc");
}
MISUSE(qkv_params_alloc, null) { FAILS_INT(qkv_params_alloc(NULL, rng()), "p is NULL"); }
MISUSE(qkv_params_alloc, twice) { FAILS_INT(qkv_params_alloc(params(), rng()), "already"); }
MISUSE(qkv_params_alloc, normal_without_rng)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", SHAPE23, QKV_INIT_NORMAL, 0.02);
    FAILS_INT(qkv_params_alloc(p, NULL), "rng");
    qkv_params_free(&p);
}
MISUSE(qkv_params_zero_grad, null) { REFUSES(qkv_params_zero_grad(NULL), "p is NULL"); }
MISUSE(qkv_params_zero_grad, unallocated)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", SHAPE23, QKV_INIT_ZEROS, 0);
    REFUSES(qkv_params_zero_grad(p), "qkv_params_alloc");
    qkv_params_free(&p);
}
MISUSE(qkv_params_find, null_params) { FAILS_NULL(qkv_params_find(NULL, "w"), "p is NULL"); }
MISUSE(qkv_params_find, null_name) { FAILS_NULL(qkv_params_find(params(), NULL), "name is NULL"); }

MISUSE(qkv_params_freeze, null_params) { REFUSES(qkv_params_freeze(NULL, "", true), "p is NULL"); }
MISUSE(qkv_params_freeze, null_prefix) { REFUSES(qkv_params_freeze(params(), NULL, true), "prefix is NULL"); }
MISUSE(qkv_params_freeze, no_match) { REFUSES(qkv_params_freeze(params(), "nothing.", true), "prefix 'nothing.'"); }

MISUSE(qkv_params_print, null_args)
{
    REFUSES(qkv_params_print(NULL, stdout), "p is NULL");
    REFUSES(qkv_params_print(params(), NULL), "f is NULL");
}
