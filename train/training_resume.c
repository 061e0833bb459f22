/* A run of one's own model resumed in one call (see qkv/training.h): the
 * checkpoint's two phases, the model's rebuild between them. */
#include "qkv/training.h"

#include <string.h>

#include "tensor/check.h"

qkv_training *qkv_training_resume_rebuild(const char *path, const char *kind,
                                          qkv_rebuild_fn rebuild, void *ud)
{
    const char *fn = "qkv_training_resume_rebuild";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "kind", kind) ||
        qkv__null(fn, "rebuild", rebuild))
        return NULL;
    qkv_checkpoint *ck = qkv_checkpoint_open(path, kind);
    if (!ck) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_training_model plug = {0};
    qkv_train_config tc;
    qkv_training *t = NULL;
    if (rebuild(ud, ck, &plug) < 0) {
        qkv__fail_in(fn);
    } else if (plug.config_len > ck->config_len ||
               (plug.config_len && (!plug.config ||
                                    memcmp(plug.config, ck->config, plug.config_len)))) {
        /* The model's blob must be the checkpoint's first bytes, or the run's
         * settings would be read from the wrong place. */
        qkv_set_error("%s: '%s': the rebuilt model's config (%zu bytes) is not the one the "
                      "checkpoint starts with", fn, path, plug.config_len);
    } else if (qkv_training_config_load(&tc, ck, plug.config_len) < 0 ||
               !(t = qkv_training_new(&plug, &tc)) || qkv_training_load(t, ck) < 0) {
        qkv__fail_in(fn);
        qkv_training_free(t);
        t = NULL;
    }
    qkv_checkpoint_close(ck);
    return t;
}
