/* qkv/qkv.h — the library in one include: tensors and autograd, the nn
 * modules and the decoder-only stack made of them, training (the run,
 * optimizers, batches, checkpoints), generation, safe file output, the
 * character GPT, and the kernels' vector path, matrix product and timings.
 *
 *     #include <qkv/qkv.h>      // cc prog.c $(pkg-config --cflags --libs qkv)
 *
 * Installed but not included here, because they serve a task of the qkv
 * program's rather than most programs built on the library: qkv/seq2seq.h
 * (the date-normalisation encoder-decoder) and qkv/dates.h (its data).
 * Include them by name. The program's pictures (plots, attention pictures
 * and pages) are not part of the library: cli/viz/.
 */
#ifndef QKV_QKV_H
#define QKV_QKV_H

#include "qkv/arena.h"
#include "qkv/base.h"
#include "qkv/checkpoint.h"
#include "qkv/cpu.h"
#include "qkv/custom.h"
#include "qkv/data.h"
#include "qkv/file.h"
#include "qkv/gemm.h"
#include "qkv/generate.h"
#include "qkv/gradcheck.h"
#include "qkv/gpt.h"
#include "qkv/nn.h"
#include "qkv/ops.h"
#include "qkv/optim.h"
#include "qkv/params.h"
#include "qkv/precision.h"
#include "qkv/profile.h"
#include "qkv/rng.h"
#include "qkv/safetensors.h"
#include "qkv/stack.h"
#include "qkv/tensor.h"
#include "qkv/training.h"
#include "qkv/version.h"

#endif
