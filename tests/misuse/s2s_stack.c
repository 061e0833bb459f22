/* Misuse cases for qkv/stack.h's encoder-decoder: the stack, its encoded
 * memory, its cached forward and its generation. */
#include "misuse.h"

static const qkv_s2s_config CFG = {
    .vocab_size = 5, .max_src = 3, .max_tgt = 4, .block = {.n_embd = 4, .n_head = 2, .n_layer = 1}};
static const int32_t SRC[3] = {0, 1, 2};
static const int32_t IDS[4] = {0, 1, 2, 3};

/* An encoder-decoder of CFG with its values, living for the case's process. */
static qkv_s2s_stack *stack(void)
{
    static qkv_s2s_stack s;
    qkv_params *p = qkv_params_new();
    MISUSE_ASSERT(qkv_s2s_stack_init(&s, p, "m", &CFG) == 0 && qkv_params_alloc(p, rng()) == 0);
    return &s;
}

MISUSE(qkv_s2s_stack_init, null_s)
{
    FAILS_INT(qkv_s2s_stack_init(NULL, params(), "m", &CFG), "s");
}
MISUSE(qkv_s2s_stack_init, null_p)
{
    qkv_s2s_stack s;
    FAILS_INT(qkv_s2s_stack_init(&s, NULL, "m", &CFG), "p");
}
MISUSE(qkv_s2s_stack_init, null_cfg)
{
    qkv_s2s_stack s;
    FAILS_INT(qkv_s2s_stack_init(&s, params(), "m", NULL), "cfg");
}
MISUSE(qkv_s2s_stack_init, zero_max_tgt)
{
    qkv_s2s_stack s;
    qkv_s2s_config c = CFG;
    c.max_tgt = 0;
    FAILS_INT(qkv_s2s_stack_init(&s, params(), "m", &c), "max_tgt 0");
}
MISUSE(qkv_s2s_stack_init, negative_src_vocab)
{
    qkv_s2s_stack s;
    qkv_s2s_config c = CFG;
    c.src_vocab_size = -1;
    FAILS_INT(qkv_s2s_stack_init(&s, params(), "m", &c), "src_vocab_size -1");
}
MISUSE(qkv_s2s_stack_init, prefix_too_long)
{
    qkv_s2s_stack s;
    char prefix[QKV_PARAM_NAME_MAX + 1];
    memset(prefix, 'x', QKV_PARAM_NAME_MAX);
    prefix[QKV_PARAM_NAME_MAX] = 0;
    FAILS_INT(qkv_s2s_stack_init(&s, qkv_params_new(), prefix, &CFG), "longer than");
}
MISUSE(qkv_s2s_stack_init, twice_in_one_list)
{
    qkv_params *p = qkv_params_new();
    qkv_s2s_stack a, b;
    MISUSE_ASSERT(qkv_s2s_stack_init(&a, p, "m", &CFG) == 0);
    FAILS_INT(qkv_s2s_stack_init(&b, p, "m", &CFG), "m.enc.wte.weight");
}
MISUSE(qkv_s2s_stack_free, null) { HARMLESS((qkv_s2s_stack_free(NULL), 0)); }
MISUSE(qkv_s2s_stack_encode, null_s)
{
    FAILS_NULL(qkv_s2s_stack_encode(NULL, ctx(), SRC, NULL, 1, 3), "m");
}
MISUSE(qkv_s2s_stack_encode, null_src)
{
    FAILS_NULL(qkv_s2s_stack_encode(stack(), ctx(), NULL, NULL, 1, 3), "src");
}
MISUSE(qkv_s2s_stack_encode, too_long)
{
    FAILS_NULL(qkv_s2s_stack_encode(stack(), ctx(), IDS, NULL, 1, 4), "max_src 3");
}
MISUSE(qkv_s2s_stack_encode, freed)
{
    qkv_s2s_stack *s = stack();
    qkv_s2s_stack_free(s);
    FAILS_NULL(qkv_s2s_stack_encode(s, ctx(), SRC, NULL, 1, 3), "no blocks");
}
MISUSE(qkv_s2s_stack_forward, null_ctx)
{
    FAILS_NULL(qkv_s2s_stack_forward(stack(), NULL, SRC, NULL, 3, IDS, 1, 4), "ctx");
}
MISUSE(qkv_s2s_stack_forward, null_ids)
{
    FAILS_NULL(qkv_s2s_stack_forward(stack(), ctx(), SRC, NULL, 3, NULL, 1, 4), "ids");
}
MISUSE(qkv_s2s_stack_forward, zero_rows)
{
    FAILS_NULL(qkv_s2s_stack_forward(stack(), ctx(), SRC, NULL, 3, IDS, 0, 4), "B 0");
}
MISUSE(qkv_s2s_stack_loss, null_targets)
{
    FAILS_NULL(qkv_s2s_stack_loss(stack(), ctx(), SRC, NULL, 3, IDS, NULL, 1, 4), "targets");
}
MISUSE(qkv_s2s_stack_loss, bad_target)
{
    const int32_t y[4] = {0, 9, 0, 0};
    FAILS_NULL(qkv_s2s_stack_loss(stack(), ctx(), SRC, NULL, 3, IDS, y, 1, 4), "9");
}
MISUSE(qkv_s2s_memory_new, null_s) { FAILS_NULL(qkv_s2s_memory_new(NULL, SRC, NULL, 1, 3), "s"); }
MISUSE(qkv_s2s_memory_new, null_src)
{
    FAILS_NULL(qkv_s2s_memory_new(stack(), NULL, NULL, 1, 3), "src");
}
MISUSE(qkv_s2s_memory_new, zero_length)
{
    FAILS_NULL(qkv_s2s_memory_new(stack(), SRC, NULL, 1, 0), "Ts 0");
}
MISUSE(qkv_s2s_memory_new, bad_id)
{
    const int32_t src[3] = {0, 5, 1};
    FAILS_NULL(qkv_s2s_memory_new(stack(), src, NULL, 1, 3), "src[1] is 5");
}
MISUSE(qkv_s2s_memory_free, null) { HARMLESS((qkv_s2s_memory_free(NULL), 0)); }
MISUSE(qkv_s2s_stack_forward_cached, null_mem)
{
    qkv_s2s_stack *s = stack();
    qkv_kv_cache *c = qkv_kv_cache_new(&s->cfg.block, 1, 4);
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_s2s_stack_forward_cached(s, ctx(), NULL, IDS, 1, 1, c), "mem");
}
MISUSE(qkv_s2s_stack_forward_cached, null_cache)
{
    qkv_s2s_stack *s = stack();
    qkv_s2s_memory *mem = qkv_s2s_memory_new(s, SRC, NULL, 1, 3);
    FAILS_NULL(qkv_s2s_stack_forward_cached(s, ctx(), mem, IDS, 1, 1, NULL), "c");
}
MISUSE(qkv_s2s_stack_forward_cached, rows_differ)
{
    qkv_s2s_stack *s = stack();
    qkv_s2s_memory *mem = qkv_s2s_memory_new(s, SRC, NULL, 1, 3);
    qkv_kv_cache *c = qkv_kv_cache_new(&s->cfg.block, 2, 4);
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_s2s_stack_forward_cached(s, ctx(), mem, IDS, 2, 1, c), "mem holds 1");
}
MISUSE(qkv_s2s_stack_forward_cached, memory_of_another_stack)
{
    static qkv_s2s_stack wide;
    qkv_s2s_config cfg = CFG;
    cfg.block.n_layer = 2;
    qkv_params *p = qkv_params_new();
    MISUSE_ASSERT(qkv_s2s_stack_init(&wide, p, "other", &cfg) == 0 &&
                  qkv_params_alloc(p, rng()) == 0);
    qkv_s2s_stack *s = stack();
    qkv_s2s_memory *mem = qkv_s2s_memory_new(s, SRC, NULL, 1, 3);
    qkv_kv_cache *c = qkv_kv_cache_new(&wide.cfg.block, 1, 4);
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_s2s_stack_forward_cached(&wide, ctx(), mem, IDS, 1, 1, c), "mem was encoded",
               "1 layers", "s has 2");
}
MISUSE(qkv_s2s_stack_forward_cached, grad_on)
{
    qkv_s2s_stack *s = stack();
    qkv_s2s_memory *mem = qkv_s2s_memory_new(s, SRC, NULL, 1, 3);
    qkv_kv_cache *c = qkv_kv_cache_new(&s->cfg.block, 1, 4);
    qkv_set_grad_enabled(true);
    FAILS_NULL(qkv_s2s_stack_forward_cached(s, ctx(), mem, IDS, 1, 1, c), "grad");
}
MISUSE(qkv_s2s_stack_lm_new, null)
{
    FAILS_NULL(qkv_s2s_stack_lm_new(NULL, SRC, NULL, 1, 3, true), "s");
}
MISUSE(qkv_s2s_stack_lm_new, never_initialised)
{
    qkv_s2s_stack s = {0};
    FAILS_NULL(qkv_s2s_stack_lm_new(&s, SRC, NULL, 1, 3, true), "qkv_s2s_stack_init");
}
MISUSE(qkv_s2s_stack_lm_new, null_src)
{
    FAILS_NULL(qkv_s2s_stack_lm_new(stack(), NULL, NULL, 1, 3, true), "src");
}
MISUSE(qkv_s2s_stack_lm_free, null) { HARMLESS((qkv_s2s_stack_lm_free(NULL), 0)); }
MISUSE(qkv_s2s_stack_lm_free, not_made_by_lm_new)
{
    qkv_lm lm = {0};
    REFUSES(qkv_s2s_stack_lm_free(&lm), "not made by qkv_s2s_stack_lm_new");
}
MISUSE(qkv_s2s_stack_lm_free, a_decoder_only_lm)
{
    qkv_stack_config cfg = {.vocab_size = 5, .block_size = 4, .block = CFG.block};
    static qkv_stack s;
    qkv_params *p = qkv_params_new();
    MISUSE_ASSERT(qkv_stack_init(&s, p, "lm", &cfg) == 0 && qkv_params_alloc(p, rng()) == 0);
    qkv_lm *lm = qkv_stack_lm_new(&s, true);
    REFUSES(qkv_s2s_stack_lm_free(lm), "not made by qkv_s2s_stack_lm_new");
}
