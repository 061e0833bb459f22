/* Misuse cases for qkv/seq2seq.h: the encoder-decoder model. */
#include "misuse.h"

MISUSE(qkv_seq2seq_config_pack, null_config)
{
    uint8_t out[QKV_SEQ2SEQ_CONFIG_BYTES];
    REFUSES(qkv_seq2seq_config_pack(NULL, out), "cfg is NULL");
}
MISUSE(qkv_seq2seq_config_pack, null_out)
{
    REFUSES(qkv_seq2seq_config_pack(&s2s()->cfg, NULL), "out is NULL");
}
MISUSE(qkv_seq2seq_config_unpack, null_blob)
{
    qkv_seq2seq_config c;
    FAILS_INT(qkv_seq2seq_config_unpack(&c, NULL, QKV_SEQ2SEQ_CONFIG_BYTES), "blob is NULL");
}
MISUSE(qkv_seq2seq_config_unpack, null_config)
{
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(&s2s()->cfg, blob);
    FAILS_INT(qkv_seq2seq_config_unpack(NULL, blob, sizeof blob), "cfg is NULL");
}
MISUSE(qkv_seq2seq_config_check, null) { FAILS_INT(qkv_seq2seq_config_check(NULL), "cfg is NULL"); }
MISUSE(qkv_seq2seq_config_check, zero_layers)
{
    qkv_seq2seq_config c = s2s()->cfg;
    c.n_layer = 0;
    FAILS_INT(qkv_seq2seq_config_check(&c), "n_layer 0");
}
MISUSE(qkv_seq2seq_new, null_config) { FAILS_NULL(qkv_seq2seq_new(NULL, tok(), 1), "cfg is NULL"); }
MISUSE(qkv_seq2seq_new, null_chars)
{
    FAILS_NULL(qkv_seq2seq_new(&s2s()->cfg, NULL, 1), "chars is NULL");
}
MISUSE(qkv_seq2seq_free, null) { HARMLESS((qkv_seq2seq_free(NULL), 0)); }
MISUSE(qkv_seq2seq_zero_cross, null) { REFUSES(qkv_seq2seq_zero_cross(NULL), "m is NULL"); }
MISUSE(qkv_seq2seq_batch_new, null_model)
{
    FAILS_NULL(qkv_seq2seq_batch_new(NULL, 2), "m is NULL");
}
MISUSE(qkv_seq2seq_batch_new, zero_cap) { FAILS_NULL(qkv_seq2seq_batch_new(s2s(), 0), "0"); }
MISUSE(qkv_seq2seq_batch_free, null) { HARMLESS((qkv_seq2seq_batch_free(NULL), 0)); }
MISUSE(qkv_seq2seq_batch_fill, null_batch)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), NULL, 1, in, NULL), "b is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_inputs)
{
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 1, NULL, NULL), "inputs is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_input_string)
{
    const char *in[2] = {"1.2.2003", NULL};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 2, in, NULL), "inputs[1] is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, null_target_string)
{
    const char *in[1] = {"1.2.2003"}, *out[1] = {NULL};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 1, in, out), "targets[0] is NULL");
}
MISUSE(qkv_seq2seq_batch_fill, too_many)
{
    const char *in[3] = {"a", "b", "c"};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 3, in, NULL), "3");
}
MISUSE(qkv_seq2seq_batch_fill, null_model)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_batch_fill(NULL, s2s_batch(), 1, in, NULL), "m is NULL");
}
MISUSE(qkv_seq2seq_encode, null_src)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), ctx(), NULL, NULL, 1, 2), "src is NULL");
}
MISUSE(qkv_seq2seq_encode, null_model)
{
    FAILS_NULL(qkv_seq2seq_encode(NULL, ctx(), (int32_t[]){3, 4}, NULL, 1, 2), "m is NULL");
}
MISUSE(qkv_seq2seq_encode, null_ctx)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), NULL, (int32_t[]){3, 4}, NULL, 1, 2), "ctx is NULL");
}
MISUSE(qkv_seq2seq_encode, too_long)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), ctx(), (int32_t[64]){3}, NULL, 1, 64), "64");
}
MISUSE(qkv_seq2seq_encode, zero_batch)
{
    FAILS_NULL(qkv_seq2seq_encode(s2s(), ctx(), (int32_t[]){3}, NULL, 0, 1), "0");
}
MISUSE(qkv_seq2seq_decode, null_memory)
{
    FAILS_NULL(qkv_seq2seq_decode(s2s(), ctx(), NULL, NULL, (int32_t[]){1}, 1, 1, NULL),
               "memory is NULL");
}
MISUSE(qkv_seq2seq_decode, null_dec_in)
{
    qkv_tensor *mem = qkv_seq2seq_encode(s2s(), ctx(), (int32_t[]){3, 4}, NULL, 1, 2);
    MISUSE_ASSERT(mem != NULL);
    FAILS_NULL(qkv_seq2seq_decode(s2s(), ctx(), mem, NULL, NULL, 1, 1, NULL), "dec_in is NULL");
}
MISUSE(qkv_seq2seq_decode, null_model)
{
    FAILS_NULL(qkv_seq2seq_decode(NULL, ctx(), tensor(QKV_SHAPE(1, 2, 16)), NULL, (int32_t[]){1}, 1,
                                  1, NULL),
               "m is NULL");
}
MISUSE(qkv_seq2seq_decode, wrong_memory_shape)
{
    FAILS_NULL(qkv_seq2seq_decode(s2s(), ctx(), tensor(QKV_SHAPE(2, 16)), NULL, (int32_t[]){1}, 1,
                                  1, NULL),
               "(2,16)");
}
MISUSE(qkv_seq2seq_loss, null_batch)
{
    FAILS_NULL(qkv_seq2seq_loss(s2s(), ctx(), NULL), "b is NULL");
}
MISUSE(qkv_seq2seq_loss, null_model)
{
    FAILS_NULL(qkv_seq2seq_loss(NULL, ctx(), s2s_batch()), "m is NULL");
}
MISUSE(qkv_seq2seq_loss, null_ctx)
{
    FAILS_NULL(qkv_seq2seq_loss(s2s(), NULL, s2s_batch()), "ctx is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_src)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), NULL, NULL, 1, 2, true, out), "src is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_out)
{
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3, 4}, NULL, 1, 2, true, NULL), "out is NULL");
}
MISUSE(qkv_seq2seq_greedy, null_model)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(NULL, (int32_t[]){3, 4}, NULL, 1, 2, true, out), "m is NULL");
}
MISUSE(qkv_seq2seq_greedy, zero_batch)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3, 4}, NULL, 0, 2, false, out), "0");
}
MISUSE(qkv_seq2seq_greedy, zero_length)
{
    int32_t out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), (int32_t[]){3}, NULL, 1, 0, true, out), "0");
}
MISUSE(qkv_seq2seq_greedy, longer_than_the_model)
{
    static int32_t src[1000], out[64];
    FAILS_INT(qkv_seq2seq_greedy(s2s(), src, NULL, 1, 1000, true, out), "1000");
}
MISUSE(qkv_seq2seq_detokenize, null_row)
{
    char text[64];
    REFUSES(qkv_seq2seq_detokenize(s2s(), NULL, text), "row is NULL");
}
MISUSE(qkv_seq2seq_detokenize, null_text)
{
    REFUSES(qkv_seq2seq_detokenize(s2s(), (int32_t[64]){2}, NULL), "text is NULL");
}
MISUSE(qkv_seq2seq_detokenize, null_model)
{
    char text[64] = "x";
    REFUSES(qkv_seq2seq_detokenize(NULL, (int32_t[64]){2}, text), "m is NULL");
    MISUSE_ASSERT(text[0] == '\0');
}
MISUSE(qkv_seq2seq_detokenize, id_out_of_range)
{
    char text[64];
    int32_t row[64] = {500, 2};
    REFUSES(qkv_seq2seq_detokenize(s2s(), row, text), "500");
}
MISUSE(qkv_seq2seq_translate, null_inputs)
{
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, NULL, outs), "inputs is NULL");
}
MISUSE(qkv_seq2seq_translate, null_outputs)
{
    const char *in[1] = {"1.2.2003"};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, NULL), "outputs is NULL");
}
MISUSE(qkv_seq2seq_translate, null_input_string)
{
    const char *in[1] = {NULL};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, outs), "inputs[0] is NULL");
}
MISUSE(qkv_seq2seq_translate, null_output_buffer)
{
    const char *in[1] = {"1.2.2003"};
    char *outs[1] = {NULL};
    FAILS_INT(qkv_seq2seq_translate(s2s(), 1, in, outs), "outputs[0] is NULL");
}
MISUSE(qkv_seq2seq_translate, negative_n)
{
    const char *in[1] = {"1.2.2003"};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(s2s(), -1, in, outs), "-1");
}
MISUSE(qkv_seq2seq_translate, null_model)
{
    const char *in[1] = {"1.2.2003"};
    char out[64], *outs[1] = {out};
    FAILS_INT(qkv_seq2seq_translate(NULL, 1, in, outs), "m is NULL");
}
MISUSE(qkv_seq2seq_save, null_model)
{
    FAILS_INT(qkv_seq2seq_save(NULL, tmp_path("s.ckpt"), 0), "m is NULL");
}
MISUSE(qkv_seq2seq_save, null_path) { FAILS_INT(qkv_seq2seq_save(s2s(), NULL, 0), "path is NULL"); }
MISUSE(qkv_seq2seq_save, negative_step)
{
    FAILS_INT(qkv_seq2seq_save(s2s(), tmp_path("s.ckpt"), -1), "step -1");
}
MISUSE(qkv_seq2seq_load, null_path) { FAILS_NULL(qkv_seq2seq_load(NULL), "path is NULL"); }
MISUSE(qkv_seq2seq_load, a_gpt_checkpoint) { FAILS_NULL(qkv_seq2seq_load(ckpt_path()), "gpt"); }
MISUSE(qkv_seq2seq_task_find, null) { FAILS_NULL(qkv_seq2seq_task_find(NULL), "name is NULL"); }
MISUSE(qkv_seq2seq_task_find, unknown) { FAILS_NULL(qkv_seq2seq_task_find("poems"), "poems"); }
MISUSE(qkv_seq2seq_config_for, null_task)
{
    qkv_seq2seq_config c;
    REFUSES(c = qkv_seq2seq_config_for(NULL, 1, 2, 16, 0), "task is NULL");
    MISUSE_ASSERT(qkv_seq2seq_config_check(&c) < 0); /* an unusable config, refused later */
}
MISUSE(qkv_seq2seq_accuracy, null_model)
{
    FAILS_NAN(qkv_seq2seq_accuracy(NULL, qkv_seq2seq_task_find("dates"), 2, 1, NULL, NULL),
              "m is NULL");
}
MISUSE(qkv_seq2seq_accuracy, null_task)
{
    FAILS_NAN(qkv_seq2seq_accuracy(s2s(), NULL, 2, 1, NULL, NULL), "task is NULL");
}
MISUSE(qkv_seq2seq_accuracy, zero_pairs)
{
    FAILS_NAN(qkv_seq2seq_accuracy(s2s(), qkv_seq2seq_task_find("dates"), 0, 1, NULL, NULL), "0");
}
MISUSE(qkv_seq2seq_accuracy, task_without_sample)
{
    qkv_seq2seq_task task = *qkv_seq2seq_task_find("dates");
    task.sample = NULL;
    FAILS_NAN(qkv_seq2seq_accuracy(s2s(), &task, 2, 1, NULL, NULL), "task->sample is NULL");
}
MISUSE(qkv_seq2seq_training_model, null_model)
{
    qkv_training_model tm;
    FAILS_INT(qkv_seq2seq_training_model(NULL, qkv_seq2seq_task_find("dates"), &tm), "m is NULL");
}
MISUSE(qkv_seq2seq_training_model, null_task)
{
    qkv_training_model tm;
    FAILS_INT(qkv_seq2seq_training_model(s2s(), NULL, &tm), "task is NULL");
}
MISUSE(qkv_seq2seq_training_model, null_out)
{
    FAILS_INT(qkv_seq2seq_training_model(s2s(), qkv_seq2seq_task_find("dates"), NULL),
              "out is NULL");
}
/* The dates task with another alphabet function: none, one giving nothing,
 * one giving other characters than the model's. */
static qkv_seq2seq_task dates_with(const char *(*alphabet)(void))
{
    qkv_seq2seq_task task = *qkv_seq2seq_task_find("dates");
    task.alphabet = alphabet;
    return task;
}
static const char *no_alphabet(void) { return NULL; }
static const char *digits(void) { return "0123456789"; }
/* s2s()'s side of a run on the dates task with that alphabet function. */
static int on_dates_with(const char *(*alphabet)(void))
{
    qkv_training_model tm;
    qkv_seq2seq_task task = dates_with(alphabet);
    return qkv_seq2seq_training_model(s2s(), &task, &tm);
}
MISUSE(qkv_seq2seq_training_model, task_without_alphabet)
{
    FAILS_INT(on_dates_with(NULL), "task->alphabet is NULL");
}
MISUSE(qkv_seq2seq_training_model, alphabet_returns_null)
{
    FAILS_INT(on_dates_with(no_alphabet), "task->alphabet() returned NULL");
}
MISUSE(qkv_seq2seq_training_model, another_alphabet)
{
    FAILS_INT(on_dates_with(digits), "alphabet is not task dates's");
}
MISUSE(qkv_seq2seq_task_chars, null_task)
{
    qkv_tokenizer chars;
    FAILS_INT(qkv_seq2seq_task_chars(NULL, &chars), "task is NULL");
}
MISUSE(qkv_seq2seq_task_chars, null_chars)
{
    FAILS_INT(qkv_seq2seq_task_chars(qkv_seq2seq_task_find("dates"), NULL), "chars is NULL");
}
MISUSE(qkv_seq2seq_task_chars, alphabet_returns_null)
{
    qkv_tokenizer chars;
    qkv_seq2seq_task task = dates_with(no_alphabet);
    FAILS_INT(qkv_seq2seq_task_chars(&task, &chars), "task->alphabet() returned NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_model)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(NULL, ctx(), "1.2.2003", 0, out), "m is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_input)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), ctx(), NULL, 0, out), "input is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_output)
{
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), ctx(), "1.2.2003", 0, NULL), "output is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, null_ctx)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), NULL, "1.2.2003", 0, out), "ctx is NULL");
}
MISUSE(qkv_seq2seq_cross_weights, layer_out_of_range)
{
    char out[64];
    FAILS_NULL(qkv_seq2seq_cross_weights(s2s(), ctx(), "1.2.2003", 3, out), "layer 3");
}
MISUSE(qkv_seq2seq_batch_fill, input_too_long)
{
    const char *in[1] = {"a date far longer than any input of the dates task can be"};
    FAILS_INT(qkv_seq2seq_batch_fill(s2s(), s2s_batch(), 1, in, NULL),
              "qkv_seq2seq_batch_fill: input 0 \"a date far longer");
}
MISUSE(qkv_seq2seq_encode, past_its_positions)
{
    int32_t src[40] = {0};
    /* The message names the function once, then what is wrong (no inner "seq2seq:"). */
    FAILS_NULL(qkv_seq2seq_encode(s2s(), ctx(), src, NULL, 1, 40),
               "qkv_seq2seq_encode: 1 sequences of 40 positions from 0; the model has");
}
MISUSE(qkv_seq2seq_lm_new, null_model)
{
    FAILS_NULL(qkv_seq2seq_lm_new(NULL, (int32_t[]){3, 4}, NULL, 1, 2, true), "m is NULL");
}
MISUSE(qkv_seq2seq_lm_new, null_src)
{
    FAILS_NULL(qkv_seq2seq_lm_new(s2s(), NULL, NULL, 1, 2, true), "src is NULL");
}
MISUSE(qkv_seq2seq_lm_new, past_its_positions)
{
    int32_t src[40] = {0};
    FAILS_NULL(qkv_seq2seq_lm_new(s2s(), src, NULL, 1, 40, false), "qkv_seq2seq_lm_new",
               "40 positions");
}
MISUSE(qkv_generate_batch, seq2seq_lm_made_for_another_batch)
{
    qkv_lm *lm = qkv_seq2seq_lm_new(s2s(), (int32_t[]){3, 4}, NULL, 1, 2, true);
    if (!lm)
        misuse_fail("qkv_seq2seq_lm_new: %s", qkv_last_error());
    int32_t out[2 * 64];
    FAILS_INT(qkv_generate_batch(lm, 2, (int32_t[]){QKV_SEQ2SEQ_BOS, QKV_SEQ2SEQ_BOS}, 1, 4, &OPTS,
                                 rng(), QKV_SEQ2SEQ_EOS, out),
              "2 rows, but the lm was made for 1 inputs");
    qkv_seq2seq_lm_free(lm);
}
MISUSE(qkv_seq2seq_lm_free, null) { HARMLESS((qkv_seq2seq_lm_free(NULL), 0)); }
MISUSE(qkv_seq2seq_lm_free, not_made_by_lm_new)
{
    qkv_lm lm = FLAT;
    REFUSES(qkv_seq2seq_lm_free(&lm), "not made by qkv_seq2seq_lm_new");
}

/* What the replay is given besides the argument each case gets wrong: a row of
 * padding ids is enough to be refused. */
static int32_t src_row[64];
MISUSE(qkv_seq2seq_replay, null_model)
{
    char out[64];
    FAILS_INT(qkv_seq2seq_replay(NULL, ctx(), src_row, NULL, 4, out), "m is NULL");
}
MISUSE(qkv_seq2seq_replay, null_ctx)
{
    char out[64];
    FAILS_INT(qkv_seq2seq_replay(s2s(), NULL, src_row, NULL, 4, out), "ctx is NULL");
}
MISUSE(qkv_seq2seq_replay, null_src)
{
    char out[64];
    FAILS_INT(qkv_seq2seq_replay(s2s(), ctx(), NULL, NULL, 4, out), "src is NULL");
}
MISUSE(qkv_seq2seq_replay, null_output)
{
    FAILS_INT(qkv_seq2seq_replay(s2s(), ctx(), src_row, NULL, 4, NULL), "output is NULL");
}
MISUSE(qkv_seq2seq_replay, no_arena)
{
    char out[64];
    qkv_ctx c = *ctx();
    c.arena = NULL;
    FAILS_INT(qkv_seq2seq_replay(s2s(), &c, src_row, NULL, 4, out), "arena is NULL");
}
MISUSE(qkv_seq2seq_replay, too_many_positions)
{
    char out[64];
    FAILS_INT(qkv_seq2seq_replay(s2s(), ctx(), src_row, NULL, 64, out), "Ts 64");
}
MISUSE(qkv_seq2seq_replay, no_positions)
{
    char out[64];
    FAILS_INT(qkv_seq2seq_replay(s2s(), ctx(), src_row, NULL, 0, out), "Ts 0");
}

/* A generator that fills its buffers to the end: no NUL anywhere. */
static int no_nul(qkv_rng *rng, bool test, char *input, size_t in_len, char *output,
                  size_t out_len)
{
    (void)rng, (void)test;
    memset(input, '1', in_len);
    memset(output, '1', out_len);
    return 0;
}
/* Training on it is refused at the first step, saying why, never read past the strings. */
MISUSE(qkv_training_step, seq2seq_sample_without_nul)
{
    qkv_seq2seq_task task = *qkv_seq2seq_task_find("dates");
    task.sample = no_nul;
    qkv_training_model tm;
    MISUSE_ASSERT(qkv_seq2seq_training_model(s2s(), &task, &tm) == 0);
    qkv_train_config tc = qkv_train_defaults();
    tc.batch_size = 2;
    qkv_training *t = qkv_training_new(&tm, &tc);
    MISUSE_ASSERT(t != NULL);
    FAILS_INT(qkv_training_step(t, NULL, NULL), "step 0", "task dates",
              "wrote an input with no NUL");
    qkv_training_free(t);
}
