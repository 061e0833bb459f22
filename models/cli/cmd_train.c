/* qkv train: train the character GPT on a text file, with progress, periodic
 * evaluation, checkpoints, a CSV log and an SVG plot of the losses. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "dist.h"
#include "output.h"
#include "qkv/qkv.h"
#include "threads.h"
#include "train_loop.h"
#include "train_ranks.h"

/* The GPT's evaluation for the loop: the train and val losses (with several
 * ranks, each evaluates its slice of every batch and the means are averaged). */
static int evaluate(void *trainer, train_eval *e)
{
    qkv_trainer *t = trainer;
    double loss[2] = {qkv_trainer_eval(t, QKV_SPLIT_TRAIN), qkv_trainer_eval(t, QKV_SPLIT_VAL)};
    bool failed = isnan(loss[0]) || isnan(loss[1]);
    if (ranks_any(failed))
        return failed ? -1 : qkv_set_error("another rank's evaluation failed (its message is above)");
    ranks_mean(loss, 2);
    e->train = loss[0];
    e->val = loss[1];
    snprintf(e->summary, sizeof e->summary, "train loss %.4f, val loss %.4f", e->train, e->val);
    return 0;
}

/* A --config preset: the model's size and options, the run's length and schedule. */
typedef struct preset {
    const char *name;
    int iters, batch, block, layers, heads, embd;
    double dropout, lr, min_lr, wsd;
    bool rope, rmsnorm, relu2, qk_norm, untied;
} preset;

/* The first is the default. */
static const preset presets[] = {
    /*        iters   B    T  L  H    C  drop  lr    min_lr wsd  rope  rms   relu2 qk    untied */
    {"baby",  2000, 12,  64, 4, 4, 128, 0.0, 1e-3, 1e-4, 0, false, false, false, false, false},
    {"small", 5000, 64, 256, 6, 6, 384, 0.2, 1e-3, 1e-4, 0, false, false, false, false, false},
    /* baby's model with the options that helped in the README's ablation, twice
     * the rate, and a context of 128 at baby's tokens per step; 10000 steps is
     * about 5 minutes on 2 cores (or give --time). */
    {"fast", 10000,  6, 128, 4, 4, 128, 0.0, 2e-3, 2e-4, 0.3, true, true, true, true, false},
};

int cmd_train(int argc, char **argv)
{
    /* Defaults: the model and run length of the first preset, the optimizer's
     * settings from the library, so --help shows what a bare run does. */
    const preset *dp = &presets[0];
    const qkv_train_config dt = qkv_train_defaults();
    const char *data = getenv("QKV_DATA"), *config = dp->name, *out = "gpt.ckpt", *resume = NULL,
               *time = NULL;
    int iters = dp->iters, batch = dp->batch, block = dp->block, layers = dp->layers,
        heads = dp->heads, embd = dp->embd, warmup = dt.warmup;
    int eval_every = 500, eval_iters = dt.eval_iters, seed = (int)dt.seed,
        threads = omp_get_num_procs(), log_every = 100;
    double dropout = dp->dropout, lr = dt.lr, min_lr = dt.min_lr, weight_decay = dt.weight_decay,
           clip = dt.grad_clip;
    bool no_bias = false, force = false, rope = false, rmsnorm = false, relu2 = false,
         qk_norm = false, untied = false;
    double wsd = 0;
    const arg_spec specs[] = {
        {"--data", ARG_STR, &data, 0, 0, "FILE", "training text (default: $QKV_DATA)"},
        {"--config", ARG_STR, &config, 0, 0, "NAME", "preset: baby, small or fast; flags below override it"},
        {"--iters", ARG_INT, &iters, 1, 1e9, "N", "optimizer steps"},
        {"--time", ARG_STR, &time, 0, 0, "SECONDS",
         "train this long instead: 300, 90s, 5m (evaluations included)"},
        {"--batch", ARG_INT, &batch, 1, 1e6, "B", "sequences per step"},
        {"--block", ARG_INT, &block, 1, 65536, "T", "context length"},
        {"--layers", ARG_INT, &layers, 1, 256, "L", "transformer blocks"},
        {"--heads", ARG_INT, &heads, 1, 4096, "H", "attention heads (must divide --embd)"},
        {"--embd", ARG_INT, &embd, 1, 65536, "C", "model width"},
        {"--dropout", ARG_REAL, &dropout, 0, 0.95, "P", "dropout probability in training"},
        {"--no-bias", ARG_FLAG, &no_bias, 0, 0, NULL, "Linear layers and LayerNorms without biases"},
        {"--rope", ARG_FLAG, &rope, 0, 0, NULL, "rotary position embeddings instead of learned ones"},
        {"--rmsnorm", ARG_FLAG, &rmsnorm, 0, 0, NULL, "RMSNorm instead of LayerNorm"},
        {"--relu2", ARG_FLAG, &relu2, 0, 0, NULL, "ReLU² instead of GELU in the MLP"},
        {"--qk-norm", ARG_FLAG, &qk_norm, 0, 0, NULL, "RMS-normalise each head's queries and keys"},
        {"--untied", ARG_FLAG, &untied, 0, 0, NULL, "an lm head of its own (not the token embedding)"},
        {"--lr", ARG_REAL, &lr, 1e-12, 10, "LR", "peak learning rate"},
        {"--min-lr", ARG_REAL, &min_lr, 0, 10, "LR", "learning rate at the end of the decay"},
        {"--warmup", ARG_INT, &warmup, 0, 1e9, "N", "linear warmup steps"},
        {"--wsd", ARG_REAL, &wsd, 0, 1, "FRAC", "constant lr, then linear decay over the last FRAC "
                                                "(0 = cosine)"},
        {"--weight-decay", ARG_REAL, &weight_decay, 0, 10, "WD", "AdamW weight decay on matrices"},
        {"--grad-clip", ARG_REAL, &clip, 0, 1e9, "NORM", "global gradient-norm limit (0 = none)"},
        {"--eval-every", ARG_INT, &eval_every, 1, 1e9, "N", "evaluate and checkpoint every N steps"},
        {"--eval-iters", ARG_INT, &eval_iters, 1, 1e6, "N", "batches per evaluation"},
        {"--log-every", ARG_INT, &log_every, 1, 1e9, "N", "progress line every N steps"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "seed of init, batches and dropout"},
        {"--threads", ARG_INT, &threads, 1, 1024, "N", "OpenMP threads"},
        {"--out", ARG_STR, &out, 0, 0, "CKPT", "checkpoint to write (also CKPT.csv, CKPT.svg)"},
        {"--resume", ARG_STR, &resume, 0, 0, "CKPT", "continue the run saved in CKPT"},
        {"--force", ARG_FLAG, &force, 0, 0, NULL, "replace an existing --out (a new run refuses to)"},
    };
    const arg_cmd cmd = {"train", "Train the character GPT on a text file. In a `make MPI=1` build, "
                         "`mpirun -np N qkv train ...` trains it data-parallel on N processes "
                         "(--batch is the global batch; across machines: mpirun --hostfile HOSTS).", "", specs,
                         (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;

    /* Presets first, then every flag given explicitly wins. */
    const preset *ps = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(config, presets[i].name) == 0)
            ps = &presets[i];
    if (!ps)
        return args_error(&cmd, "--config: unknown preset '%s' (baby, small or fast)", config);
    struct { const char *flag; int *dest, value; } ints[] = {
        {"--iters", &iters, ps->iters}, {"--batch", &batch, ps->batch}, {"--block", &block, ps->block},
        {"--layers", &layers, ps->layers}, {"--heads", &heads, ps->heads}, {"--embd", &embd, ps->embd}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!args_given(&cmd, ints[i].flag))
            *ints[i].dest = ints[i].value;
    struct { const char *flag; double *dest, value; } reals[] = {
        {"--dropout", &dropout, ps->dropout}, {"--lr", &lr, ps->lr}, {"--min-lr", &min_lr, ps->min_lr},
        {"--wsd", &wsd, ps->wsd}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!args_given(&cmd, reals[i].flag))
            *reals[i].dest = reals[i].value;
    rope |= ps->rope, rmsnorm |= ps->rmsnorm, relu2 |= ps->relu2, qk_norm |= ps->qk_norm,
        untied |= ps->untied;
    if (embd % heads)
        return args_error(&cmd, "--heads %d does not divide --embd %d", heads, embd);
    if (min_lr > lr)
        return args_error(&cmd, "--min-lr %g is above --lr %g", min_lr, lr);
    if (!data)
        return args_error(&cmd, "no training text: give --data FILE or set QKV_DATA");
    double budget;
    if ((rc = train_budget_arg(&cmd, time, "--iters", &budget)) >= 0)
        return rc;
    const char *fixed[] = {"--config", "--batch", "--block", "--layers", "--heads", "--embd",
                           "--dropout", "--no-bias", "--rope", "--rmsnorm", "--relu2", "--qk-norm",
                           "--untied", "--lr", "--min-lr", "--warmup", "--wsd", "--weight-decay",
                           "--grad-clip", "--eval-iters", "--seed"};
    if ((rc = train_refuse_on_resume(&cmd, resume, fixed, (int)(sizeof fixed / sizeof *fixed))) >= 0)
        return rc;
    if (batch % dist_size())
        return args_error(&cmd, "--batch %d does not split evenly over %d ranks", batch, dist_size());
    if (resume && !args_given(&cmd, "--out"))
        out = resume; /* a resumed run keeps saving where it was saved */
    qkv_protect_input(data); /* a missing corpus is said below, by the loader */
    /* Rank 0 writes the files, so it claims them; every rank learns whether that worked. */
    if (ranks_any(ranks_writer() && cli_claim_outputs("train", out, force, resume) < 0))
        return 1;
    cli_use_threads(threads);

    qkv_trainer *t = NULL;
    qkv_corpus *corpus = NULL;
    if (resume) {
        t = qkv_trainer_resume(resume, data, args_given(&cmd, "--iters") ? iters : 0);
    } else if ((corpus = qkv_corpus_load(data, NULL))) {
        qkv_gpt_config mc = {.vocab_size = corpus->tok.size, .block_size = block, .n_layer = layers,
                             .n_head = heads, .n_embd = embd, .dropout = dropout,
                             .no_bias = no_bias, .rope = rope, .rmsnorm = rmsnorm,
                             .relu2 = relu2, .qk_norm = qk_norm, .untied = untied};
        qkv_train_config tc = {.iters = iters, .batch_size = batch, .lr = lr, .min_lr = min_lr,
                               .warmup = warmup, .wsd_decay = wsd, .weight_decay = weight_decay,
                               .grad_clip = clip,
                               .eval_iters = eval_iters, .seed = (uint64_t)seed};
        t = qkv_trainer_new(&mc, &tc, corpus);
    }
    /* A rank that could not start must not leave the others waiting. */
    if (ranks_any(!t)) {
        fprintf(stderr, "qkv train: %s\n",
                t ? "another rank could not start (its message is above)" : qkv_last_error());
        qkv_trainer_free(t);
        qkv_corpus_free(corpus);
        qkv_output_unlock(out);
        return 1;
    }
    if (dist_size() > 1)
        printf("%d ranks x %d threads: each computes %d of every %d sequences\n", dist_size(),
               threads, t->run->cfg.batch_size / dist_size(), t->run->cfg.batch_size);
    const qkv_gpt_config *mc = &t->model->cfg;
    const qkv_train_config *tc = &t->run->cfg;
    const qkv_corpus *c = t->corpus;
    int B = tc->batch_size, T = mc->block_size;
    printf("data %s: %zu characters, vocabulary %d, train %zu / val %zu\n", data, c->len,
           c->tok.size, c->n_train, c->len - c->n_train);
    printf("model: %d layers, %d heads, width %d, block %d, dropout %g%s%s%s%s%s: %zu parameters\n",
           mc->n_layer, mc->n_head, mc->n_embd, mc->block_size, mc->dropout,
           mc->rope ? ", rope" : "", mc->rmsnorm ? ", rmsnorm" : "", mc->relu2 ? ", relu2" : "",
           mc->qk_norm ? ", qk-norm" : "", mc->untied ? ", untied head" : "",
           t->model->params->total);
    char step_size[64];
    snprintf(step_size, sizeof step_size, "%d x %d tokens", B, T);
    train_print_plan(t->run, budget, step_size, threads, resume != NULL);
    char resume_args[4200];
    snprintf(resume_args, sizeof resume_args, "--data %s", data);
    /* An evaluation runs 2·eval_iters forwards, each about a third of a step. */
    const train_loop loop = {.prog = "qkv train", .iters_flag = "--iters", .run = t->run,
                             .out = out, .resume = resume, .resume_args = resume_args,
                             .log_every = log_every, .eval_every = eval_every, .budget = budget,
                             .tokens_per_step = (double)B * T, .eval_cost = 2 * tc->eval_iters / 3.0,
                             .evaluate = evaluate, .ud = t};
    int status = train_loop_run(&loop);
    qkv_trainer_free(t);
    qkv_corpus_free(corpus);
    qkv_output_unlock(out);
    return status;
}
