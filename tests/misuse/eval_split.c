/* Misuse cases for the exact evaluation: qkv_split_windows and qkv_eval_split
 * (qkv/training.h), qkv_gpt_eval_split (qkv/gpt.h). */
#include "misuse.h"

static qkv_tensor *no_window(void *ud, const qkv_ctx *ctx, const int32_t *x, const int32_t *y,
                             int T)
{
    (void)ud, (void)ctx, (void)x, (void)y, (void)T;
    return NULL;
}
MISUSE(qkv_split_windows, null_corpus)
{
    FAILS_INT(qkv_split_windows(NULL, QKV_SPLIT_VAL, 8, 0), "c is NULL");
}
MISUSE(qkv_split_windows, zero_window)
{
    FAILS_INT(qkv_split_windows(corpus(), QKV_SPLIT_VAL, 0, 0), "T 0");
}
MISUSE(qkv_split_windows, negative_cap)
{
    FAILS_INT(qkv_split_windows(corpus(), QKV_SPLIT_VAL, 8, -1), "max_tokens -1");
}
MISUSE(qkv_split_windows, bad_split)
{
    FAILS_INT(qkv_split_windows(corpus(), (qkv_split)7, 8, 0), "split 7");
}
MISUSE(qkv_eval_split, null_loss)
{
    qkv_split_loss f;
    FAILS_INT(qkv_eval_split(NULL, NULL, corpus(), QKV_SPLIT_VAL, 8, 0, NULL, &f), "loss is NULL");
}
MISUSE(qkv_eval_split, null_out)
{
    FAILS_INT(qkv_eval_split(no_window, NULL, corpus(), QKV_SPLIT_VAL, 8, 0, NULL, NULL), "out");
}
MISUSE(qkv_eval_split, failing_window)
{
    qkv_split_loss f;
    FAILS_INT(qkv_eval_split(no_window, NULL, corpus(), QKV_SPLIT_VAL, 8, 0, NULL, &f), "window 0");
}
MISUSE(qkv_eval_split, cap_below_a_window)
{
    qkv_split_loss f;
    FAILS_INT(qkv_eval_split(no_window, NULL, corpus(), QKV_SPLIT_VAL, 8, 5, NULL, &f), "too short",
              "max_tokens");
}
MISUSE(qkv_gpt_eval_split, null_model)
{
    qkv_split_loss f;
    FAILS_INT(qkv_gpt_eval_split(NULL, corpus(), QKV_SPLIT_VAL, 0, NULL, &f), "m is NULL");
}
MISUSE(qkv_gpt_eval_split, null_corpus)
{
    qkv_split_loss f;
    FAILS_INT(qkv_gpt_eval_split(gpt_run()->model, NULL, QKV_SPLIT_VAL, 0, NULL, &f), "c is NULL");
}
