/* Internal to models/seq2seq/: the encoder-decoder's pieces that decoding reuses. Not installed. */
#ifndef QKV_SEQ2SEQ_INTERNAL_H
#define QKV_SEQ2SEQ_INTERNAL_H

#include "qkv/seq2seq.h"
#include "qkv/stack.h"

/* Bytes of one task string buffer (the longest task string the training run and
 * the accuracy check take is one less). */
enum { QKV__TEXT_MAX = 256 };

/* 0 when task can be used by fn: a name, an alphabet function that gives
 * an alphabet, a generator, and strings that fit QKV__TEXT_MAX; else -1
 * with "fn: task->FIELD ..." naming what is missing. (seq2seq_task.c) */
int qkv__seq2seq_check_task(const char *fn, const qkv_seq2seq_task *task);

/* One pair from task's generator into in and out (QKV__TEXT_MAX bytes each):
 * 0, or -1 with a message when the generator fails or leaves either without
 * its NUL (what reads them after would run past the buffer). (task.c) */
int qkv__seq2seq_draw(const qkv_seq2seq_task *task, qkv_rng *rng, bool test, char *in, char *out);

/* 0 when the checkpoint ck (read from path) holds as many values as a model
 * of cfg over its vocabulary has, else -1 naming both counts. It declares
 * that model's parameters without allocating them, so a file whose config
 * claims a huge model is refused before any of it is built. (seq2seq.c) */
int qkv__seq2seq_check_holds(const qkv_checkpoint *ck, const qkv_seq2seq_config *cfg,
                             const char *path);

/* m's modules as the encoder-decoder stack that declared them (a view:
 * the blocks and parameters stay m's). (seq2seq.c) */
qkv_s2s_stack qkv__seq2seq_stack(const qkv_seq2seq *m);

/* qkv_seq2seq_accuracy on `batches` batches of `batch` pairs (one stream
 * from seed), or, with a run, on the batches qkv_training_eval_more allows:
 * its evaluation, which a signal or a deadline can end between batches. */
double qkv__seq2seq_accuracy(const qkv_seq2seq *m, const qkv_seq2seq_task *task, int batch,
                             int batches, uint64_t seed, qkv_seq2seq_miss_fn on_miss, void *ud,
                             qkv_training *run);

#endif
