/* Misuse cases for qkv/gpt.h: the character GPT. */
#include "misuse.h"

MISUSE(qkv_gpt_config_pack, null_config)
{
    uint8_t out[QKV_GPT_CONFIG_BYTES] = {0};
    REFUSES(qkv_gpt_config_pack(NULL, out), "cfg is NULL");
}
MISUSE(qkv_gpt_config_pack, null_out)
{
    REFUSES(qkv_gpt_config_pack(&gpt()->cfg, NULL), "out is NULL");
}
MISUSE(qkv_gpt_config_unpack, null_config)
{
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(&gpt()->cfg, blob);
    FAILS_INT(qkv_gpt_config_unpack(NULL, blob, sizeof blob), "cfg is NULL");
}
MISUSE(qkv_gpt_config_unpack, null_blob)
{
    qkv_gpt_config c;
    FAILS_INT(qkv_gpt_config_unpack(&c, NULL, QKV_GPT_CONFIG_BYTES), "blob is NULL");
}
MISUSE(qkv_gpt_config_unpack, short_blob)
{
    qkv_gpt_config c;
    FAILS_INT(qkv_gpt_config_unpack(&c, (uint8_t[4]){0}, 4), "4 bytes");
}
MISUSE(qkv_gpt_config_check, null) { FAILS_INT(qkv_gpt_config_check(NULL), "cfg is NULL"); }
MISUSE(qkv_gpt_config_check, heads_not_dividing)
{
    qkv_gpt_config c = gpt()->cfg;
    c.n_head = 3;
    FAILS_INT(qkv_gpt_config_check(&c), "n_head 3");
}
MISUSE(qkv_gpt_new, null_config) { FAILS_NULL(qkv_gpt_new(NULL, 1), "cfg is NULL"); }
MISUSE(qkv_gpt_new, rope_odd_head_size)
{
    qkv_gpt_config c = {.vocab_size = 5, .block_size = 4, .n_layer = 1, .n_head = 1, .n_embd = 5,
                        .opts.rope = true};
    FAILS_NULL(qkv_gpt_new(&c, 1), "rope needs an even head size, not 5");
}
MISUSE(qkv_gpt_new, zero_vocab)
{
    qkv_gpt_config c = {.vocab_size = 0, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    FAILS_NULL(qkv_gpt_new(&c, 1), "vocab_size 0");
}
MISUSE(qkv_gpt_free, null) { HARMLESS((qkv_gpt_free(NULL), 0)); }
MISUSE(qkv_gpt_logits, null_model)
{
    FAILS_NULL(qkv_gpt_logits(NULL, ctx(), (int32_t[]){0}, 1, 1, NULL), "m is NULL");
}
MISUSE(qkv_gpt_logits, null_ctx)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), NULL, (int32_t[]){0}, 1, 1, NULL), "ctx is NULL");
}
MISUSE(qkv_gpt_logits, run_without_arena)
{
    qkv_ctx ctx = {0};
    FAILS_NULL(qkv_gpt_logits(gpt(), &ctx, (int32_t[]){0}, 1, 1, NULL), "arena is NULL");
}
MISUSE(qkv_gpt_logits, null_idx)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), ctx(), NULL, 1, 1, NULL), "idx is NULL");
}
MISUSE(qkv_gpt_logits, negative_batch)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), ctx(), (int32_t[]){0}, -1, 1, NULL), "-1");
}
MISUSE(qkv_gpt_logits, too_long)
{
    FAILS_NULL(qkv_gpt_logits(gpt(), ctx(), (int32_t[9]){0}, 1, 9, NULL), "9");
}
MISUSE(qkv_gpt_logits, dropout_without_rng)
{
    qkv_gpt_config c = gpt()->cfg;
    c.dropout = 0.5;
    qkv_gpt *m = qkv_gpt_new(&c, 1);
    MISUSE_ASSERT(m != NULL);
    qkv_ctx ctx = {.arena = arena(), .train = true, .rng = NULL};
    FAILS_NULL(qkv_gpt_logits(m, &ctx, (int32_t[]){0, 1}, 1, 2, NULL), "rng");
    qkv_gpt_free(m);
}
MISUSE(qkv_gpt_loss, null_targets)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), ctx(), (int32_t[]){0}, NULL, 1, 1), "targets is NULL");
}
MISUSE(qkv_gpt_loss, null_model)
{
    FAILS_NULL(qkv_gpt_loss(NULL, ctx(), (int32_t[]){0}, (int32_t[]){0}, 1, 1), "m is NULL");
}
MISUSE(qkv_gpt_loss, null_ctx)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), NULL, (int32_t[]){0}, (int32_t[]){0}, 1, 1), "ctx is NULL");
}
MISUSE(qkv_gpt_loss, bad_target)
{
    FAILS_NULL(qkv_gpt_loss(gpt(), ctx(), (int32_t[]){0}, (int32_t[]){9}, 1, 1), "target 9");
}
MISUSE(qkv_gpt_generate, null_model)
{
    FAILS_INT(qkv_gpt_generate(NULL, (int32_t[]){1}, 1, 2, &OPTS, rng(), true, NULL, NULL),
              "m is NULL");
}
MISUSE(qkv_gpt_generate, null_prompt)
{
    FAILS_INT(qkv_gpt_generate(gpt(), NULL, 1, 2, &OPTS, rng(), true, NULL, NULL),
              "prompt is NULL");
}
MISUSE(qkv_gpt_generate, null_opts)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, NULL, rng(), true, NULL, NULL),
              "opts is NULL");
}
MISUSE(qkv_gpt_generate, null_rng)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, &OPTS, NULL, true, NULL, NULL),
              "rng is NULL");
}
MISUSE(qkv_gpt_generate, empty_prompt)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 0, 2, &OPTS, rng(), true, NULL, NULL), "0");
}
MISUSE(qkv_gpt_generate, negative_temperature)
{
    qkv_sample_opts o = {.temperature = -1, .top_p = 1};
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, 2, &o, rng(), false, NULL, NULL),
              "temperature -1");
}
MISUSE(qkv_gpt_generate, negative_new)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){1}, 1, -3, &OPTS, rng(), true, NULL, NULL), "-3");
}
MISUSE(qkv_gpt_generate, prompt_id_out_of_range)
{
    FAILS_INT(qkv_gpt_generate(gpt(), (int32_t[]){9}, 1, 2, &OPTS, rng(), true, NULL, NULL), "9");
}
MISUSE(qkv_gpt_lm_new, null_model) { FAILS_NULL(qkv_gpt_lm_new(NULL, true), "m is NULL"); }
MISUSE(qkv_gpt_lm_free, null) { HARMLESS((qkv_gpt_lm_free(NULL), 0)); }
MISUSE(qkv_gpt_lm_free, not_made_by_lm_new)
{
    qkv_lm lm = FLAT;
    REFUSES(qkv_gpt_lm_free(&lm), "not made by qkv_gpt_lm_new");
}
MISUSE(qkv_gpt_training_model, null_model)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model(NULL, corpus(), &tm), "m is NULL");
}
MISUSE(qkv_gpt_training_model, null_corpus)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model(gpt(), NULL, &tm), "corpus is NULL");
}
MISUSE(qkv_gpt_training_model, null_out)
{
    FAILS_INT(qkv_gpt_training_model(gpt_run()->model, corpus(), NULL), "out is NULL");
}
MISUSE(qkv_gpt_training_model, another_vocabulary_size)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model(gpt(), corpus(), &tm), "vocabulary is 5");
}
MISUSE(qkv_gpt_mean_loss, null_model)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(NULL, batcher(), 1, arena(), x, y), "m is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_sampler)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(gpt_run()->model, NULL, 1, arena(), x, y), "s is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_arena)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(gpt_run()->model, batcher(), 1, NULL, x, y), "arena is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_x)
{
    int32_t y[16];
    FAILS_NAN(qkv_gpt_mean_loss(gpt_run()->model, batcher(), 1, arena(), NULL, y), "x is NULL");
}
MISUSE(qkv_gpt_mean_loss, zero_iters)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(gpt_run()->model, batcher(), 0, arena(), x, y), "iters 0");
}
MISUSE(qkv_gpt_load, null_path)
{
    qkv_tokenizer v;
    FAILS_NULL(qkv_gpt_load(NULL, &v), "path is NULL");
}
MISUSE(qkv_gpt_load, null_vocab) { FAILS_NULL(qkv_gpt_load(ckpt_path(), NULL), "vocab is NULL"); }
MISUSE(qkv_gpt_logits, past_the_block)
{
    int32_t ids[9] = {0};
    /* The message names the function once, then what is wrong (no inner "gpt:"). */
    FAILS_NULL(qkv_gpt_logits(gpt(), ctx(), ids, 1, 9, NULL),
               "qkv_gpt_logits: 9 positions from 0 exceed the block size 8");
}

/* The GPT's forward passes a record's bad count on as an error. */
MISUSE(qkv_gpt_logits, record_count_negative)
{
    qkv_attn_call slots[1];
    qkv_attn_record rec = {.calls = slots, .cap = 1, .n = -3};
    qkv_ctx c = *ctx();
    c.record = &rec;
    FAILS_NULL(qkv_gpt_logits(gpt(), &c, (int32_t[]){0, 1}, 1, 2, NULL), "ctx->record has n -3");
}
