/* Misuse cases for qkv/checkpoint.h: saving and resuming a run. */
#include "misuse.h"

static qkv_ckpt_model ckpt_model(void) { return (qkv_ckpt_model){.kind = "test"}; }

MISUSE(qkv_checkpoint_save, null_path)
{
    qkv_ckpt_model m = ckpt_model();
    FAILS_INT(qkv_checkpoint_save(NULL, &m, params(), NULL, NULL), "path is NULL");
}
MISUSE(qkv_checkpoint_save, null_model)
{
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), NULL, params(), NULL, NULL), "model is NULL");
}
MISUSE(qkv_checkpoint_save, null_kind)
{
    qkv_ckpt_model m = {.kind = NULL};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "kind");
}
MISUSE(qkv_checkpoint_save, null_params)
{
    qkv_ckpt_model m = ckpt_model();
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, NULL, NULL, NULL), "p is NULL");
}
MISUSE(qkv_checkpoint_save, config_len_without_config)
{
    qkv_ckpt_model m = {.kind = "test", .config = NULL, .config_len = 100};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "config");
}
MISUSE(qkv_checkpoint_save, vocab_size_negative)
{
    qkv_tokenizer v = *tok();
    v.size = -1;
    qkv_ckpt_model m = {.kind = "test", .vocab = &v};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "model->vocab",
              "-1 bytes");
}
MISUSE(qkv_checkpoint_save, rngs_null)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = 2, .rngs = NULL};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "rngs");
}
MISUSE(qkv_checkpoint_save, rng_entry_null)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = 1, .rngs = (qkv_rng *const[]){NULL}};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "rngs[0]");
}
MISUSE(qkv_checkpoint_save, negative_rngs)
{
    qkv_ckpt_model m = ckpt_model();
    qkv_ckpt_progress prog = {.step = 1, .n_rngs = -1};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, &prog), "-1");
}
MISUSE(qkv_checkpoint_save, kind_too_long)
{
    qkv_ckpt_model m = {.kind = "a-model-kind-much-longer-than-thirty-one-characters"};
    FAILS_INT(qkv_checkpoint_save(tmp_path("c"), &m, params(), NULL, NULL), "kind");
}
MISUSE(qkv_checkpoint_open, null_path)
{
    FAILS_NULL(qkv_checkpoint_open(NULL, NULL), "path is NULL");
}
MISUSE(qkv_checkpoint_open, null_path_names_no_null_string)
{
    FAILS_NULL(qkv_checkpoint_open(NULL, "gpt"), "path is NULL");
    MISUSE_ASSERT(!strstr(qkv_last_error(), "(null)"));
}
MISUSE(qkv_checkpoint_open, not_a_checkpoint)
{
    FAILS_NULL(qkv_checkpoint_open(text_path(), NULL), "text.txt");
}
MISUSE(qkv_checkpoint_open, kind_not_matching)
{
    FAILS_NULL(qkv_checkpoint_open(ckpt_path(), "seq2seq"), "gpt");
}
MISUSE(qkv_checkpoint_open_bytes, null_bytes)
{
    FAILS_NULL(qkv_checkpoint_open_bytes(NULL, 100, "x", NULL), "bytes is NULL");
}
MISUSE(qkv_checkpoint_open_bytes, null_name)
{
    FAILS_NULL(qkv_checkpoint_open_bytes("QKVCKPT", 8, NULL, NULL), "truncated");
    MISUSE_ASSERT(!strstr(qkv_last_error(), "(null)"));
}
MISUSE(qkv_checkpoint_open_bytes, huge_len)
{
    FAILS_NULL(qkv_checkpoint_open_bytes("", SIZE_MAX, "x", NULL), "too large");
}
MISUSE(qkv_checkpoint_load, null_checkpoint)
{
    FAILS_INT(qkv_checkpoint_load(NULL, params(), NULL, NULL), "ck is NULL");
}
MISUSE(qkv_checkpoint_load, null_params)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_checkpoint_load(ck, NULL, NULL, NULL), "p is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_checkpoint_load, progress_rngs_null)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    qkv_ckpt_progress prog = {.n_rngs = ck->n_rngs, .rngs = NULL};
    FAILS_INT(qkv_checkpoint_load(ck, gpt_run()->model->params, NULL, &prog), "rngs");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_checkpoint_close, null) { HARMLESS((qkv_checkpoint_close(NULL), 0)); }
MISUSE(qkv_crc32, null_data) { FAILS_AS(0, qkv_crc32(0, NULL, 5), "data is NULL"); }
MISUSE(qkv_crc32, null_data_empty) { MISUSE_ASSERT(qkv_crc32(7, NULL, 0) == 7); }
MISUSE(qkv_checkpoint_precision, null) { FAILS_INT(qkv_checkpoint_precision(NULL), "ck is NULL"); }
MISUSE(qkv_checkpoint_precision, fp32_file_says_fp32)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL && qkv_checkpoint_precision(ck) == QKV_PRECISION_FP32);
    qkv_checkpoint_close(ck);
}
