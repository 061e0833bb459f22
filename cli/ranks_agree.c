/* The ranks' two meetings before a run (see ranks_agree.h). */
#include "ranks_agree.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "model_options.h"
#include "qkv/file.h"
#include "qkv/precision.h"

/* describe's terms: 26, one per model option, and room for two more. */
enum { TERMS_MAX = 29 + QKV_N_MODEL_OPTIONS, VALUE_MAX = 64, MESSAGE_MAX = 1024 };

/* Where a rank stands when it reports. */
enum { HERE, LEFT, FAILED };

/* What a rank brings to a meeting: the same size on every rank, so one
 * gather exchanges them whichever meeting a rank is at. */
typedef struct report {
    int32_t where;                    /* HERE, LEFT (it ended before ranks_meet), or
                                         FAILED (ranks_agree: it could not build its run) */
    int32_t status;                   /* LEFT: its exit status */
    char command[32];                 /* LEFT: the command it ran ("train", "sample", ...) */
    char message[MESSAGE_MAX];        /* LEFT or FAILED: why, or "" */
    char value[TERMS_MAX][VALUE_MAX]; /* ranks_agree: the run's terms as text (see describe) */
} report;

/* Whether this rank has taken part in the first meeting (from ranks_meet or ranks_leave). */
static bool met;

/* The terms' names, which describe sets in the same order on every rank;
 * those from n_given on follow from the ones before. */
static const char *names[TERMS_MAX];
static int n_terms, n_given;

/* Every rank's report, in rank order (the caller frees it). When the ranks
 * cannot even exchange reports, none can trust the others to agree: the job
 * ends, after removing lock (the --out lock this rank may hold, or NULL).
 * Nothing has been trained yet, so nothing is lost. */
static report *gather(const report *mine, const char *lock)
{
    report *all = malloc((size_t)dist_size() * sizeof *all);
    if (!all || dist_gather(mine, all, sizeof *mine) < 0) {
        fprintf(stderr, "qkv: rank %d cannot reach the other ranks: %s\n", dist_rank(),
                all ? qkv_last_error() : "out of memory");
        qkv_output_unlock(lock);
        dist_abort(1);
    }
    return all;
}

int ranks_meet(const char *prog)
{
    met = true;
    if (dist_size() == 1)
        return 0;
    report mine = {.where = HERE};
    report *all = gather(&mine, NULL);
    int speaker = dist_size(), rc = 0; /* the first rank here speaks */
    for (int r = dist_size() - 1; r >= 0; r--)
        if (all[r].where == HERE)
            speaker = r;
    for (int r = 0; r < dist_size(); r++) {
        const report *a = &all[r];
        if (a->where != LEFT)
            continue;
        rc = -1;
        if (dist_rank() == speaker)
            fprintf(stderr, "%s: rank %d did not join the run: `qkv%s%s` ended with status "
                    "%d%s%s\n", prog, r, a->command[0] ? " " : "", a->command, (int)a->status,
                    a->message[0] ? ": " : "", a->message);
    }
    free(all);
    return rc;
}

void ranks_leave(const char *command, int status)
{
    if (met || dist_size() == 1)
        return;
    met = true;
    report mine = {.where = LEFT, .status = status};
    snprintf(mine.command, sizeof mine.command, "%s", command);
    if (status != 0)
        snprintf(mine.message, sizeof mine.message, "%s", qkv_last_error());
    free(gather(&mine, NULL)); /* those still here say it; this rank has said its own */
}

/* Add a term to r: its name and its value, formatted. */
static void term(report *r, const char *what, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void term(report *r, const char *what, const char *fmt, ...)
{
    assert(n_terms < TERMS_MAX); /* describe adds a fixed list: TERMS_MAX holds it */
    names[n_terms] = what;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->value[n_terms++], VALUE_MAX, fmt, ap);
    va_end(ap);
}

/* A real option's term, "--lr 0.002": exact (so only equal values compare
 * equal), in as few digits as give the value back. */
static void term_real(report *r, const char *what, const char *flag, double v)
{
    char text[40];
    snprintf(text, sizeof text, "%.15g", v);
    if (strtod(text, NULL) != v)
        snprintf(text, sizeof text, "%.17g", v);
    term(r, what, "%s %s", flag, text);
}

/* A CRC of everything a step changes: the weights, AdamW's moments and
 * count, every random stream. Two ranks with the same one start alike. */
static uint32_t state_crc(const qkv_training *run)
{
    const qkv_params *p = run->model.params;
    const qkv_optim *opt = run->opt;
    uint32_t crc = qkv_crc32(0, p->data, p->total * sizeof *p->data);
    if (opt->m)
        crc = qkv_crc32(crc, opt->m, opt->n * sizeof *opt->m);
    if (opt->v)
        crc = qkv_crc32(crc, opt->v, opt->n * sizeof *opt->v);
    crc = qkv_crc32(crc, &opt->step, sizeof opt->step);
    for (int i = 0; i < 1 + run->model.n_rngs; i++)
        crc = qkv_crc32(crc, run->rngs[i]->s, sizeof run->rngs[i]->s);
    return crc;
}

/* Every term of the run of model on text that must be the same on every rank,
 * into r: what it trains on, the model, the schedule, the seed, where it
 * starts, then (following from those) the parameters and their state. */
static void describe(report *r, const qkv_training *run, const qkv_gpt *model,
                     const qkv_corpus *text, const run_options *o)
{
    n_terms = 0;
    /* A BPE model's tokenizer follows the model's 32 bytes in the run's config
     * blob: each rank trained its own, and all must be one, merge for merge. */
    const qkv_training_model *tm = &run->model;
    size_t tail = tm->config_len > QKV_GPT_CONFIG_BYTES ? tm->config_len - QKV_GPT_CONFIG_BYTES : 0;
    if (tail)
        term(r, "tokenizer", "BPE of %d tokens, CRC %08" PRIx32, model->cfg.vocab_size,
             qkv_crc32(0, (const uint8_t *)tm->config + QKV_GPT_CONFIG_BYTES, tail));
    else
        term(r, "tokenizer", "characters");
    const qkv_tokenizer *v = &text->tok;
    term(r, "vocabulary", "%d symbols, CRC %08" PRIx32, v->size,
         qkv_crc32(0, v->byte, (size_t)v->size));
    term(r, "training text", "%zu characters, CRC %08" PRIx32, text->len,
         qkv_crc32(0, text->ids, text->len * sizeof *text->ids));
    const qkv_gpt_config *m = &model->cfg;
    term(r, "context length", "--block %d", m->block_size);
    term(r, "depth", "--layers %d", m->n_layer);
    term(r, "attention heads", "--heads %d", m->n_head);
    term(r, "model width", "--embd %d", m->n_embd);
    term_real(r, "dropout", "--dropout", m->dropout);
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        term(r, model_option_flag(i), "%s", model_option_word(&m->opts, i));
    const qkv_train_config *c = &run->cfg;
    term(r, "run length", "--iters %d", c->iters);
    term(r, "global batch", "--batch %d", c->batch_size);
    term(r, "micro-batches per step", "--grad-accum %d", c->grad_accum > 1 ? c->grad_accum : 1);
    term_real(r, "learning rate", "--lr", c->lr);
    term_real(r, "final learning rate", "--min-lr", c->min_lr);
    term(r, "warmup", "--warmup %d", c->warmup);
    term_real(r, "decay", "--wsd", c->wsd_decay);
    term(r, "optimizer", "--optim %s", run->opt->cfg.kind == QKV_OPTIM_MUON ? "muon" : "adamw");
    term_real(r, "weight decay", "--weight-decay", c->weight_decay);
    term_real(r, "gradient clip", "--grad-clip", c->grad_clip);
    term(r, "evaluation size", "--eval-iters %d", c->eval_iters);
    term(r, "seed", "--seed %" PRIu64, c->seed);
    term(r, "evaluation interval", "--eval-every %d", o->eval_every);
    if (o->budget > 0)
        term_real(r, "time budget", "--time", o->budget);
    else
        term(r, "time budget", "no --time");
    term(r, "starting step", "step %" PRId64 ", %s", run->step,
         o->resume ? "resumed" : "a new run");
    term(r, "precision", "%s", sizeof(qkv_real) == sizeof(double) ? "double" : "float");
    term(r, "products' precision", "--precision %s", qkv_precision_name(qkv_precision_active()));
    n_given = n_terms;
    term(r, "parameter count", "%zu", model->params->total);
    term(r, "weights and optimizer state", "CRC %08" PRIx32, state_crc(run));
}

/* How many of rank r's terms differ from rank 0's, leaving out what follows
 * from a term that differs; with say, each is said. */
static int differences(const char *prog, const report *all, int r, bool say)
{
    int n = 0;
    for (int i = 0; i < n_terms; i++)
        if (strcmp(all[r].value[i], all[0].value[i]) != 0 && (i < n_given || n == 0)) {
            n++;
            if (say)
                fprintf(stderr, "%s: rank %d's %s (%s) differs from rank 0's (%s)\n", prog, r,
                        names[i], all[r].value[i], all[0].value[i]);
        }
    return n;
}

int ranks_agree(const char *prog, const qkv_training *run, const qkv_gpt *m,
                const qkv_corpus *text, const run_options *o)
{
    if (dist_size() == 1) {
        if (!run)
            fprintf(stderr, "%s: %s\n", prog, qkv_last_error());
        return run ? 0 : -1;
    }
    report mine = {.where = run ? HERE : FAILED};
    if (run)
        describe(&mine, run, m, text, o);
    else
        snprintf(mine.message, sizeof mine.message, "%s", qkv_last_error());
    report *all = gather(&mine, o->out);
    /* Rank 0 speaks: it is here (a rank that left never got this far). */
    bool speak = dist_rank() == 0;
    int failed = 0, differ = 0;
    for (int r = 0; r < dist_size(); r++)
        if (all[r].where == FAILED) {
            failed++;
            if (speak)
                fprintf(stderr, "%s: rank %d could not start: %s\n", prog, r, all[r].message);
        }
    for (int r = 1; !failed && r < dist_size(); r++)
        differ += differences(prog, all, r, speak);
    if (differ && speak)
        fprintf(stderr, "%s: the ranks train one model: give every rank the same text and "
                "options\n", prog);
    free(all);
    return failed || differ ? -1 : 0;
}
