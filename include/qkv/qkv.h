/* qkv/qkv.h — everything qkv offers, in one include.
 *
 *     #include <qkv/qkv.h>      // cc prog.c $(pkg-config --cflags --libs qkv)
 */
#ifndef QKV_QKV_H
#define QKV_QKV_H

#include "qkv/arena.h"
#include "qkv/base.h"
#include "qkv/checkpoint.h"
#include "qkv/data.h"
#include "qkv/dates.h"
#include "qkv/file.h"
#include "qkv/generate.h"
#include "qkv/gpt.h"
#include "qkv/nn.h"
#include "qkv/ops.h"
#include "qkv/optim.h"
#include "qkv/params.h"
#include "qkv/rng.h"
#include "qkv/seq2seq.h"
#include "qkv/viz.h"
#include "qkv/tensor.h"
#include "qkv/trainer.h"
#include "qkv/training.h"

#endif
