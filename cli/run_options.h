/* The options of a training run, which `qkv train` and `qkv s2s train` both
 * take: its length, its batch, the optimizer and its schedule, evaluation,
 * progress lines, threads and the checkpoint. Declared here once, with their
 * checks and the training config they make, so that a run option is added
 * in one place and means the same in both commands. */
#ifndef QKV_CLI_RUN_OPTIONS_H
#define QKV_CLI_RUN_OPTIONS_H

#include <stdbool.h>

#include "args.h"
#include "qkv/training.h"

/* What one command's run options differ in. */
typedef struct run_kind {
    const char *iters_flag;  /* the run-length option: "--iters" */
    const char *input_flag;  /* what the run trains on ("--data"): a resumed run may change it */
    const char *batch_help;  /* what --batch counts: "sequences per step" */
    double max_batch;        /* --batch's upper bound */
    double max_eval_iters;   /* --eval-iters' upper bound */
    bool wsd;                /* whether the command offers --wsd */
} run_kind;

/* The run options' values. The command sets its defaults before run_specs
 * (--help shows them); args_parse and run_check set the rest. */
typedef struct run_options {
    const run_kind *kind;
    int iters, batch, grad_accum, warmup, eval_every, eval_iters, log_every, seed, threads;
    double lr, min_lr, wsd, weight_decay, grad_clip;
    const char *time;   /* --time as given, or NULL */
    const char *out;    /* the checkpoint to write */
    const char *resume; /* the checkpoint to continue, or NULL */
    const char *optim;  /* --optim: "adamw" or "muon" (run_check checks it) */
    const char *precision; /* --precision: "fp32" or "bf16", or NULL (run_check checks it) */
    const char *precision_why; /* who chose the precision in use (run_precision), NULL: the default */
    bool force;
    double budget;      /* --time in seconds, 0 without it (run_check sets it) */
    bool eval_every_given, log_every_given; /* given on the command line (run_check sets them) */
    double clock_start; /* when a budget's clock started (cli_now()), 0: when the loop starts */
} run_options;

/* The most specs run_specs adds to the command's own. */
enum { RUN_SPECS_MAX = 20 };

/* A training command's options for args_parse, in --help's order: head
 * (what it trains on, a preset), the run's length and batch, model (the
 * model's shape), then the rest of the run options, which write into o.
 * specs has room for n_head + n_model + RUN_SPECS_MAX; returns how many it holds. */
int run_specs(run_options *o, const arg_spec *head, int n_head, const arg_spec *model,
              int n_model, arg_spec *specs);

/* After args_parse: --min-lr must not be above --lr; --time into o->budget
 * (up to a year; not with the run-length option); with --resume, nothing the saved run
 * fixes (every option but the run's length, --time, --eval-every,
 * --log-every, --threads, --out, --force and kind->input_flag). Then what
 * a resumed run's defaults are: --out is the checkpoint resumed, and iters
 * is 0 (the saved run's length) unless given. A usage error's exit status,
 * or -1 as args_parse. */
int run_check(const arg_cmd *cmd, run_options *o);

/* Before any work: claim --out and its log (rank 0 writes them; every rank
 * learns whether that worked), then use --threads. 0, or -1 after saying why. */
int run_start(const arg_cmd *cmd, const run_options *o);

/* Before building the run: the precision of the model's products, --precision
 * if given, else a resumed run's (its checkpoint's, fp32 for an older one),
 * else fp32; o->precision_why says which (train_print_plan prints it). 0, or
 * -1 after saying why (bf16 in a double build). A checkpoint that cannot be
 * read leaves fp32: loading it says why, on every rank. */
int run_precision(run_options *o);

/* The settings of the program's own that change a run, noted in run (saved
 * in its checkpoint, see qkv_training_set_note): --eval-every (where it
 * evaluates, and with that where the evaluation streams end) and
 * --log-every (its rows of OUT.csv). A resumed run first takes back those
 * it was saved with, unless given, saying so when a given one differs: the
 * resume line (`--resume OUT` and the input) is then the whole run. */
void run_note(run_options *o, qkv_training *run);

/* The training config of a new run (the fields no option sets are 0: the library's defaults). */
qkv_train_config run_config(const run_options *o);

/* A new run of model with run_config(o) and the optimizer --optim names;
 * NULL with a message (model released as by qkv_training_new). */
qkv_training *run_new(const qkv_training_model *model, const run_options *o);

#endif
