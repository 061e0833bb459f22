/* The training loop both `qkv train` and `qkv s2s train` run: progress
 * lines, ETA, evaluation, saving, the loss log, Ctrl-C, a time budget. */
#ifndef QKV_CLI_TRAIN_LOOP_H
#define QKV_CLI_TRAIN_LOOP_H

#include "qkv/training.h"
#include "run_options.h"

/* What one evaluation found. */
typedef struct train_eval {
    double train, val; /* losses for the log (NAN when the evaluation is not a loss) */
    char summary[160]; /* for the eval and done lines: "train loss 1.7588, val loss 1.8927" */
} train_eval;

typedef struct train_loop {
    const char *prog;          /* "qkv train": messages start with it */
    const run_options *opts;   /* --out, --resume, --log-every, --eval-every, --time's budget */
    qkv_training *run;         /* the run to continue */
    const char *resume_args;   /* what the resume hint adds after --resume OUT, e.g. "--data F" */
    double tokens_per_step;    /* for tok/s on the progress line, or 0 to leave it out */
    double eval_cost;          /* an evaluation's cost in training steps, until one is timed */
    int (*evaluate)(void *ud, train_eval *e); /* the model's evaluation: 0 or -1 */
    void *ud;                  /* its first argument */
} train_loop;

/* Train until run->cfg.iters (or, with a budget, until the budget is
 * spent: the schedule is then laid over it), evaluate and save every
 * --eval-every steps and at the end, append to OUT.csv as it goes and redraw
 * OUT.svg at every evaluation. On a failed step save the last good state
 * (if there was progress); on SIGINT or SIGTERM finish the step, save and
 * say how to resume. The program's exit status: 0, 1, or 128 + the signal
 * after a signal stopped it and the save worked. */
int train_loop_run(const train_loop *l);

/* The "training: ..." line: the run's length (or opts' budget), one step's
 * size (e.g. "12 x 64 tokens"), the schedule, the threads, and whether it resumed. */
void train_print_plan(const qkv_training *run, const run_options *opts, const char *step_size);

#endif
