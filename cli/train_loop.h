/* The training loop both `qkv train` and `qkv s2s train` run: progress
 * lines, ETA, evaluation, saving, the loss log, Ctrl-C, a time budget. */
#ifndef QKV_CLI_TRAIN_LOOP_H
#define QKV_CLI_TRAIN_LOOP_H

#include "qkv/training.h"
#include "run_options.h"

/* What one evaluation found. */
typedef struct train_eval {
    double train, val; /* losses for the log (NAN when the evaluation is not a loss) */
    double share;      /* the part of a whole evaluation (cfg.eval_iters batches) it did, in (0, 1] */
    char summary[160]; /* for the eval and done lines: "train loss 1.7588, val loss 1.8927" */
    char used[96];     /* what it read, for the eval line: "200+200 batches, 307200 tokens" */
} train_eval;

typedef struct train_loop {
    const char *prog;          /* "qkv train": messages start with it */
    const run_options *opts;   /* --out, --resume, --log-every, --eval-every, --time's budget */
    qkv_training *run;         /* the run to continue */
    const char *resume_args;   /* what the resume hint adds after --resume OUT, e.g. "--data F" */
    double tokens_per_step;    /* for tok/s on the progress line, or 0 to leave it out */
    double bytes_per_token;    /* for the loss in bits per byte on it, or 0 to leave it out */
    double eval_cost;          /* an evaluation's cost in training steps, until one is timed */
    /* The model's evaluation of run (qkv_training_eval): 0 or -1. It is to
     * end by *deadline (cli_now()'s seconds, INFINITY for no limit), which the
     * run's eval_stop reads between batches (with a signal, see
     * train_eval_stop): an evaluation in parts may set an earlier one for
     * each part. */
    int (*evaluate)(qkv_training *run, const void *ud, double *deadline, train_eval *e);
    const void *ud;            /* its second argument */
    /* A budgeted run's last evaluation, exact where evaluate samples (the
     * whole validation split), as evaluate but for the deadline, which bounds
     * only what it still samples; NULL: evaluate. Its cost in seconds is
     * final_cost's, measured once before the first step and set aside from
     * the budget. */
    int (*evaluate_final)(qkv_training *run, const void *ud, double *deadline, train_eval *e);
    double (*final_cost)(qkv_training *run, const void *ud); /* NAN with a message on failure */
} train_loop;

/* The eval_stop the loop gives its run: true, on every rank, once a signal
 * or a lost output asks the run to stop or the clock has passed
 * *(const double *)deadline. */
bool train_eval_stop(void *deadline);

/* Train until run->cfg.iters (or, with a budget, until the budget is
 * spent: the schedule is then laid over it, the evaluations take at most
 * EVAL_SHARE of it and the last one what is left, besides the exact part of
 * evaluate_final, whose time is set aside), evaluate and save every
 * --eval-every steps and at the end, append to OUT.csv as it goes and redraw
 * OUT.svg at every evaluation. On a failed step save the last good state
 * (if there was progress); on SIGINT, SIGTERM, SIGHUP or a closed stdout
 * finish the step (or the evaluation's batch), save and say how to resume.
 * The program's exit status: 0, 1, or 128 + the signal (141 for a closed
 * stdout) after it stopped so and the save worked. */
int train_loop_run(const train_loop *l);

/* The "training: ..." line: the run's length (or opts' budget), one step's
 * size (e.g. "12 x 64 tokens"), the schedule, the threads, and whether it
 * resumed; then, unless it is a new run's default, the "precision: ..." line
 * (run_precision): which, who chose it, and the kernel of its products. */
void train_print_plan(const qkv_training *run, const run_options *opts, const char *step_size);

#endif
