/* Internal: phase one of resuming a saved run, the part every model's
 * resume shares (training.c). Not installed. */
#ifndef QKV_TRAIN_RESUME_H
#define QKV_TRAIN_RESUME_H

#include "qkv/training.h"

/* For fn, the public function resuming a model of kind from the checkpoint
 * at path: the checkpoint (checked to hold that kind), and into tc the run's
 * settings stored after the model's first model_bytes bytes of its config
 * blob, with iters replacing the saved run length when > 0 (0 keeps it).
 * The model then checks and rebuilds itself from ck, makes its run with tc
 * and calls qkv_training_load; the caller closes ck. NULL with a message
 * starting with fn on failure (a negative iters among them). */
qkv_checkpoint *qkv__training_resume_open(const char *fn, const char *path, const char *kind,
                                          size_t model_bytes, int iters, qkv_train_config *tc);

#endif
