/* The tests' training runs of the two models, made and resumed the way a
 * program does it through the public API: the model, its data, its
 * qkv_training_model (qkv_gpt_training_model, qkv_seq2seq_training_model),
 * then qkv_training_new or qkv_training_resume. */
#ifndef QKV_TEST_RUNS_H
#define QKV_TEST_RUNS_H

#include "qkv/qkv.h"
#include "qkv/seq2seq.h"

/* A run and what it trains. */
typedef struct test_run {
    qkv_gpt *model;     /* the GPT, or NULL */
    qkv_seq2seq *s2s;   /* the encoder-decoder, or NULL */
    qkv_corpus *text;   /* a text freed with the run (gpt_run_resume's), or NULL */
    qkv_training *run;  /* the run */
} test_run;

/* A run of a new GPT of config mc (seeded with tc->seed) on corpus, which
 * stays the caller's; NULL with a message on failure. */
test_run *gpt_run_new(const qkv_gpt_config *mc, const qkv_train_config *tc,
                      const qkv_corpus *corpus);

/* The GPT run saved at path continued on text_path's text (iters as for
 * qkv_training_resume); NULL with a message on failure. */
test_run *gpt_run_resume(const char *path, const char *text_path, int iters);

/* A run of a new encoder-decoder of config mc over task's alphabet (seeded
 * with tc->seed) on task; NULL with a message on failure. */
test_run *s2s_run_new(const qkv_seq2seq_config *mc, const qkv_train_config *tc,
                      const qkv_seq2seq_task *task);

/* The encoder-decoder's run saved at path continued on task; NULL with a
 * message on failure. */
test_run *s2s_run_resume(const char *path, const qkv_seq2seq_task *task, int iters);

/* Free the run, its model and the text it loaded (NULL is fine). */
void test_run_free(test_run *r);

#endif
