/* Misuse cases for qkv/trainer.h: training the GPT. */
#include "misuse.h"

MISUSE(qkv_trainer_new, null_model_config)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_trainer_new(NULL, &tc, corpus()), "mc is NULL");
}
MISUSE(qkv_trainer_new, null_train_config)
{
    qkv_gpt_config mc = {
        .vocab_size = corpus()->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    FAILS_NULL(qkv_trainer_new(&mc, NULL, corpus()), "tc is NULL");
}
MISUSE(qkv_trainer_new, null_corpus)
{
    qkv_gpt_config mc = {.vocab_size = 5, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_trainer_new(&mc, &tc, NULL), "corpus is NULL");
}
MISUSE(qkv_trainer_new, nan_lr)
{
    qkv_gpt_config mc = {
        .vocab_size = corpus()->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
    qkv_train_config tc = qkv_train_defaults();
    tc.lr = NAN;
    FAILS_NULL(qkv_trainer_new(&mc, &tc, corpus()), "lr");
}
MISUSE(qkv_trainer_free, null) { HARMLESS((qkv_trainer_free(NULL), 0)); }
MISUSE(qkv_trainer_step, null) { FAILS_INT(qkv_trainer_step(NULL, NULL, NULL), "t is NULL"); }
MISUSE(qkv_trainer_eval, null) { FAILS_NAN(qkv_trainer_eval(NULL, QKV_SPLIT_VAL), "t is NULL"); }
MISUSE(qkv_trainer_eval, split_9)
{
    FAILS_NAN(qkv_trainer_eval(trainer(), (qkv_split)9), "split 9");
}
MISUSE(qkv_trainer_eval, split_negative)
{
    FAILS_NAN(qkv_trainer_eval(trainer(), (qkv_split)-1), "split -1");
}
MISUSE(qkv_trainer_save, null_trainer)
{
    FAILS_INT(qkv_trainer_save(NULL, tmp_path("t.ckpt")), "t is NULL");
}
MISUSE(qkv_trainer_save, null_path)
{
    FAILS_INT(qkv_trainer_save(trainer(), NULL), "path is NULL");
}
MISUSE(qkv_trainer_resume, null_path)
{
    FAILS_NULL(qkv_trainer_resume(NULL, text_path(), 0), "path is NULL");
}
MISUSE(qkv_trainer_resume, null_corpus_path)
{
    FAILS_NULL(qkv_trainer_resume(ckpt_path(), NULL, 0), "corpus_path is NULL");
}
MISUSE(qkv_trainer_resume, negative_iters)
{
    FAILS_NULL(qkv_trainer_resume(ckpt_path(), text_path(), -5), "-5");
}
MISUSE(qkv_gpt_mean_loss, null_model)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(NULL, &trainer()->eval[0], 1, arena(), x, y), "m is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_sampler)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, NULL, 1, arena(), x, y), "s is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_arena)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 1, NULL, x, y),
              "arena is NULL");
}
MISUSE(qkv_gpt_mean_loss, null_x)
{
    int32_t y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 1, arena(), NULL, y),
              "x is NULL");
}
MISUSE(qkv_gpt_mean_loss, zero_iters)
{
    int32_t x[16], y[16];
    FAILS_NAN(qkv_gpt_mean_loss(trainer()->model, &trainer()->eval[0], 0, arena(), x, y),
              "iters 0");
}
MISUSE(qkv_gpt_load, null_path)
{
    qkv_tokenizer v;
    FAILS_NULL(qkv_gpt_load(NULL, &v), "path is NULL");
}
MISUSE(qkv_gpt_load, null_vocab) { FAILS_NULL(qkv_gpt_load(ckpt_path(), NULL), "vocab is NULL"); }
