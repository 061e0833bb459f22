/* The run options of the training commands (see run_options.h). */
#include "run_options.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "precision_flag.h"
#include "qkv/checkpoint.h"
#include "qkv/precision.h"
#include "threads.h"
#include "train_ranks.h"

/* The most steps between evaluations, or between progress lines. */
#define EVERY_MAX 1000000000u

int run_specs(run_options *o, const arg_spec *head, int n_head, const arg_spec *model,
              int n_model, arg_spec *specs)
{
    const run_kind *k = o->kind;
    const arg_spec length[] = {
        {k->iters_flag, ARG_INT, &o->iters, 1, QKV_TRAIN_ITERS_MAX, "N", "optimizer steps"},
        {"--time", ARG_STR, &o->time, 0, 0, "SECONDS",
         "train this long instead: 300, 90s, 5m, up to a year (evaluations included)"},
        {"--batch", ARG_INT, &o->batch, 1, k->max_batch, "B", k->batch_help},
        {"--grad-accum", ARG_INT, &o->grad_accum, 1, QKV_TRAIN_GRAD_ACCUM_MAX, "N",
         "micro-batches of --batch per step, their gradients averaged: the step of a batch N "
         "times larger in the memory of one"},
    };
    const arg_spec rest[] = {
        {"--lr", ARG_REAL, &o->lr, QKV_TRAIN_LR_MIN, QKV_TRAIN_LR_MAX, "LR", "peak learning rate"},
        {"--min-lr", ARG_REAL, &o->min_lr, 0, QKV_TRAIN_LR_MAX, "LR", "learning rate at the end of the decay"},
        {"--warmup", ARG_INT, &o->warmup, 0, QKV_TRAIN_ITERS_MAX, "N", "linear warmup steps"},
        {"--wsd", ARG_REAL, &o->wsd, 0, 1, "FRAC",
         "constant lr, then linear decay over the last FRAC (0 = cosine)"},
        {"--optim", ARG_STR, &o->optim, 0, 0, "NAME",
         "adamw, or muon: orthogonalised momentum for the hidden matrices, AdamW for the rest"},
        {"--precision", ARG_STR, &o->precision, 0, 0, "NAME",
         "fp32, or bf16: the model's products in bf16 with fp32 sums; weights, gradients, "
         "optimizer, norms and loss stay fp32 (default: fp32, or a resumed run's)"},
        {"--weight-decay", ARG_REAL, &o->weight_decay, 0, QKV_TRAIN_WEIGHT_DECAY_MAX, "WD",
         "AdamW weight decay on matrices"},
        {"--grad-clip", ARG_REAL, &o->grad_clip, 0, QKV_TRAIN_GRAD_CLIP_MAX, "NORM",
         "global gradient-norm limit (0 = none)"},
        {"--eval-every", ARG_INT, &o->eval_every, 1, EVERY_MAX, "N",
         "evaluate and checkpoint every N steps"},
        {"--eval-iters", ARG_INT, &o->eval_iters, 1, k->max_eval_iters, "N",
         "batches per evaluation"},
        {"--log-every", ARG_INT, &o->log_every, 1, EVERY_MAX, "N", "progress line every N steps"},
        {"--seed", ARG_INT, &o->seed, 0, 2147483647, "S", "seed of init, batches and dropout"},
        {"--threads", ARG_THREADS, &o->threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
        {"--out", ARG_STR, &o->out, 0, 0, "CKPT", "checkpoint to write (also CKPT.csv, CKPT.svg)"},
        {"--resume", ARG_STR, &o->resume, 0, 0, "CKPT", "continue the run saved in CKPT"},
        {"--force", ARG_FLAG, &o->force, 0, 0, NULL,
         "replace an existing --out, CKPT.csv or CKPT.svg (a new run refuses to)"},
    };
    _Static_assert(sizeof length / sizeof *length + sizeof rest / sizeof *rest == RUN_SPECS_MAX,
                   "RUN_SPECS_MAX counts the run options");
    int n = 0;
    for (int i = 0; i < n_head; i++)
        specs[n++] = head[i];
    for (size_t i = 0; i < sizeof length / sizeof *length; i++)
        specs[n++] = length[i];
    for (int i = 0; i < n_model; i++)
        specs[n++] = model[i];
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        if (k->wsd || strcmp(rest[i].name, "--wsd") != 0)
            specs[n++] = rest[i];
    return n;
}

/* The longest --time: a year. Far longer and the budget's arithmetic (steps
 * left = seconds left / seconds per step, as an int64) overflows: 1e30 s
 * gave a 2.5 s run. */
#define TIME_MAX (365 * 24 * 3600.0)

/* Seconds in a --time value: "300", "90s", "5m", "1h"; -1 when it is not one. */
static double parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double unit = strcmp(end, "") == 0 || strcmp(end, "s") == 0 ? 1
                  : strcmp(end, "m") == 0                       ? 60
                  : strcmp(end, "h") == 0                       ? 3600
                                                                : -1;
    if (end == s || unit < 0 || !(v > 0) || !isfinite(v * unit))
        return -1;
    return v * unit;
}

/* Whether a resumed run may be given the option: the saved run fixes the
 * rest (the model, the optimizer, the schedule, the batches). */
static bool changes_on_resume(const run_kind *k, const char *name)
{
    const char *const changeable[] = {k->iters_flag, "--time",   "--eval-every", "--log-every",
                                      "--threads",  "--out",    "--resume",     "--force",
                                      "--precision", k->input_flag};
    for (size_t i = 0; i < sizeof changeable / sizeof *changeable; i++)
        if (strcmp(name, changeable[i]) == 0)
            return true;
    return false;
}

int run_check(const arg_cmd *cmd, run_options *o)
{
    const run_kind *k = o->kind;
    if (o->min_lr > o->lr)
        return args_error(cmd, "--min-lr %g is above --lr %g", o->min_lr, o->lr);
    o->budget = o->time ? parse_time(o->time) : 0;
    if (o->budget < 0)
        return args_error(cmd, "--time: '%s' is not a duration (e.g. 300, 90s, 5m)", o->time);
    if (o->budget > TIME_MAX)
        return args_error(cmd, "--time: '%s' is %g s, longer than a year (%.0f s)", o->time,
                          o->budget, TIME_MAX);
    if (o->optim && strcmp(o->optim, "adamw") != 0 && strcmp(o->optim, "muon") != 0)
        return args_error(cmd, "--optim: '%s' is not an optimizer (adamw or muon)", o->optim);
    int rc = precision_flag_check(cmd, o->precision);
    if (rc >= 0)
        return rc;
    if (o->time && args_given(cmd, k->iters_flag))
        return args_error(cmd, "--time and %s both set the run's length: give one", k->iters_flag);
    o->eval_every_given = args_given(cmd, "--eval-every");
    o->log_every_given = args_given(cmd, "--log-every");
    if (!o->resume)
        return -1;
    for (int i = 0; i < cmd->n_specs; i++) /* the first in --help's order */
        if (args_given(cmd, cmd->specs[i].name) && !changes_on_resume(k, cmd->specs[i].name))
            return args_error(cmd, "%s cannot change a resumed run (it continues with the "
                              "settings saved in %s)", cmd->specs[i].name, o->resume);
    if (!args_given(cmd, "--out"))
        o->out = o->resume; /* a resumed run keeps saving where it was saved */
    if (!args_given(cmd, k->iters_flag))
        o->iters = 0;
    return -1;
}

int run_start(const arg_cmd *cmd, const run_options *o)
{
    if (ranks_any(ranks_writer() && cli_claim_outputs(cmd->name, o->out, o->force, o->resume) < 0))
        return -1;
    cli_use_threads_later(o->threads); /* settled before the plan line (cli_threads_settle) */
    return 0;
}

int run_precision(run_options *o)
{
    int p = QKV_PRECISION_FP32;
    const char *why = NULL;
    if (o->precision) {
        p = qkv_precision_find(o->precision);
        why = "--precision";
    } else if (o->resume) {
        /* one that cannot be opened is said by the load that follows, on every rank alike */
        qkv_checkpoint *ck = qkv_checkpoint_open(o->resume, NULL);
        p = ck ? qkv_checkpoint_precision(ck) : QKV_PRECISION_FP32;
        qkv_checkpoint_close(ck);
        why = "the resumed run's";
    }
    if (qkv_precision_use(p) < 0) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return -1;
    }
    o->precision_why = why;
    return 0;
}

/* The note's layout: a version byte, then --eval-every and --log-every as
 * little-endian u32s. */
enum { NOTE_VERSION = 1, NOTE_BYTES = 9 };

/* The note's numbers little-endian: the same bytes on every machine. */
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The number put_u32 stored at p. */
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The setting *value (named flag) of a resumed run from its note's saved
 * one: kept when given (said when it differs), else taken back. A saved
 * value out of the flag's range (a tampered file) is not one: it is left. */
static void take_back(const run_options *o, const char *flag, int *value, bool given,
                      uint32_t saved)
{
    if (saved < 1 || saved > EVERY_MAX)
        return;
    if (given && (uint32_t)*value != saved)
        printf("%s %d replaces the %u that %s was saved with: the run goes on otherwise than "
               "it would have\n", flag, *value, (unsigned)saved, o->resume);
    else
        *value = (int)saved;
}

void run_note(run_options *o, qkv_training *run)
{
    if (!run)
        return;
    const uint8_t *saved;
    if (o->resume && qkv_training_note(run, &saved) == NOTE_BYTES && saved[0] == NOTE_VERSION) {
        take_back(o, "--eval-every", &o->eval_every, o->eval_every_given,
                  get_u32(saved + 1));
        take_back(o, "--log-every", &o->log_every, o->log_every_given,
                  get_u32(saved + 5));
    }
    uint8_t note[NOTE_BYTES] = {NOTE_VERSION};
    put_u32(note + 1, (uint32_t)o->eval_every);
    put_u32(note + 5, (uint32_t)o->log_every);
    qkv_training_set_note(run, note, NOTE_BYTES);
}

qkv_train_config run_config(const run_options *o)
{
    return (qkv_train_config){.iters = o->iters, .batch_size = o->batch, .lr = o->lr,
                              .min_lr = o->min_lr, .warmup = o->warmup, .wsd_decay = o->wsd,
                              .weight_decay = o->weight_decay, .grad_clip = o->grad_clip,
                              .eval_iters = o->eval_iters, .seed = (uint64_t)o->seed,
                              .grad_accum = o->grad_accum};
}

qkv_training *run_new(const qkv_training_model *model, const run_options *o)
{
    qkv_train_config tc = run_config(o);
    qkv_training *run = qkv_training_new(model, &tc);
    if (run && o->optim && strcmp(o->optim, "muon") == 0 &&
        qkv_training_set_optim(run, QKV_OPTIM_MUON) < 0) {
        qkv_training_free(run);
        return NULL;
    }
    return run;
}
