/* Misuse cases for qkv/stack.h: the public decoder-only stack, its
 * generation and naming one's own parameters under a prefix. */
#include "misuse.h"

static const qkv_stack_config CFG = {.vocab_size = 5, .block_size = 4,
                                     .block = {.n_embd = 4, .n_head = 2, .n_layer = 1}};
static const int32_t IDS[4] = {0, 1, 2, 3};

/* A stack of CFG with its values, living for the case's process. */
static qkv_stack *stack(void)
{
    static qkv_stack s;
    qkv_params *p = qkv_params_new();
    MISUSE_ASSERT(qkv_stack_init(&s, p, "lm", &CFG) == 0 && qkv_params_alloc(p, rng()) == 0);
    return &s;
}

MISUSE(qkv_stack_init, null_s) { FAILS_INT(qkv_stack_init(NULL, params(), "lm", &CFG), "s"); }
MISUSE(qkv_stack_init, null_p)
{
    qkv_stack s;
    FAILS_INT(qkv_stack_init(&s, NULL, "lm", &CFG), "p");
}
MISUSE(qkv_stack_init, null_cfg)
{
    qkv_stack s;
    FAILS_INT(qkv_stack_init(&s, params(), "lm", NULL), "cfg");
}
MISUSE(qkv_stack_init, zero_block_size)
{
    qkv_stack s;
    qkv_stack_config c = CFG;
    c.block_size = 0;
    FAILS_INT(qkv_stack_init(&s, params(), "lm", &c), "block_size 0");
}
MISUSE(qkv_stack_init, prefix_too_long)
{
    qkv_stack s;
    char prefix[QKV_PARAM_NAME_MAX + 1];
    memset(prefix, 'x', QKV_PARAM_NAME_MAX);
    prefix[QKV_PARAM_NAME_MAX] = 0;
    FAILS_INT(qkv_stack_init(&s, qkv_params_new(), prefix, &CFG), "longer than");
}
MISUSE(qkv_stack_free, null) { HARMLESS((qkv_stack_free(NULL), 0)); }
MISUSE(qkv_stack_forward, null_s) { FAILS_NULL(qkv_stack_forward(NULL, ctx(), IDS, 1, 4), "m"); }
MISUSE(qkv_stack_forward, null_ids)
{
    FAILS_NULL(qkv_stack_forward(stack(), ctx(), NULL, 1, 4), "ids");
}
MISUSE(qkv_stack_forward, too_long)
{
    FAILS_NULL(qkv_stack_forward(stack(), ctx(), IDS, 1, 5), "block size 4");
}
MISUSE(qkv_stack_forward, freed)
{
    qkv_stack *s = stack();
    qkv_stack_free(s);
    FAILS_NULL(qkv_stack_forward(s, ctx(), IDS, 1, 4), "no blocks");
}
MISUSE(qkv_stack_loss, null_targets)
{
    FAILS_NULL(qkv_stack_loss(stack(), ctx(), IDS, NULL, 1, 4), "targets");
}
MISUSE(qkv_stack_loss, bad_target)
{
    const int32_t y[4] = {0, 9, 0, 0};
    FAILS_NULL(qkv_stack_loss(stack(), ctx(), IDS, y, 1, 4), "9");
}
MISUSE(qkv_stack_forward_cached, null_cache)
{
    FAILS_NULL(qkv_stack_forward_cached(stack(), ctx(), IDS, 1, 1, NULL), "c");
}
MISUSE(qkv_stack_forward_cached, grad_on)
{
    qkv_stack *s = stack();
    qkv_kv_cache *c = qkv_kv_cache_new(&s->cfg.block, 1, 4);
    qkv_set_grad_enabled(true);
    FAILS_NULL(qkv_stack_forward_cached(s, ctx(), IDS, 1, 1, c), "grad");
}
MISUSE(qkv_stack_lm_new, null) { FAILS_NULL(qkv_stack_lm_new(NULL, true), "s"); }
MISUSE(qkv_stack_lm_new, never_initialised)
{
    qkv_stack s = {0};
    FAILS_NULL(qkv_stack_lm_new(&s, true), "qkv_stack_init");
}
MISUSE(qkv_stack_lm_free, null) { HARMLESS((qkv_stack_lm_free(NULL), 0)); }
MISUSE(qkv_stack_lm_free, not_made_by_lm_new)
{
    qkv_lm lm = {0};
    REFUSES(qkv_stack_lm_free(&lm), "not made by qkv_stack_lm_new");
}
MISUSE(qkv_params_add_under, null_p)
{
    FAILS_NULL(qkv_params_add_under(NULL, "m", "w", QKV_SHAPE(2), QKV_INIT_ZEROS, 0), "p");
}
MISUSE(qkv_params_add_under, null_suffix)
{
    FAILS_NULL(qkv_params_add_under(qkv_params_new(), "m", NULL, QKV_SHAPE(2), QKV_INIT_ZEROS, 0),
               "suffix");
}
MISUSE(qkv_params_add_under, duplicate)
{
    qkv_params *p = qkv_params_new();
    MISUSE_ASSERT(qkv_params_add_under(p, "m", "w", QKV_SHAPE(2), QKV_INIT_ZEROS, 0));
    FAILS_NULL(qkv_params_add_under(p, "m", "w", QKV_SHAPE(2), QKV_INIT_ZEROS, 0), "m.w");
}
