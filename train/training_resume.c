/* A run of one's own model resumed in one call (see qkv/training.h): the
 * model rebuilt from the checkpoint, then qkv_training_resume. */
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
    qkv_clear_error(); /* so that a rebuild failing without a message is told apart */
    int rc = rebuild(ud, ck, &plug);
    if (rc < 0 && !qkv_last_error()[0])
        qkv_set_error("the rebuild callback returned %d and left no message", rc);
    if (rc == 0 && (plug.config_len > ck->config_len ||
                    (plug.config_len &&
                     (!plug.config || memcmp(plug.config, ck->config, plug.config_len))))) {
        /* The model's blob must be the checkpoint's first bytes, or the run's
         * settings would be read from the wrong place. */
        rc = qkv_set_error("%s: '%s': the rebuilt model's config (%zu bytes) is not the one the "
                           "checkpoint starts with", fn, path, plug.config_len);
    }
    /* The rest is any resume's: the saved settings, the run, its state. ck
     * stays open until then: what rebuild filled in may point into it
     * (plug.config = ck->config, plug.kind = ck->kind). */
    qkv_training *t = rc < 0 ? NULL : qkv_training_resume(&plug, path, 0);
    qkv_checkpoint_close(ck);
    if (!t)
        qkv__fail_in(fn);
    return t;
}
