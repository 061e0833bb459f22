/* The tasks an encoder-decoder can be trained on, and exact-match accuracy on
 * a task's held-out pairs (see qkv/seq2seq.h). */
#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "qkv/dates.h"
#include "internal.h"

static const qkv_seq2seq_task tasks[] = {
    {"dates", qkv_dates_vocab, QKV_DATES_INPUT_MAX, QKV_DATES_OUTPUT_LEN, qkv_dates_sample_split},
};

const qkv_seq2seq_task *qkv_seq2seq_task_find(const char *name)
{
    if (qkv__null("qkv_seq2seq_task_find", "name", name))
        return NULL;
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
        if (strcmp(name, tasks[i].name) == 0)
            return &tasks[i];
    qkv_set_error("qkv_seq2seq_task_find: unknown task '%s' (the tasks: dates)", name);
    return NULL;
}

qkv_seq2seq_config qkv_seq2seq_config_for(const qkv_seq2seq_task *task, int n_layer, int n_head,
                                          int n_embd, double dropout)
{
    if (qkv__null("qkv_seq2seq_config_for", "task", task))
        return (qkv_seq2seq_config){0}; /* every size 0: qkv_seq2seq_config_check refuses it */
    return (qkv_seq2seq_config){.max_src = task->max_input, .max_tgt = task->max_output + 1,
                                .n_layer = n_layer, .n_head = n_head, .n_embd = n_embd,
                                .dropout = dropout};
}

int qkv_seq2seq_task_chars(const qkv_seq2seq_task *task, qkv_tokenizer *chars)
{
    const char *fn = "qkv_seq2seq_task_chars";
    if (qkv__seq2seq_check_task(fn, task) < 0 || qkv__null(fn, "chars", chars))
        return -1;
    const char *alphabet = task->alphabet();
    qkv_tokenizer_build(chars, alphabet, strlen(alphabet));
    return 0;
}

int qkv__seq2seq_check_task(const char *fn, const qkv_seq2seq_task *task)
{
    if (qkv__null(fn, "task", task) || qkv__null(fn, "task->name", task->name) ||
        qkv__null(fn, "task->alphabet", task->alphabet) ||
        qkv__null(fn, "task->sample", task->sample))
        return -1;
    if (!task->alphabet())
        return qkv_set_error("%s: task %s: task->alphabet() returned NULL", fn, task->name);
    if (task->max_input < 1 || task->max_input >= QKV__TEXT_MAX || task->max_output < 1 ||
        task->max_output >= QKV__TEXT_MAX)
        return qkv_set_error("%s: task %s: task->max_input %d and task->max_output %d must be "
                             "in [1, %d]",
                             fn, task->name, task->max_input, task->max_output, QKV__TEXT_MAX - 1);
    return 0;
}

int qkv__seq2seq_draw(const qkv_seq2seq_task *task, qkv_rng *rng, bool test, char *in, char *out)
{
    if (task->sample(rng, test, in, QKV__TEXT_MAX, out, QKV__TEXT_MAX) < 0)
        return -1;
    bool in_ok = memchr(in, 0, QKV__TEXT_MAX) != NULL;
    if (!in_ok || !memchr(out, 0, QKV__TEXT_MAX))
        return qkv_set_error("task %s: task->sample wrote an %s with no NUL in its %d bytes "
                             "(a string must end in one)", task->name, in_ok ? "output" : "input",
                             QKV__TEXT_MAX);
    return 0;
}

/* Pairs drawn and decoded at once by qkv_seq2seq_accuracy. */
enum { CHUNK = 100 };

double qkv_seq2seq_accuracy(const qkv_seq2seq *m, const qkv_seq2seq_task *task, int n,
                            uint64_t seed, qkv_seq2seq_miss_fn on_miss, void *ud)
{
    return qkv__seq2seq_accuracy(m, task, n, 1, seed, on_miss, ud, NULL);
}

double qkv__seq2seq_accuracy(const qkv_seq2seq *m, const qkv_seq2seq_task *task, int batch,
                             int batches, uint64_t seed, qkv_seq2seq_miss_fn on_miss, void *ud,
                             qkv_training *run)
{
    const char *fn = "qkv_seq2seq_accuracy";
    if (qkv__null(fn, "m", m) || qkv__seq2seq_check_task(fn, task) < 0)
        return NAN;
    int n = batch;
    if (n < 1 || m->cfg.max_tgt >= QKV__TEXT_MAX) {
        qkv_set_error("%s: %d pairs, or strings longer than %d characters", fn, n,
                      QKV__TEXT_MAX - 1);
        return NAN;
    }
    /* One buffer: CHUNK inputs, CHUNK expected outputs, CHUNK answers. */
    char *text = qkv_alloc(3 * (size_t)CHUNK * QKV__TEXT_MAX);
    if (!text)
        return NAN;
    const char *in[CHUNK];
    char *expected[CHUNK], *got[CHUNK];
    for (int i = 0; i < CHUNK; i++) {
        in[i] = text + (size_t)i * QKV__TEXT_MAX;
        expected[i] = text + (size_t)(CHUNK + i) * QKV__TEXT_MAX;
        got[i] = text + (size_t)(2 * CHUNK + i) * QKV__TEXT_MAX;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    int64_t right = 0;
    int rc = 0, b = 0;
    for (; rc == 0 && (run ? qkv_training_eval_more(run, b) : b < batches); b++)
        for (int i = 0; rc == 0 && i < n; i += CHUNK) {
            int nb = n - i < CHUNK ? n - i : CHUNK;
            for (int j = 0; rc == 0 && j < nb; j++)
                if (qkv__seq2seq_draw(task, &rng, true, (char *)in[j], expected[j]) < 0)
                    rc = -1;
            if (rc == 0)
                rc = qkv_seq2seq_translate(m, nb, in, got);
            for (int j = 0; rc == 0 && j < nb; j++) {
                bool ok = strcmp(expected[j], got[j]) == 0;
                right += ok;
                if (!ok && on_miss)
                    on_miss(in[j], expected[j], got[j], ud);
            }
        }
    qkv_free(text);
    if (rc < 0)
        qkv__fail_in(fn);
    return rc == 0 ? (double)right / ((double)b * n) : NAN;
}
