/* The one training loop of the program (see train_loop.h). */
#include "train_loop.h"

#include <math.h>
#include <stdio.h>

#include "loss_log.h"
#include "runtime.h"
#include "signals.h"
#include "train_ranks.h"

/* Steps a timed run takes before its speed is trusted: the first ones size
 * the arena and the kernels' buffers and are slower than the rest. */
enum { WARMUP_STEPS = 3 };

/* Where the loop stands: its clock, the current progress interval, the last evaluation. */
typedef struct loop_state {
    int64_t start_step;         /* the run's step when the loop began */
    double t_start;             /* when the loop began */
    double t_last;              /* end of the last progress interval, evaluations left out */
    double eval_time;           /* seconds spent evaluating */
    int n_evals;                /* evaluations done */
    double t_warm, eval_warm;   /* the clock and eval_time when the warm-up steps ended */
    double loss_sum;            /* training losses of the current interval */
    int loss_n;                 /* how many */
    train_eval last;            /* the last evaluation */
    loss_log log;               /* the losses so far, for OUT.csv and OUT.svg */
} loop_state;

void train_print_plan(const qkv_training *run, const run_options *opts, const char *step_size)
{
    const qkv_train_config *c = &run->cfg;
    if (opts->budget > 0)
        printf("training for %gs: steps of %s", opts->budget, step_size);
    else
        printf("training: %d steps of %s", c->iters, step_size);
    char decay[64] = "cosine";
    if (c->wsd_decay > 0)
        snprintf(decay, sizeof decay, "stable, then linear over the last %g%%", 100 * c->wsd_decay);
    printf(", lr %g -> %g (warmup %d, %s), %d threads%s\n", c->lr, c->min_lr, c->warmup, decay,
           opts->threads, opts->resume ? " (resumed)" : "");
}

/* The evaluations a run has to do in steps (s, s + n]: one every
 * eval_every steps, and the final one unless it falls on one of those. */
static int64_t evals_due(int64_t s, int64_t n, int eval_every)
{
    return (s + n - 1) / eval_every - s / eval_every + 1;
}

/* The run length that spends the rest of a time budget: as many more steps
 * as fit in the time left at the speed measured since the warm-up, once the
 * evaluations still due are paid for (timed ones at their mean, before the
 * first at eval_cost steps each). Never shorter than the steps done. */
static int64_t budget_iters(const train_loop *l, const loop_state *st, int64_t s, double now)
{
    const run_options *o = l->opts;
    int64_t timed = s - st->start_step - WARMUP_STEPS;
    double step_s = (now - st->t_warm - (st->eval_time - st->eval_warm)) / (double)timed;
    double eval_s = st->n_evals ? st->eval_time / st->n_evals : l->eval_cost * step_s;
    double left = o->budget - (now - st->t_start);
    double guess = (left - eval_s) / (step_s + eval_s / o->eval_every);
    int64_t n = guess > 0 ? (int64_t)guess : 0;
    if (n > INT32_MAX - s)
        n = INT32_MAX - s;
    while (n > 0 && (double)n * step_s + (double)evals_due(s, n, o->eval_every) * eval_s > left)
        n--;
    return s + n;
}

/* Save the run to --out (rank 0 writes; every rank learns whether it
 * worked), the log going with it (see log_saving); on failure print why
 * and return -1. */
static int save(const train_loop *l, loss_log *log)
{
    cli_saving(true); /* a second signal then only says to wait */
    bool failed = ranks_writer() &&
                  (log_saving(log) < 0 || qkv_training_save(l->run, l->opts->out) < 0);
    cli_saving(false);
    if (failed)
        fprintf(stderr, "%s: %s\n", l->prog, qkv_last_error());
    log_saved(log, !failed);
    if (ranks_any(failed)) {
        if (!failed)
            fprintf(stderr, "%s: rank 0 could not save %s\n", l->prog, l->opts->out);
        return -1;
    }
    return 0;
}

/* The progress line of the interval that ends at step s, and its row of the log. */
static void progress(const train_loop *l, loop_state *st, int64_t s)
{
    double now = cli_now(), ms = 1000 * (now - st->t_last) / st->loss_n;
    double elapsed = now - st->t_start, mean = st->loss_sum / st->loss_n;
    int total = l->run->cfg.iters;
    printf("step %6lld/%d  loss %.4f  lr %.2e  %7.1f ms/step", (long long)s, total, mean,
           qkv_training_lr(l->run, s - 1), ms);
    if (l->tokens_per_step > 0)
        printf("  %8.0f tok/s", l->tokens_per_step / (ms / 1000));
    /* Both count the evaluations: they are part of the wait. */
    if (l->opts->budget > 0)
        printf("  elapsed %4.0fs  left %4.0fs\n", elapsed, fmax(l->opts->budget - elapsed, 0));
    else
        printf("  ETA %4.0fs\n", elapsed / (double)(s - st->start_step) * (double)(total - s));
    log_add(&st->log, (double)s, mean, NAN);
    st->loss_sum = 0;
    st->loss_n = 0;
    st->t_last = now;
}

/* Evaluate at step s, print the result, log it and save. 0, or -1 (eval_failed
 * set when it was the evaluation, not the save, that failed). */
static int evaluate(const train_loop *l, loop_state *st, int64_t s, bool *eval_failed)
{
    double te = cli_now();
    *eval_failed = l->evaluate(l->ud, &st->last) < 0;
    if (*eval_failed)
        return -1;
    double dt = cli_now() - te;
    printf("eval at step %lld: %s (%.1fs)\n", (long long)s, st->last.summary, dt);
    loss_log *log = &st->log;
    if (!isnan(st->last.val)) {
        if (log->n && log->step[log->n - 1] == (double)s)
            log->val[log->n - 1] = st->last.val;
        else
            log_add(log, (double)s, st->last.train, st->last.val);
    }
    st->eval_time += dt;
    st->n_evals++;
    st->t_last += dt; /* evaluation time is not training speed */
    if (save(l, &st->log) < 0)
        return -1;
    log_plot(&st->log); /* a failed plot is said and the run goes on; its status says so */
    return 0;
}

/* A step or an evaluation failed: say why, and keep the last good state.
 * Only progress is saved: a run that failed before its first step leaves
 * whatever is at out as it was. (Every rank takes the same branch.) */
static void failed(const train_loop *l, loop_state *st)
{
    fprintf(stderr, "%s: %s\n", l->prog, qkv_last_error());
    if (l->run->step > st->start_step && save(l, &st->log) == 0)
        fprintf(stderr, "%s: saved the last good state (step %lld) to %s\n", l->prog,
                (long long)l->run->step, l->opts->out);
}

int train_loop_run(const train_loop *l)
{
    qkv_training *run = l->run;
    const run_options *o = l->opts;
    loop_state st = {.start_step = run->step};
    if (o->resume && run->step >= run->cfg.iters && o->budget <= 0)
        printf("the run saved in %s is already at step %lld of %d; nothing to do (pass %s "
               "above %lld to go further)\n", o->resume, (long long)run->step, run->cfg.iters,
               o->kind->iters_flag, (long long)run->step);
    fflush(stdout);
    /* A timed run lays its schedule out once the warm-up has measured its
     * speed; until then it follows the saved one, made long enough to get there. */
    if (o->budget > 0 && run->cfg.iters <= run->step + WARMUP_STEPS)
        qkv_training_set_iters(run, run->step + WARMUP_STEPS + 1);
    if (ranks_join(run) < 0) {
        fprintf(stderr, "%s: %s\n", l->prog, qkv_last_error());
        return 1;
    }
    if (o->resume)
        log_read(&st.log, o->resume, run->step);
    if (ranks_writer())
        log_open(&st.log, l->prog, o->out);
    cli_catch_signals();
    st.t_start = st.t_last = cli_now();
    int status = 0;
    bool stopped = false;
    while (run->step < run->cfg.iters) {
        double loss;
        ranks_step_begin();
        if (qkv_training_step(run, &loss, NULL) < 0) {
            ranks_step_failed();
            failed(l, &st);
            status = 1;
            break;
        }
        st.loss_sum += loss;
        st.loss_n++;
        int64_t s = run->step;
        if (o->budget > 0 && s - st.start_step == WARMUP_STEPS) {
            st.t_warm = cli_now();
            st.eval_warm = st.eval_time;
        } else if (o->budget > 0 && s - st.start_step > WARMUP_STEPS) {
            qkv_training_set_iters(run, ranks_longest(budget_iters(l, &st, s, cli_now())));
        }
        if (s % o->log_every == 0 || s == run->cfg.iters)
            progress(l, &st, s);
        if (s % o->eval_every == 0 || s == run->cfg.iters) {
            bool eval_failed;
            if (evaluate(l, &st, s, &eval_failed) < 0) {
                if (eval_failed)
                    failed(l, &st);
                status = 1;
                break;
            }
        }
        log_append(&st.log); /* the step's row is complete: on disk now */
        fflush(stdout);
        if ((stopped = ranks_stop(cli_interrupted))) {
            if (save(l, &st.log) < 0) {
                status = 1;
                break;
            }
            status = cli_signal_status();
            printf("\ninterrupted at step %lld: saved %s\nresume with: %s --resume %s%s%s\n",
                   (long long)run->step, o->out, l->prog, o->out, l->resume_args[0] ? " " : "",
                   l->resume_args);
            break;
        }
    }
    if (status == 0 && !stopped && run->step > st.start_step)
        printf("done: %lld steps in %.1fs; final %s; saved %s\n",
               (long long)(run->step - st.start_step), cli_now() - st.t_start, st.last.summary,
               o->out);
    /* A log that could not be written was said when it failed; the run then fails too. */
    int log_rc = log_append(&st.log) | log_plot(&st.log) | log_close(&st.log);
    return status == 0 && log_rc < 0 ? 1 : status;
}
