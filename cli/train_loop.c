/* The one training loop of the program (see train_loop.h). */
#include "train_loop.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dist.h"
#include "qkv/base.h"
#include "qkv/precision.h"
#include "loss_log.h"
#include "tokenizer_bits.h"
#include "runtime.h"
#include "signals.h"
#include "threads.h"
#include "train_ranks.h"

/* Steps a timed run takes before its speed is trusted: the first ones size
 * the arena and the kernels' buffers and are slower than the rest. */
enum { WARMUP_STEPS = 3 };

/* Seconds over which a timed run's speed is averaged: short, so that a
 * machine slowing down in the middle of a run is seen within a second or
 * two, not diluted in the whole run's mean; long enough to smooth a slow step. */
static const double SPEED_WINDOW = 1.0;

/* The part of a time budget that the evaluations may take together. */
static const double EVAL_SHARE = 0.05;

/* Where the loop stands: its clock, the current progress interval, the last evaluation. */
typedef struct loop_state {
    int64_t start_step;         /* the run's step when the loop began */
    double t_start;             /* when the loop began */
    double t_last;              /* end of the last progress interval, evaluations left out */
    double t_step;              /* when the last step ended */
    double aside;               /* seconds since then spent evaluating and saving */
    double step_s;              /* seconds a step takes now (0 until known), smoothed */
    double eval_time;           /* seconds spent evaluating */
    int n_evals;                /* evaluations done */
    double eval_full, eval_at;  /* the last evaluation's time scaled to a whole one, and step_s then */
    double save_s;              /* the longest save so far */
    double final_s;             /* what a budgeted run sets aside for evaluate_final's exact part */
    double deadline;            /* when the current evaluation must end (the run's eval_stop reads it) */
    int64_t saved_step;         /* the step of the last save (-1: none) */
    double loss_sum;            /* training losses of the current interval */
    int loss_n;                 /* how many */
    train_eval last;            /* the last evaluation */
    loss_log log;               /* the losses so far, for OUT.csv and OUT.svg */
    qkv_rng streams[1 + QKV_TRAINING_MAX_RNGS]; /* the run's streams before the current step */
} loop_state;

bool train_eval_stop(void *deadline)
{
    return ranks_any(cli_interrupted || cli_now() >= *(const double *)deadline);
}

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
    printf(", lr %g -> %g (warmup %d, %s)%s, %d thread%s%s%s\n", c->lr, c->min_lr, c->warmup,
           decay, run->opt->cfg.kind == QKV_OPTIM_MUON ? ", Muon" : "", qkv_threads(),
           qkv_threads() > 1 ? "s" : "", opts->threads == ARG_AUTO ? " (auto)" : "",
           opts->resume ? " (resumed)" : "");
    const int p = qkv_precision_active();
    if (!opts->precision_why) /* a new run's default: nothing to say */
        return;
    if (p == QKV_PRECISION_FP32)
        printf("precision: fp32 (%s)\n", opts->precision_why);
    else
        printf("precision: %s products with fp32 sums (%s), on the %s kernel%s\n",
               qkv_precision_name(p), opts->precision_why, qkv_precision_kernel(),
               strcmp(qkv_precision_kernel(), "portable") == 0
                   ? ": rounds to bf16 and multiplies in fp32 (this CPU or path has no "
                     "AVX512_BF16), the same numbers, slower"
                   : "");
}

/* The evaluations a run has to do in steps (s, s + n]: one every
 * eval_every steps, and the final one unless it falls on one of those. */
static int64_t evals_due(int64_t s, int64_t n, int eval_every)
{
    return (s + n - 1) / eval_every - s / eval_every + 1;
}

/* Seconds a whole evaluation takes at today's speed: the last one's time
 * scaled to all its batches and by how the step time has changed since;
 * before the first, eval_cost steps. */
static double eval_seconds(const train_loop *l, const loop_state *st)
{
    if (st->n_evals == 0 || st->eval_at <= 0)
        return l->eval_cost * st->step_s;
    return st->eval_full * st->step_s / st->eval_at;
}

/* Seconds n more steps after step s take with their evaluations (all
 * together at most what is left of EVAL_SHARE) and saves. */
static double plan_seconds(const train_loop *l, const loop_state *st, int64_t s, int64_t n)
{
    const run_options *o = l->opts;
    double evals = (double)evals_due(s, n, o->eval_every);
    double share = fmax(EVAL_SHARE * o->budget - st->eval_time, 0);
    return (double)n * st->step_s + fmin(evals * eval_seconds(l, st), share) + evals * st->save_s;
}

/* The run length that spends the rest of a time budget: the most steps
 * whose plan fits in the time left, at the speed of the last second or so.
 * Never shorter than the steps done. */
static int64_t budget_iters(const train_loop *l, const loop_state *st, int64_t s, double now)
{
    double left = l->opts->budget - (now - st->t_start) - st->final_s;
    /* plan_seconds grows with n and is at least n steps: bisect below that bound. */
    double most = left / st->step_s;
    int64_t lo = 0, hi = most < (double)(INT32_MAX - s) ? (int64_t)fmax(most, 0) : INT32_MAX - s;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (plan_seconds(l, st, s, mid) <= left)
            lo = mid;
        else
            hi = mid - 1;
    }
    return s + lo;
}

/* When the evaluation at step s must end: no limit without a budget; with
 * one, its part of what EVAL_SHARE leaves (shared with the evaluations still
 * due: the last takes all that is left), and never after the budget's end
 * less a save. */
static double eval_deadline(const train_loop *l, const loop_state *st, int64_t s, double now)
{
    const run_options *o = l->opts;
    if (o->budget <= 0)
        return INFINITY;
    int64_t due = evals_due(s - 1, l->run->cfg.iters - s + 1, o->eval_every);
    double share = fmax(EVAL_SHARE * o->budget - st->eval_time, 0) / (double)due;
    return fmin(now + share, st->t_start + o->budget - st->save_s);
}

/* Fold the step that just ended into the speed of a timed run (the
 * warm-up's steps left out): seconds per step over about SPEED_WINDOW. */
static void time_step(loop_state *st, int64_t s, double now)
{
    double dt = now - st->t_step - st->aside;
    if (s - st->start_step > WARMUP_STEPS) {
        double a = fmin(dt / SPEED_WINDOW, 1);
        st->step_s = st->step_s > 0 ? st->step_s + a * (dt - st->step_s) : dt;
    }
    st->t_step = now;
    st->aside = 0;
}

/* Write out what the loop printed. SIGPIPE is ignored: a reader that has
 * gone shows here, as a failed write, and stops the run (cli_output_failed). */
static void flush_stdout(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_output_failed(errno);
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
    if (l->bytes_per_token > 0)
        printf("  %.4f bits/byte", bits_per_byte(mean, l->bytes_per_token));
    /* Both count the evaluations: they are part of the wait. */
    if (l->opts->budget > 0)
        printf("  elapsed %4.0fs  left %4.0fs\n", elapsed, fmax(l->opts->budget - elapsed, 0));
    else
        printf("  ETA %4.0fs\n", elapsed / (double)(s - st->start_step) * (double)(total - s));
    log_add(&st->log, (double)s, mean, NAN, NAN);
    st->loss_sum = 0;
    st->loss_n = 0;
    st->t_last = now;
}

/* Evaluate at step s (by its deadline), print the result, log it and save.
 * 0, or -1 (eval_failed set when it was the evaluation, not the save, that failed). */
static int evaluate(const train_loop *l, loop_state *st, int64_t s, bool *eval_failed)
{
    flush_stdout(); /* the progress line is out before a long evaluation starts */
    double te = cli_now();
    st->deadline = eval_deadline(l, st, s, te);
    bool final = l->evaluate_final && l->opts->budget > 0 && s == l->run->cfg.iters;
    *eval_failed = (final ? l->evaluate_final : l->evaluate)(l->run, l->ud, &st->deadline,
                                                             &st->last) < 0;
    if (*eval_failed)
        return -1;
    double dt = cli_now() - te;
    printf("eval at step %lld: %s (%s, %.1fs)\n", (long long)s, st->last.summary, st->last.used,
           dt);
    loss_log *log = &st->log;
    if (!isnan(st->last.val)) {
        if (log->n && log->step[log->n - 1] == (double)s) {
            log->val[log->n - 1] = st->last.val;
            log->share[log->n - 1] = st->last.share;
        } else {
            log_add(log, (double)s, st->last.train, st->last.val, st->last.share);
        }
    }
    st->eval_time += dt;
    st->n_evals++;
    st->eval_full = dt / st->last.share;
    st->eval_at = st->step_s;
    double ts = cli_now();
    if (save(l, &st->log) < 0)
        return -1;
    st->save_s = fmax(st->save_s, cli_now() - ts);
    st->saved_step = s;
    log_plot(&st->log); /* a failed plot is said and the run goes on; its status says so */
    double spent = cli_now() - te; /* evaluating and saving: not training speed */
    st->t_last += spent;
    st->aside += spent;
    return 0;
}

/* Keep (or put back, with back) the run's streams as they are between steps. */
static void streams(qkv_training *run, loop_state *st, bool back)
{
    for (int i = 0; i < 1 + run->model.n_rngs; i++)
        if (back)
            *run->rngs[i] = st->streams[i];
        else
            st->streams[i] = *run->rngs[i];
}

/* A step or an evaluation failed: say why, and keep the last good state.
 * Only progress is saved: a run that failed before its first step leaves
 * whatever is at out as it was. (Every rank takes the same branch, but for
 * a rank cut off from the others, which decides alone: see lost.) */
static void failed(const train_loop *l, loop_state *st)
{
    fprintf(stderr, "%s: %s\n", l->prog, qkv_last_error());
    if (l->run->step > st->start_step && save(l, &st->log) == 0 && ranks_writer())
        fprintf(stderr, "%s: saved the last good state (step %lld) to %s\n", l->prog,
                (long long)l->run->step, l->opts->out);
}

/* Say on f where the run stopped and how to resume it; 0, or -1 when f failed. */
static int say_resume(const train_loop *l, FILE *f)
{
    const char *out = l->opts->out;
    fprintf(f, "\ninterrupted at step %lld: saved %s\nresume with: %s --resume %s%s%s\n",
            (long long)l->run->step, out, l->prog, out, l->resume_args[0] ? " " : "",
            l->resume_args);
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

/* The step failed because this rank was cut off from the others (a rank
 * died, or a signal stopped them while this one waited): its weights are the
 * last completed step's, and with its streams put back as they were then,
 * the save is that step exactly, which a resume on any number of ranks
 * continues. Rank 0 saves; another survivor does when rank 0 is dead (its
 * lock is free). The exit status: as a signal's after a save, else 1. */
static int lost(const train_loop *l, loop_state *st)
{
    fprintf(stderr, "%s: %s\n", l->prog, qkv_last_error());
    streams(l->run, st, true);
    const char *cmd = l->prog + (strncmp(l->prog, "qkv ", 4) == 0 ? 4 : 0);
    if (l->run->step == st->start_step || !ranks_take_over(cmd, l->opts->out))
        return 1;
    if (st->saved_step != l->run->step && save(l, &st->log) < 0)
        return 1;
    /* Only rank 0's stdout is kept. */
    say_resume(l, ferror(stdout) || dist_rank() != 0 ? stderr : stdout);
    return cli_interrupted ? cli_signal_status() : 1;
}

int train_loop_run(const train_loop *l)
{
    qkv_training *run = l->run;
    const run_options *o = l->opts;
    loop_state st = {.start_step = run->step, .saved_step = -1, .deadline = INFINITY};
    cli_catch_signals(); /* before the first write: a closed stdout must not kill the run */
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
    /* The budget's clock: measuring the final evaluation is inside it, and
     * whatever the command did for the run before (opts->clock_start). */
    double t0 = o->clock_start > 0 ? o->clock_start : cli_now();
    if (o->budget > 0 && l->final_cost) {
        st.final_s = l->final_cost(run, l->ud);
        if (ranks_any(isnan(st.final_s))) {
            fprintf(stderr, "%s: %s\n", l->prog,
                    isnan(st.final_s) ? qkv_last_error() : "another rank's evaluation failed");
            return 1;
        }
    }
    if (o->resume)
        log_read(&st.log, o->resume, run->step);
    if (ranks_writer())
        log_open(&st.log, l->prog, o->out);
    run->eval_stop = train_eval_stop;
    run->eval_stop_ud = &st.deadline;
    st.t_start = t0;
    st.t_last = st.t_step = cli_now();
    int status = 0;
    bool stopped = false;
    while (run->step < run->cfg.iters) {
        double loss;
        ranks_step_begin();
        streams(run, &st, false);
        if (qkv_training_step(run, &loss, NULL) < 0) {
            ranks_step_failed();
            if (ranks_lost()) {
                status = lost(l, &st);
            } else {
                failed(l, &st);
                status = 1;
            }
            break;
        }
        st.loss_sum += loss;
        st.loss_n++;
        int64_t s = run->step;
        double now = cli_now();
        time_step(&st, s, now);
        cli_threads_watch();
        if (o->budget > 0 && st.step_s > 0)
            qkv_training_set_iters(run, ranks_longest(budget_iters(l, &st, s, now)));
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
        flush_stdout();
        if ((stopped = ranks_stop(cli_interrupted))) {
            if (st.saved_step != run->step && save(l, &st.log) < 0) {
                status = 1;
                break;
            }
            status = cli_signal_status();
            /* Where to resume is said where it can be read: on stderr when stdout is gone. */
            if (ferror(stdout) || say_resume(l, stdout) < 0)
                say_resume(l, stderr);
            break;
        }
    }
    run->eval_stop = NULL; /* it reads st, which ends here */
    if (status == 0 && !stopped && run->step > st.start_step)
        printf("done: %lld steps in %.1fs; final %s; saved %s\n",
               (long long)(run->step - st.start_step), cli_now() - st.t_start, st.last.summary,
               o->out);
    /* A log that could not be written was said when it failed; the run then fails too. */
    int log_rc = log_append(&st.log) | log_plot(&st.log) | log_close(&st.log);
    return status == 0 && log_rc < 0 ? 1 : status;
}
