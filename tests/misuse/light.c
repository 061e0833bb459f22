/* Misuse cases for the light run of qkv/training.h. */
#include "misuse.h"

/* A loss over params()'s "w": the sum of its squares. */
static qkv_tensor *square_loss(void *ud, const qkv_ctx *ctx)
{
    (void)ud;
    qkv_tensor *w = qkv_params_find(params(), "w")->t;
    return qkv_sum(ctx->arena, qkv_mul(ctx->arena, w, w));
}

static qkv_light_model light(void)
{
    return (qkv_light_model){
        .kind = "sq", .params = params(), .loss = square_loss, .config = "ab", .config_len = 2};
}

MISUSE(qkv_light_new, null_model)
{
    FAILS_NULL(qkv_light_new(NULL, &(qkv_train_config){0}), "m is NULL");
}
MISUSE(qkv_light_new, null_config) { FAILS_NULL(qkv_light_new(&(qkv_light_model){0}, NULL), "tc"); }
MISUSE(qkv_light_new, no_loss)
{
    qkv_light_model m = light();
    m.loss = NULL;
    FAILS_NULL(qkv_light_new(&m, &(qkv_train_config){0}), "m->loss is NULL");
}
MISUSE(qkv_light_new, config_len_without_config)
{
    qkv_light_model m = light();
    m.config = NULL;
    FAILS_NULL(qkv_light_new(&m, &(qkv_train_config){0}), "config_len 2");
}
MISUSE(qkv_light_new, a_stream_without_a_name)
{
    qkv_light_model m = light();
    m.rngs[0] = rng(), m.rngs[1] = rng();
    m.rng_names[0] = "first";
    FAILS_NULL(qkv_light_new(&m, &(qkv_train_config){0}), "rng_names[1] is NULL");
}
MISUSE(qkv_light_new, bad_settings)
{
    qkv_light_model m = light();
    FAILS_NULL(qkv_light_new(&m, &(qkv_train_config){.lr = -1}), "lr -1");
}
MISUSE(qkv_light_resume, null_path)
{
    FAILS_NULL(qkv_light_resume(&(qkv_light_model){0}, NULL), "path");
}
MISUSE(qkv_light_resume, null_model)
{
    FAILS_NULL(qkv_light_resume(NULL, ckpt_path()), "m is NULL");
}
MISUSE(qkv_light_resume, no_file)
{
    qkv_light_model m = light();
    FAILS_NULL(qkv_light_resume(&m, tmp_path("none.ckpt")), "none.ckpt");
}
MISUSE(qkv_light_resume, another_config)
{
    qkv_light_model m = light();
    qkv_training *t = qkv_light_new(&m, &(qkv_train_config){0});
    MISUSE_ASSERT(t && qkv_training_save(t, tmp_path("sq.ckpt")) == 0);
    qkv_training_free(t);
    m.config = "ax";
    FAILS_NULL(qkv_light_resume(&m, tmp_path("sq.ckpt")),
               "config byte 1: 98 in the checkpoint, 120 here");
}
MISUSE(qkv_light_resume, a_gpt_checkpoint)
{
    qkv_light_model m = light();
    m.kind = "gpt";
    FAILS_NULL(qkv_light_resume(&m, ckpt_path()), "holds no light run");
}
