/* The tests' training runs (see runs.h). */
#include "runs.h"

#include <stdlib.h>

/* A test_run to fill, or NULL with a message for fn. */
static test_run *fresh(const char *fn)
{
    test_run *r = calloc(1, sizeof *r);
    if (!r)
        qkv_set_error("%s: out of memory", fn);
    return r;
}

/* r with its run, when its model and tm could be made (ok): a new one with
 * settings tc, or with path the one saved there (iters as for
 * qkv_training_resume). NULL, r freed and the message kept, on failure. */
static test_run *with_run(test_run *r, bool ok, const qkv_training_model *tm,
                          const qkv_train_config *tc, const char *path, int iters)
{
    if (r && ok)
        r->run = path ? qkv_training_resume(tm, path, iters) : qkv_training_new(tm, tc);
    if (r && r->run)
        return r;
    test_run_free(r);
    return NULL;
}

test_run *gpt_run_new(const qkv_gpt_config *mc, const qkv_train_config *tc,
                      const qkv_corpus *corpus)
{
    test_run *r = fresh("gpt_run_new");
    qkv_training_model tm;
    bool ok = r && (r->model = qkv_gpt_new(mc, tc->seed)) &&
              qkv_gpt_training_model(r->model, corpus, &tm) == 0;
    return with_run(r, ok, &tm, tc, NULL, 0);
}

test_run *gpt_run_resume(const char *path, const char *text_path, int iters)
{
    test_run *r = fresh("gpt_run_resume");
    qkv_tokenizer vocab;
    qkv_training_model tm;
    bool ok = r && (r->model = qkv_gpt_load(path, &vocab)) &&
              (r->text = qkv_corpus_load(text_path, &vocab)) &&
              qkv_gpt_training_model(r->model, r->text, &tm) == 0;
    return with_run(r, ok, &tm, NULL, path, iters);
}

test_run *s2s_run_new(const qkv_seq2seq_config *mc, const qkv_train_config *tc,
                      const qkv_seq2seq_task *task)
{
    test_run *r = fresh("s2s_run_new");
    qkv_tokenizer chars;
    qkv_training_model tm;
    bool ok = r && qkv_seq2seq_task_chars(task, &chars) == 0 &&
              (r->s2s = qkv_seq2seq_new(mc, &chars, tc->seed)) &&
              qkv_seq2seq_training_model(r->s2s, task, &tm) == 0;
    return with_run(r, ok, &tm, tc, NULL, 0);
}

test_run *s2s_run_resume(const char *path, const qkv_seq2seq_task *task, int iters)
{
    test_run *r = fresh("s2s_run_resume");
    qkv_training_model tm;
    bool ok = r && (r->s2s = qkv_seq2seq_load(path)) &&
              qkv_seq2seq_training_model(r->s2s, task, &tm) == 0;
    return with_run(r, ok, &tm, NULL, path, iters);
}

void test_run_free(test_run *r)
{
    if (!r)
        return;
    qkv_training_free(r->run);
    qkv_gpt_free(r->model);
    qkv_seq2seq_free(r->s2s);
    qkv_corpus_free(r->text);
    free(r);
}
