/* Misuse cases for qkv/nn.h: the transformer modules. */
#include <limits.h>

#include "misuse.h"

static qkv_tensor *btc(int C) { return tensor(QKV_SHAPE(1, 3, C)); }

/* A fresh params list, and an allocation of it. */
static qkv_params *fresh(void) { return qkv_params_new(); }
static void alloc(qkv_params *p) { MISUSE_ASSERT(qkv_params_alloc(p, rng()) == 0); }

MISUSE(qkv_set_record_weights, takes_a_bool_only)
{
    MISUSE_ASSERT(qkv_set_record_weights(false) == true);
    MISUSE_ASSERT(qkv_set_record_weights(true) == false);
}
MISUSE(qkv_linear_init, null_module)
{
    FAILS_INT(qkv_linear_init(NULL, fresh(), "l", 4, 4, true, 0.02f), "m is NULL");
}
MISUSE(qkv_linear_init, null_params)
{
    qkv_linear l;
    FAILS_INT(qkv_linear_init(&l, NULL, "l", 4, 4, true, 0.02f), "p is NULL");
}
MISUSE(qkv_linear_init, zero_in)
{
    qkv_linear l;
    FAILS_INT(qkv_linear_init(&l, fresh(), "l", 0, 4, true, 0.02f), "0");
}
MISUSE(qkv_linear_forward, null_module)
{
    FAILS_NULL(qkv_linear_forward(NULL, ctx(), btc(4)), "m is NULL");
}
MISUSE(qkv_linear_forward, null_ctx)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_linear_forward(&l, NULL, btc(4)), "ctx is NULL");
}
MISUSE(qkv_linear_forward, run_without_arena)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    qkv_ctx ctx = {0};
    FAILS_NULL(qkv_linear_forward(&l, &ctx, btc(4)), "arena is NULL");
}
MISUSE(qkv_linear_forward, before_params_alloc)
{
    qkv_linear l;
    qkv_linear_init(&l, fresh(), "l", 4, 4, true, 0.02f);
    FAILS_NULL(qkv_linear_forward(&l, ctx(), btc(4)), "qkv_params_alloc");
}
MISUSE(qkv_linear_forward, zeroed_module)
{
    qkv_linear l = {0};
    FAILS_NULL(qkv_linear_forward(&l, ctx(), btc(4)), "m");
}
MISUSE(qkv_linear_forward, null_x)
{
    qkv_linear l;
    qkv_params *p = fresh();
    qkv_linear_init(&l, p, "l", 4, 4, true, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_linear_forward(&l, ctx(), NULL), "x is NULL");
}
MISUSE(qkv_embed_init, null_module)
{
    FAILS_INT(qkv_embed_init(NULL, fresh(), "e", 5, 4, 0.02f), "m is NULL");
}
MISUSE(qkv_embed_init, zero_vocab)
{
    qkv_embed e;
    FAILS_INT(qkv_embed_init(&e, fresh(), "e", 0, 4, 0.02f), "0");
}
MISUSE(qkv_embed_forward, null_ids)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, ctx(), NULL, QKV_SHAPE(1, 2)), "ids is NULL");
}
MISUSE(qkv_embed_forward, null_module)
{
    FAILS_NULL(qkv_embed_forward(NULL, ctx(), (int32_t[]){0}, QKV_SHAPE(1)), "m is NULL");
}
MISUSE(qkv_embed_forward, before_params_alloc)
{
    qkv_embed e;
    qkv_embed_init(&e, fresh(), "e", 5, 4, 0.02f);
    FAILS_NULL(qkv_embed_forward(&e, ctx(), (int32_t[]){0}, QKV_SHAPE(1)), "qkv_params_alloc");
}
MISUSE(qkv_embed_forward, null_ctx)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, NULL, (int32_t[]){0}, QKV_SHAPE(1)), "ctx is NULL");
}
MISUSE(qkv_embed_forward, null_shape)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, ctx(), (int32_t[]){0}, 1, NULL), "shape is NULL");
}
MISUSE(qkv_embed_forward, id_out_of_range)
{
    qkv_embed e;
    qkv_params *p = fresh();
    qkv_embed_init(&e, p, "e", 5, 4, 0.02f);
    alloc(p);
    FAILS_NULL(qkv_embed_forward(&e, ctx(), (int32_t[]){7}, QKV_SHAPE(1)), "id 7");
}
MISUSE(qkv_ln_init, null_module)
{
    FAILS_INT(qkv_ln_init(NULL, fresh(), "ln", 4, true), "m is NULL");
}
MISUSE(qkv_rmsnorm_init, null_module)
{
    FAILS_INT(qkv_rmsnorm_init(NULL, fresh(), "rms", 4), "m is NULL");
}
MISUSE(qkv_rmsnorm_init, null_params)
{
    qkv_ln l;
    FAILS_INT(qkv_rmsnorm_init(&l, NULL, "rms", 4), "p is NULL");
}
MISUSE(qkv_rmsnorm_init, zero_dim)
{
    qkv_ln l;
    FAILS_INT(qkv_rmsnorm_init(&l, fresh(), "rms", 0), "extent 0");
}
MISUSE(qkv_ln_init, zero_dim)
{
    qkv_ln l;
    FAILS_INT(qkv_ln_init(&l, fresh(), "ln", 0, true), "0");
}
MISUSE(qkv_ln_forward, null_module)
{
    FAILS_NULL(qkv_ln_forward(NULL, ctx(), btc(4)), "m is NULL");
}
MISUSE(qkv_ln_forward, before_params_alloc)
{
    qkv_ln l;
    qkv_ln_init(&l, fresh(), "ln", 4, true);
    FAILS_NULL(qkv_ln_forward(&l, ctx(), btc(4)), "qkv_params_alloc");
}
MISUSE(qkv_ln_forward, null_ctx)
{
    qkv_ln l;
    qkv_params *p = fresh();
    qkv_ln_init(&l, p, "ln", 4, true);
    alloc(p);
    FAILS_NULL(qkv_ln_forward(&l, NULL, btc(4)), "ctx is NULL");
}
MISUSE(qkv_mlp_init, null_config)
{
    qkv_mlp m;
    FAILS_INT(qkv_mlp_init(&m, fresh(), "mlp", NULL), "cfg is NULL");
}
MISUSE(qkv_mlp_init, null_module)
{
    FAILS_INT(qkv_mlp_init(NULL, fresh(), "mlp", block_config()), "m is NULL");
}
MISUSE(qkv_mlp_forward, null_module)
{
    FAILS_NULL(qkv_mlp_forward(NULL, ctx(), btc(8)), "m is NULL");
}
MISUSE(qkv_mlp_forward, before_params_alloc)
{
    qkv_mlp m;
    qkv_mlp_init(&m, fresh(), "mlp", block_config());
    FAILS_NULL(qkv_mlp_forward(&m, ctx(), btc(8)), "qkv_params_alloc");
}
MISUSE(qkv_mlp_forward, null_ctx)
{
    qkv_mlp m;
    qkv_params *p = fresh();
    qkv_mlp_init(&m, p, "mlp", block_config());
    alloc(p);
    FAILS_NULL(qkv_mlp_forward(&m, NULL, btc(8)), "ctx is NULL");
}
MISUSE(qkv_attn_head_init, null_module)
{
    FAILS_INT(qkv_attn_head_init(NULL, fresh(), "h", 8, 4, true), "m is NULL");
}
MISUSE(qkv_attn_head_init, zero_head_size)
{
    qkv_attn_head h;
    FAILS_INT(qkv_attn_head_init(&h, fresh(), "h", 8, 0, true), "0");
}
MISUSE(qkv_attn_head_forward, null_module)
{
    FAILS_NULL(qkv_attn_head_forward(NULL, ctx(), btc(8), NULL), "m is NULL");
}
MISUSE(qkv_attn_head_forward, before_params_alloc)
{
    qkv_attn_head h;
    qkv_attn_head_init(&h, fresh(), "h", 8, 4, true);
    FAILS_NULL(qkv_attn_head_forward(&h, ctx(), btc(8), NULL), "qkv_params_alloc");
}
MISUSE(qkv_attn_head_forward, null_ctx)
{
    qkv_attn_head h;
    qkv_params *p = fresh();
    qkv_attn_head_init(&h, p, "h", 8, 4, true);
    alloc(p);
    FAILS_NULL(qkv_attn_head_forward(&h, NULL, btc(8), NULL), "ctx is NULL");
}
MISUSE(qkv_attn_head_forward, two_dims)
{
    qkv_attn_head h;
    qkv_params *p = fresh();
    qkv_attn_head_init(&h, p, "h", 8, 4, true);
    alloc(p);
    FAILS_NULL(qkv_attn_head_forward(&h, ctx(), tensor(QKV_SHAPE(3, 8)), NULL), "(3,8)");
}

/* A module of each attention kind, its parameters allocated. */
static qkv_self_attn self_attn(void)
{
    qkv_self_attn m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_self_attn_init(&m, p, "a", block_config(), true) == 0);
    alloc(p);
    return m;
}
static qkv_cross_attn cross_attn(void)
{
    qkv_cross_attn m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_cross_attn_init(&m, p, "c", block_config(), 6) == 0);
    alloc(p);
    return m;
}
static qkv_block block(void)
{
    qkv_block m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_block_init(&m, p, "b", block_config(), true) == 0);
    alloc(p);
    return m;
}
static qkv_cross_block cross_block(void)
{
    qkv_cross_block m;
    qkv_params *p = fresh();
    MISUSE_ASSERT(qkv_cross_block_init(&m, p, "d", block_config(), 6) == 0);
    alloc(p);
    return m;
}

MISUSE(qkv_self_attn_init, null_config)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, fresh(), "a", NULL, true), "cfg is NULL");
}
MISUSE(qkv_self_attn_init, rope_odd_head_size)
{
    qkv_self_attn m;
    qkv_block_config c = {.n_embd = 9, .n_head = 3, .n_layer = 1, .opts.rope = true};
    FAILS_INT(qkv_self_attn_init(&m, fresh(), "a", &c, true), "head size 3 is odd");
}
MISUSE(qkv_self_attn_init, null_params)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, NULL, "a", block_config(), true), "p is NULL");
}
MISUSE(qkv_self_attn_init, null_name)
{
    qkv_self_attn m;
    FAILS_INT(qkv_self_attn_init(&m, fresh(), NULL, block_config(), true), "name is NULL");
}
MISUSE(qkv_self_attn_forward, null_module)
{
    FAILS_NULL(qkv_self_attn_forward(NULL, ctx(), btc(8), NULL, NULL), "m is NULL");
}
MISUSE(qkv_self_attn_forward, null_ctx)
{
    qkv_self_attn m = self_attn();
    FAILS_NULL(qkv_self_attn_forward(&m, NULL, btc(8), NULL, NULL), "ctx is NULL");
}
MISUSE(qkv_self_attn_forward, run_without_arena)
{
    qkv_self_attn m = self_attn();
    qkv_ctx ctx = {0};
    FAILS_NULL(qkv_self_attn_forward(&m, &ctx, btc(8), NULL, NULL), "arena is NULL");
}
MISUSE(qkv_self_attn_forward, null_x)
{
    qkv_self_attn m = self_attn();
    FAILS_NULL(qkv_self_attn_forward(&m, ctx(), NULL, NULL, NULL), "x is NULL");
}
MISUSE(qkv_self_attn_forward, before_params_alloc)
{
    qkv_self_attn m;
    qkv_self_attn_init(&m, fresh(), "a", block_config(), true);
    FAILS_NULL(qkv_self_attn_forward(&m, ctx(), btc(8), NULL, NULL), "qkv_params_alloc");
}
MISUSE(qkv_self_attn_forward, dropout_without_rng)
{
    qkv_self_attn m = self_attn();
    m.dropout = 0.5f;
    qkv_ctx ctx = {.arena = arena(), .train = true, .rng = NULL};
    FAILS_NULL(qkv_self_attn_forward(&m, &ctx, btc(8), NULL, NULL), "rng");
}
MISUSE(qkv_cross_attn_init, null_config)
{
    qkv_cross_attn m;
    FAILS_INT(qkv_cross_attn_init(&m, fresh(), "c", NULL, 6), "cfg is NULL");
}
MISUSE(qkv_cross_attn_init, zero_memory_width)
{
    qkv_cross_attn m;
    FAILS_INT(qkv_cross_attn_init(&m, fresh(), "c", block_config(), 0), "n_mem");
}
MISUSE(qkv_cross_attn_forward, null_memory)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward(&m, ctx(), btc(8), NULL, NULL, NULL), "memory is NULL");
}
MISUSE(qkv_cross_attn_forward, null_module)
{
    FAILS_NULL(qkv_cross_attn_forward(NULL, ctx(), btc(8), btc(6), NULL, NULL), "m is NULL");
}
MISUSE(qkv_cross_attn_forward, null_ctx)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward(&m, NULL, btc(8), btc(6), NULL, NULL), "ctx is NULL");
}
MISUSE(qkv_cross_attn_memory, null_k_out)
{
    qkv_cross_attn m = cross_attn();
    qkv_tensor *v;
    FAILS_INT(qkv_cross_attn_memory(&m, ctx(), btc(6), NULL, &v), "k is NULL");
}
MISUSE(qkv_cross_attn_memory, null_module)
{
    qkv_tensor *k, *v;
    FAILS_INT(qkv_cross_attn_memory(NULL, ctx(), btc(6), &k, &v), "m is NULL");
}
MISUSE(qkv_cross_attn_memory, null_memory)
{
    qkv_cross_attn m = cross_attn();
    qkv_tensor *k, *v;
    FAILS_INT(qkv_cross_attn_memory(&m, ctx(), NULL, &k, &v), "memory is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, null_k)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward_kv(&m, ctx(), btc(8), NULL, btc(8), NULL, NULL), "k is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, null_module)
{
    FAILS_NULL(qkv_cross_attn_forward_kv(NULL, ctx(), btc(8), btc(8), btc(8), NULL, NULL),
               "m is NULL");
}
MISUSE(qkv_cross_attn_forward_kv, mismatched_kv)
{
    qkv_cross_attn m = cross_attn();
    FAILS_NULL(qkv_cross_attn_forward_kv(&m, ctx(), btc(8), btc(8), tensor(QKV_SHAPE(1, 4, 8)),
                                         NULL, NULL),
               "(1,4,8)");
}
MISUSE(qkv_block_init, null_module)
{
    FAILS_INT(qkv_block_init(NULL, fresh(), "b", block_config(), true), "m is NULL");
}
MISUSE(qkv_block_init, null_config)
{
    qkv_block m;
    FAILS_INT(qkv_block_init(&m, fresh(), "b", NULL, true), "cfg is NULL");
}
MISUSE(qkv_block_init, negative_init_std)
{
    qkv_block m;
    qkv_block_config cfg = *block_config();
    cfg.init_std = -1;
    FAILS_INT(qkv_block_init(&m, fresh(), "b", &cfg, true), "init_std -1", "(0 = 0.02)");
}
MISUSE(qkv_block_init, nan_init_std)
{
    qkv_block m;
    qkv_block_config cfg = *block_config();
    cfg.init_std = NAN;
    FAILS_INT(qkv_block_init(&m, fresh(), "b", &cfg, true), "init_std nan");
}
MISUSE(qkv_block_forward, null_module)
{
    FAILS_NULL(qkv_block_forward(NULL, ctx(), btc(8), NULL, NULL), "m is NULL");
}
MISUSE(qkv_block_forward, null_ctx)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward(&m, NULL, btc(8), NULL, NULL), "ctx is NULL");
}
MISUSE(qkv_block_forward, run_without_arena)
{
    qkv_block m = block();
    qkv_ctx ctx = {0};
    FAILS_NULL(qkv_block_forward(&m, &ctx, btc(8), NULL, NULL), "arena is NULL");
}
MISUSE(qkv_block_forward, before_params_alloc)
{
    qkv_block m;
    qkv_block_init(&m, fresh(), "b", block_config(), true);
    FAILS_NULL(qkv_block_forward(&m, ctx(), btc(8), NULL, NULL), "qkv_params_alloc");
}
MISUSE(qkv_block_forward, two_dims)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward(&m, ctx(), tensor(QKV_SHAPE(3, 8)), NULL, NULL), "(3,8)");
}
MISUSE(qkv_cross_block_init, null_module)
{
    FAILS_INT(qkv_cross_block_init(NULL, fresh(), "d", block_config(), 6), "m is NULL");
}
MISUSE(qkv_cross_block_init, null_params)
{
    qkv_cross_block m;
    FAILS_INT(qkv_cross_block_init(&m, NULL, "d", block_config(), 6), "p is NULL");
}
MISUSE(qkv_cross_block_forward, null_memory)
{
    qkv_cross_block m = cross_block();
    FAILS_NULL(qkv_cross_block_forward(&m, ctx(), btc(8), NULL, NULL, NULL, NULL),
               "memory is NULL");
}
MISUSE(qkv_cross_block_forward, null_module)
{
    FAILS_NULL(qkv_cross_block_forward(NULL, ctx(), btc(8), btc(6), NULL, NULL, NULL), "m is NULL");
}
MISUSE(qkv_cross_block_forward, null_ctx)
{
    qkv_cross_block m = cross_block();
    FAILS_NULL(qkv_cross_block_forward(&m, NULL, btc(8), btc(6), NULL, NULL, NULL), "ctx is NULL");
}

static qkv_kv_cache *cache(void)
{
    qkv_kv_cache *c = qkv_kv_cache_new(block_config(), 1, 8);
    MISUSE_ASSERT(c != NULL);
    return c;
}

MISUSE(qkv_kv_cache_new, null_config) { FAILS_NULL(qkv_kv_cache_new(NULL, 1, 8), "cfg is NULL"); }
MISUSE(qkv_kv_cache_new, zero_batch) { FAILS_NULL(qkv_kv_cache_new(block_config(), 0, 8), "0"); }
MISUSE(qkv_kv_cache_new, huge)
{
    qkv_block_config cfg = *block_config();
    cfg.n_layer = 1 << 20;
    FAILS_NULL(qkv_kv_cache_new(&cfg, 1 << 20, 1 << 20), "kv_cache");
}
MISUSE(qkv_kv_cache_new, heads_not_dividing)
{
    qkv_block_config cfg = *block_config();
    cfg.n_head = 3;
    FAILS_NULL(qkv_kv_cache_new(&cfg, 1, 8), "n_head 3");
}
MISUSE(qkv_kv_cache_free, null) { HARMLESS((qkv_kv_cache_free(NULL), 0)); }
MISUSE(qkv_kv_cache_reset, null) { REFUSES(qkv_kv_cache_reset(NULL), "c is NULL"); }
MISUSE(qkv_self_attn_forward_cached, null_cache)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, ctx(), btc(8), NULL, 0), "c is NULL");
}
MISUSE(qkv_self_attn_forward_cached, layer_out_of_range)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, ctx(), btc(8), cache(), 5), "layer 5");
}
MISUSE(qkv_self_attn_forward_cached, negative_layer)
{
    qkv_self_attn m = self_attn();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(&m, ctx(), btc(8), cache(), -1), "layer -1");
}
MISUSE(qkv_self_attn_forward_cached, null_module)
{
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_self_attn_forward_cached(NULL, ctx(), btc(8), cache(), 0), "m is NULL");
}
MISUSE(qkv_block_forward_cached, null_cache)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_block_forward_cached(&m, ctx(), btc(8), NULL, 0), "c is NULL");
}
MISUSE(qkv_block_forward_cached, null_ctx)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_block_forward_cached(&m, NULL, btc(8), cache(), 0), "ctx is NULL");
}
MISUSE(qkv_block_forward_cached, grad_mode_on)
{
    qkv_block m = block();
    FAILS_NULL(qkv_block_forward_cached(&m, ctx(), btc(8), cache(), 0), "grad");
}
MISUSE(qkv_block_forward_cached, cache_full)
{
    qkv_block m = block();
    qkv_set_grad_enabled(false);
    qkv_kv_cache *c = cache(); /* 8 positions */
    MISUSE_ASSERT(qkv_block_forward_cached(&m, ctx(), tensor(QKV_SHAPE(1, 6, 8)), c, 0) != NULL);
    FAILS_NULL(qkv_block_forward_cached(&m, ctx(), tensor(QKV_SHAPE(1, 6, 8)), c, 0), "do not fit");
}
MISUSE(qkv_cross_block_forward_cached, null_k)
{
    qkv_cross_block m = cross_block();
    qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_cross_block_forward_cached(&m, ctx(), btc(8), cache(), 0, NULL, btc(8), NULL),
               "k is NULL");
}
MISUSE(qkv_cross_block_forward_cached, null_module)
{
    qkv_set_grad_enabled(false);
    FAILS_NULL(
        qkv_cross_block_forward_cached(NULL, ctx(), btc(8), cache(), 0, btc(8), btc(8), NULL),
        "m is NULL");
}

/* A record whose count cannot be a slot's index or grow: refused, never written through. */
MISUSE(qkv_self_attn_forward, record_count_out_of_range)
{
    qkv_self_attn m = self_attn();
    qkv_attn_call slots[2];
    qkv_attn_record rec = {.calls = slots, .cap = 2, .n = -3};
    qkv_ctx c = *ctx();
    c.record = &rec;
    FAILS_NULL(qkv_self_attn_forward(&m, &c, btc(8), NULL, NULL), "ctx->record has n -3");
    rec.n = INT_MAX;
    FAILS_NULL(qkv_self_attn_forward(&m, &c, btc(8), NULL, NULL), "n 2147483647");
    MISUSE_ASSERT(rec.n == INT_MAX);
}
