/* qkv s2s train|eval|run: the encoder-decoder with cross-attention on a
 * generated task (human-written dates to ISO 8601). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "dist.h"
#include "model_options.h"
#include "output.h"
#include "precision_flag.h"
#include "qkv/qkv.h"
#include "qkv/seq2seq.h"
#include "run_options.h"
#include "runtime.h"
#include "threads.h"
#include "train_loop.h"

/* Print "qkv s2s CMD: <last error>" and return 1. */
static int fail(const char *cmd)
{
    fprintf(stderr, "qkv s2s %s: %s\n", cmd, qkv_last_error());
    return 1;
}

/* The encoder-decoder's evaluation for the loop: held-out exact match. */
static int evaluate(qkv_training *run, const void *ud, double *deadline, train_eval *e)
{
    (void)ud, (void)deadline; /* the run's eval_stop reads the deadline */
    const qkv_train_config *c = &run->cfg;
    double acc = qkv_training_eval(run, 0);
    int done = run->eval_done;
    *e = (train_eval){.train = NAN, .val = NAN, .share = done / (double)c->eval_iters};
    snprintf(e->summary, sizeof e->summary, "held-out exact match %.1f%% of %d pairs", 100 * acc,
             done * c->batch_size);
    if (e->share < 1)
        snprintf(e->used, sizeof e->used, "%d of %d batches", done, c->eval_iters);
    else
        snprintf(e->used, sizeof e->used, "%d batches", done);
    return isnan(acc) ? -1 : 0;
}

/* How qkv s2s train words and bounds its run options. */
static const run_kind s2s_run_kind = {.iters_flag = "--steps", .input_flag = "--task",
                                      .batch_help = "pairs per step", .max_batch = 1e5,
                                      .max_eval_iters = 1e4};

/* qkv s2s train: train; evaluate and save every --eval-every steps, at the end, on Ctrl-C. */
static int s2s_train(int argc, char **argv)
{
    run_options ro = {.kind = &s2s_run_kind, .iters = 1500, .batch = 64, .grad_accum = 1, .lr = 3e-3,
                      .min_lr = 1e-4, .warmup = 100, .weight_decay = 0.1, .grad_clip = 1.0,
                      .eval_every = 250, .eval_iters = 4, .log_every = 50, .seed = 1337,
                      .threads = ARG_AUTO, .out = "s2s.ckpt"};
    const char *task_name = "dates";
    int layers = 2, heads = 4, embd = 64;
    double dropout = 0;
    model_option_args opt_args = {0};
    const arg_spec head[] = {
        {"--task", ARG_STR, &task_name, 0, 0, "NAME", "the generated task"},
    };
    enum { N_SIZES = 4 };
    arg_spec model[N_SIZES + MODEL_OPTION_SPECS] = {
        {"--layers", ARG_INT, &layers, 1, 256, "L", "encoder blocks, and as many decoder blocks"},
        {"--heads", ARG_INT, &heads, 1, 4096, "H", "attention heads (must divide --embd)"},
        {"--embd", ARG_INT, &embd, 1, 65536, "C", "model width"},
        {"--dropout", ARG_REAL, &dropout, 0, QKV_DROPOUT_MAX, "P", "dropout probability in training"},
    };
    int n_model = N_SIZES + model_option_specs(&opt_args, model + N_SIZES);
    arg_spec specs[sizeof head / sizeof *head + sizeof model / sizeof *model + RUN_SPECS_MAX];
    int n_specs = run_specs(&ro, head, (int)(sizeof head / sizeof *head), model, n_model, specs);
    const arg_cmd cmd = {"s2s train", "Train the encoder-decoder on pairs drawn fresh from the "
                         "task's generator (training split), with held-out exact-match accuracy "
                         "from its test split.", "", specs, n_specs, 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (dist_size() > 1)
        return args_error(&cmd, "runs on one process: data parallelism over MPI is qkv train's");
    if (embd % heads)
        return args_error(&cmd, "--heads %d does not divide --embd %d", heads, embd);
    qkv_model_options opts;
    if ((rc = model_options_choose(&cmd, &opt_args, &(qkv_model_options){0}, &opts)) >= 0)
        return rc;
    const qkv_seq2seq_task *task = qkv_seq2seq_task_find(task_name);
    if (!task)
        return args_error(&cmd, "--task: %s", qkv_last_error());
    if ((rc = run_check(&cmd, &ro)) >= 0)
        return rc;
    if (run_start(&cmd, &ro) < 0 || run_precision(&ro) < 0)
        return 1;

    /* The model is this function's; the run owns its batch. */
    qkv_seq2seq *m = NULL;
    qkv_training *run = NULL;
    qkv_training_model tm;
    if (ro.resume) {
        if ((m = qkv_seq2seq_load(ro.resume)) && qkv_seq2seq_training_model(m, task, &tm) == 0)
            run = qkv_training_resume(&tm, ro.resume, ro.iters);
    } else {
        qkv_seq2seq_config mc = qkv_seq2seq_config_for(task, layers, heads, embd, dropout);
        mc.opts = opts;
        qkv_train_config tc = run_config(&ro);
        qkv_tokenizer chars;
        if (qkv_seq2seq_task_chars(task, &chars) == 0 &&
            (m = qkv_seq2seq_new(&mc, &chars, tc.seed)) &&
            qkv_seq2seq_training_model(m, task, &tm) == 0)
            run = run_new(&tm, &ro);
    }
    if (!run) {
        qkv_seq2seq_free(m);
        cli_release_outputs();
        return fail("train");
    }
    run_note(&ro, run); /* a resumed run's own --eval-every and --log-every */
    const qkv_seq2seq_config *mc = &m->cfg;
    const qkv_train_config *tc = &run->cfg;
    printf("task %s: inputs up to %d characters, outputs up to %d, alphabet of %d\n", task->name,
           task->max_input, task->max_output, m->chars.size);
    char options[160];
    model_options_words(&mc->opts, options, sizeof options);
    printf("model: %d+%d layers, %d heads, width %d, dropout %g%s: %zu parameters\n", mc->n_layer,
           mc->n_layer, mc->n_head, mc->n_embd, mc->dropout, options, m->params->total);
    char step_size[64];
    if (tc->grad_accum > 1)
        snprintf(step_size, sizeof step_size, "%d micro-batches of %d pairs", tc->grad_accum,
                 tc->batch_size);
    else
        snprintf(step_size, sizeof step_size, "%d pairs", tc->batch_size);
    cli_threads_settle();
    train_print_plan(run, &ro, step_size);
    char resume_args[300];
    snprintf(resume_args, sizeof resume_args, "--task %s", task->name);
    /* Greedy decoding of eval_iters batches: about a step per batch. */
    const train_loop loop = {.prog = "qkv s2s train", .opts = &ro, .run = run,
                             .resume_args = resume_args, .eval_cost = tc->eval_iters,
                             .evaluate = evaluate};
    int status = train_loop_run(&loop);
    qkv_training_free(run);
    qkv_seq2seq_free(m);
    cli_release_outputs();
    return status;
}

/* Prints the first `left` wrong answers. */
typedef struct misses {
    int left;
} misses;

/* The accuracy callback: print a wrong answer while m->left lasts. */
static void show_miss(const char *input, const char *expected, const char *got, void *ud)
{
    misses *m = ud;
    if (m->left-- > 0)
        printf("  %-34s expected %s, got %s\n", input, expected, got[0] ? got : "(nothing)");
}

/* qkv s2s eval: held-out exact-match accuracy of a checkpoint. */
static int s2s_eval(int argc, char **argv)
{
    const char *ckpt = NULL, *task_name = "dates", *precision = NULL;
    int n = 1000, seed = 7, show = 5, threads = ARG_AUTO;
    bool no_cross = false;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &ckpt, 0, 0, "CKPT", "checkpoint written by qkv s2s train"},
        {"--task", ARG_STR, &task_name, 0, 0, "NAME", "the task whose test split to use"},
        {"--n", ARG_INT, &n, 1, 1e7, "N", "held-out pairs to decode"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "seed of the held-out pairs"},
        {"--show", ARG_INT, &show, 0, 1e6, "K", "wrong answers to print"},
        {"--no-cross", ARG_FLAG, &no_cross, 0, 0, NULL,
         "ablation: zero every cross-attention's output, so the decoder cannot see the input"},
        {"--threads", ARG_THREADS, &threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
        {"--precision", ARG_STR, &precision, 0, 0, "NAME", PRECISION_FLAG_HELP},
    };
    const arg_cmd cmd = {"s2s eval", "Exact-match accuracy of greedy decoding on held-out pairs "
                         "(the task's test split), and a few wrong answers.", "", specs,
                         (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (!ckpt)
        return args_error(&cmd, "--ckpt is required");
    const qkv_seq2seq_task *task = qkv_seq2seq_task_find(task_name);
    if (!task)
        return args_error(&cmd, "--task: %s", qkv_last_error());
    if ((rc = precision_flag_use(&cmd, precision)) != 0)
        return rc;
    cli_use_threads(threads);
    qkv_seq2seq *m = qkv_seq2seq_load(ckpt);
    if (!m)
        return fail("eval");
    if (no_cross)
        qkv_seq2seq_zero_cross(m);
    printf("wrong answers (first %d):\n", show);
    misses left = {show};
    double t0 = cli_now(), acc = qkv_seq2seq_accuracy(m, task, n, (uint64_t)seed, show_miss, &left);
    if (isnan(acc)) {
        qkv_seq2seq_free(m);
        return fail("eval");
    }
    if (left.left == show)
        printf("  (none)\n");
    printf("%s%s: exact match %.2f%% on %d held-out %s pairs (%d wrong; %.1fs)\n", ckpt,
           no_cross ? " without cross-attention" : "", 100 * acc, n, task->name,
           n - (int)lround(acc * n), cli_now() - t0);
    qkv_seq2seq_free(m);
    return 0;
}

/* Decode the n inputs with the model saved at ckpt and print one answer per line; 0 or 1. */
static int decode_inputs(const char *ckpt, int n, const char *const *inputs)
{
    qkv_seq2seq *m = qkv_seq2seq_load(ckpt);
    if (!m)
        return fail("run");
    /* An answer has at most max_tgt characters and its NUL. */
    size_t width = (size_t)m->cfg.max_tgt + 1;
    char *text = malloc((size_t)n * width), **outs = malloc((size_t)n * sizeof *outs);
    int rc = text && outs ? 0 : qkv_set_error("out of memory");
    for (int i = 0; rc == 0 && i < n; i++)
        outs[i] = text + (size_t)i * width;
    if (rc == 0)
        rc = qkv_seq2seq_translate(m, n, inputs, outs);
    for (int i = 0; rc == 0 && i < n; i++)
        puts(outs[i]);
    free(text);
    free(outs);
    qkv_seq2seq_free(m);
    return rc < 0 ? fail("run") : 0;
}

/* qkv s2s run: decode the INPUTs given on the command line. */
static int s2s_run(int argc, char **argv)
{
    const char *ckpt = NULL, *precision = NULL;
    int threads = 1;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &ckpt, 0, 0, "CKPT", "checkpoint written by qkv s2s train"},
        {"--threads", ARG_THREADS, &threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
        {"--precision", ARG_STR, &precision, 0, 0, "NAME", PRECISION_FLAG_HELP},
    };
    /* Every word after `run` may be an INPUT. */
    const arg_cmd cmd = {"s2s run", "Decode each INPUT greedily and print the answer on its own "
                         "line.", "INPUT...", specs, (int)(sizeof specs / sizeof specs[0]),
                         argc - 1};
    const char **pos = malloc((size_t)argc * sizeof *pos);
    if (!pos) {
        fprintf(stderr, "qkv s2s run: out of memory\n");
        return 1;
    }
    /* rc stays -1 while the command line is good, so each check runs only if the last passed. */
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc < 0 && !ckpt)
        rc = args_error(&cmd, "--ckpt is required");
    if (rc < 0 && n_pos == 0)
        rc = args_error(&cmd, "give at least one INPUT, e.g. \"March 3rd, 1998\"");
    if (rc < 0 && (rc = precision_flag_use(&cmd, precision)) == 0) {
        cli_use_threads(threads);
        rc = decode_inputs(ckpt, n_pos, pos);
    }
    free(pos);
    return rc;
}

int cmd_s2s(int argc, char **argv)
{
    static const cli_command subs[] = {
        {"train", s2s_train, "train on pairs from a generated task"},
        {"eval", s2s_eval, "exact-match accuracy on held-out pairs (--no-cross: the ablation)"},
        {"run", s2s_run, "decode the given inputs"},
    };
    static const cli_menu menu = {.prog = "qkv s2s", .noun = "subcommand",
                                  .summary = "The encoder-decoder with cross-attention.",
                                  .cmds = subs, .n_cmds = (int)(sizeof subs / sizeof subs[0])};
    return cli_dispatch(&menu, argc, argv);
}
