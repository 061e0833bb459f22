/* qkv train: train the character GPT on a text file, with progress, periodic
 * evaluation, checkpoints, a CSV log and an SVG plot of the losses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "commands.h"
#include "dist.h"
#include "full_eval.h"
#include "model_options.h"
#include "output.h"
#include "qkv/qkv.h"
#include "ranks_agree.h"
#include "recipe.h"
#include "run_options.h"
#include "runtime.h"
#include "threads.h"
#include "tokenizer_bits.h"
#include "tokenizer_text.h"
#include "train_loop.h"
#include "train_ranks.h"
#include "weights.h"

/* What the GPT's evaluations read: the model and its text. */
typedef struct gpt_eval {
    const qkv_gpt *m;
    const qkv_corpus *text;
    double bytes_per_token; /* of text: for the losses in bits per byte */
} gpt_eval;

/* The GPT's evaluation for the loop: the train and val losses, each split
 * in half the time the loop gives (with several ranks, each evaluates its
 * slice of every batch and the means are averaged); exact, the val loss over
 * the whole split (qkv_gpt_eval_split; every rank reads all of it) with its
 * standard error, the train loss sampled in all the time given. */
static int eval_gpt(qkv_training *run, const gpt_eval *g, double *deadline, train_eval *e,
                    bool exact)
{
    double end = *deadline, now = cli_now();
    *deadline = exact ? end : now + (end - now) / 2;
    double loss[2];
    int done[2] = {0, 0};
    loss[0] = qkv_training_eval(run, QKV_SPLIT_TRAIN);
    done[0] = run->eval_done;
    *deadline = end;
    qkv_split_loss f = {0};
    if (exact) {
        loss[1] = isnan(loss[0]) || qkv_gpt_eval_split(g->m, g->text, QKV_SPLIT_VAL,
                                                       FULL_EVAL_MAX_TOKENS, run->arena, &f) < 0
                      ? NAN : f.loss;
    } else {
        loss[1] = qkv_training_eval(run, QKV_SPLIT_VAL);
        done[1] = run->eval_done;
    }
    bool failed = isnan(loss[0]) || isnan(loss[1]);
    if (ranks_any(failed))
        return failed ? -1 : qkv_set_error("another rank's evaluation failed (its message is above)");
    ranks_mean(loss, exact ? 1 : 2); /* the exact one is the same on every rank */
    const qkv_train_config *c = &run->cfg;
    double tokens = (double)(done[0] + done[1]) * c->batch_size * g->m->cfg.block_size;
    *e = (train_eval){.train = loss[0], .val = loss[1],
                      .share = exact ? 1 : (done[0] + done[1]) / (2.0 * c->eval_iters)};
    if (exact) {
        snprintf(e->summary, sizeof e->summary,
                 "train loss %.4f, val loss %.4f +- %.4f (the whole split)", e->train, e->val, f.se);
        append_bits_per_byte(e->summary, sizeof e->summary, e->train, e->val,
                             g->bytes_per_token);
        snprintf(e->used, sizeof e->used, "%d batches + %lld windows, %.0f tokens", done[0],
                 (long long)f.windows, tokens + (double)f.tokens);
        return 0;
    }
    snprintf(e->summary, sizeof e->summary, "train loss %.4f, val loss %.4f", e->train, e->val);
    append_bits_per_byte(e->summary, sizeof e->summary, e->train, e->val,
                         g->bytes_per_token);
    int n = snprintf(e->used, sizeof e->used, "%d+%d", done[0], done[1]);
    if (e->share < 1)
        n += snprintf(e->used + n, sizeof e->used - (size_t)n, " of %d+%d", c->eval_iters,
                      c->eval_iters);
    snprintf(e->used + n, sizeof e->used - (size_t)n, " batches, %.0f tokens", tokens);
    return 0;
}

/* The loop's evaluations: sampled, and a budgeted run's last (see train_loop.h). */
static int evaluate(qkv_training *run, const void *ud, double *deadline, train_eval *e)
{
    return eval_gpt(run, ud, deadline, e, false);
}
static int evaluate_final(qkv_training *run, const void *ud, double *deadline, train_eval *e)
{
    return eval_gpt(run, ud, deadline, e, true);
}
static double final_cost(qkv_training *run, const void *ud)
{
    const gpt_eval *g = ud;
    return full_eval_cost(g->m, g->text, QKV_SPLIT_VAL, run->arena);
}

/* The training model of m on corpus: of BPE tokens when bpe is not NULL. */
static int gpt_training_model(qkv_gpt *m, const qkv_corpus *corpus, const qkv_bpe *bpe,
                              qkv_training_model *tm)
{
    return bpe ? qkv_gpt_training_model_bpe(m, corpus, bpe, tm)
               : qkv_gpt_training_model(m, corpus, tm);
}

/* A --config preset: the model's size and options, the run's length and schedule. */
typedef struct preset {
    const char *name;
    int iters, batch, block, layers, heads, embd;
    double dropout, lr, min_lr, wsd;
    qkv_model_options opts; /* under the flags given */
} preset;

/* The first is the default. */
static const preset presets[] = {
    /*        iters   B    T  L  H    C  drop  lr    min_lr wsd  options */
    {"baby",  2000, 12,  64, 4, 4, 128, 0.0, 1e-3, 1e-4, 0,   {0}},
    {"small", 5000, 64, 256, 6, 6, 384, 0.2, 1e-3, 1e-4, 0,   {0}},
    /* baby's model with the options that helped in the README's ablation, twice
     * the rate, and a context of 128 at baby's tokens per step; 10000 steps is
     * about 5 minutes on 2 cores. With --time its size, batch, dropout, rate
     * and optimizer are the budget's recipe (recipe.h) instead. */
    {"fast", 10000,  6, 128, 4, 4, 128, 0.0, 2e-3, 2e-4, 0.3,
     {.positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM,
      .activation = QKV_ACTIVATION_RELU2, .qk_norm = true}},
};

/* The model's shape as the command line holds it. */
typedef struct model_shape {
    int *block, *layers, *heads, *embd;
    double *dropout;
} model_shape;

/* A budgeted run's recipe (recipe.h) for corpus on this machine, measured
 * now (every rank the same: their mean speed) inside the budget (its clock
 * starts here): the shape (no flag sized it), and into ro whatever of the
 * rest no flag gave; said in one line. -1, or the exit status after saying
 * why (a failed measurement, a --min-lr above the recipe's rate, a batch
 * the ranks cannot share). */
static int use_recipe(const arg_cmd *cmd, const qkv_corpus *corpus, const qkv_bpe *bpe,
                      const qkv_model_options *opts, run_options *ro, model_shape sh)
{
    const int vocab = bpe ? qkv_bpe_size(bpe) : corpus->tok.size;
    double t0 = ro->clock_start = cli_now();
    double flops = recipe_measure(corpus, bpe, opts, (uint64_t)ro->seed, ro->budget);
    if (ranks_any(isnan(flops))) {
        fprintf(stderr, "qkv train: measuring this machine's speed: %s\n",
                isnan(flops) ? qkv_last_error() : "another rank's measurement failed");
        return 1;
    }
    ranks_mean(&flops, 1);
    recipe r;
    recipe_choose(ro->budget - (cli_now() - t0), flops, (double)corpus->n_train, vocab, &r);
    *sh.block = r.block, *sh.layers = r.layers, *sh.heads = r.heads, *sh.embd = r.embd;
    if (!args_given(cmd, "--batch"))
        ro->batch = r.batch;
    struct { const char *flag; double *dest, value; } reals[] = {
        {"--dropout", sh.dropout, r.dropout}, {"--lr", &ro->lr, r.lr},
        {"--min-lr", &ro->min_lr, r.min_lr}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!args_given(cmd, reals[i].flag))
            *reals[i].dest = reals[i].value;
    if (ro->min_lr > ro->lr)
        return args_error(cmd, "--min-lr %g is above the recipe's --lr %g", ro->min_lr, ro->lr);
    if (ro->batch % dist_size())
        return args_error(cmd, "the recipe's --batch %d does not split evenly over %d ranks: "
                          "give --batch", ro->batch, dist_size());
    char words[256];
    recipe_words(&r, ro->budget, words, sizeof words);
    printf("%s (measured in %.1f s of it)\n", words, cli_now() - t0);
    return -1;
}

/* --init's model is the file's: the flags that would shape another are refused
 * (--block and --heads excepted). -1, or the exit status after saying why. */
static int init_check(const arg_cmd *cmd, const qkv_model_options *opts)
{
    const char *shaping[] = {"--layers", "--embd", "--dropout", "--config", "--resume"};
    for (size_t i = 0; i < sizeof shaping / sizeof *shaping; i++)
        if (args_given(cmd, shaping[i]))
            return args_error(cmd, "--init starts from the file's model: no %s", shaping[i]);
    if (memcmp(opts, &(qkv_model_options){0}, sizeof *opts) != 0)
        return args_error(cmd, "--init starts from GPT-2's model: no model option");
    return -1;
}

/* The text of an --init run in the ids of m's tokenizer (weights.h), or with
 * "chars" its own characters (as many as m's tokens). NULL with a message. */
static qkv_corpus *init_corpus(const qkv_gpt *m, const char *data, const char *tokenizer,
                               qkv_bpe **bpe, double *bytes_per_token)
{
    qkv_tokenizer vocab;
    bool chars = strcmp(tokenizer, "chars") == 0;
    if (!chars && weights_tokenizer(tokenizer, m->cfg.vocab_size, &vocab, bpe) < 0)
        return NULL;
    return tokenizer_corpus(data, chars ? NULL : &vocab, 0, bpe, bytes_per_token);
}

/* The size of the file at path in bytes, 0 when it cannot be read (its
 * loader then says why). */
static double text_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : 0;
}

/* How qkv train words and bounds its run options. */
static const run_kind gpt_run_kind = {.iters_flag = "--iters", .input_flag = "--data",
                                      .batch_help = "sequences per step", .max_batch = 1e6,
                                      .max_eval_iters = 1e6, .wsd = true};

int cmd_train(int argc, char **argv)
{
    /* Defaults: the model and run length of the first preset, the optimizer's
     * settings from the library, so --help shows what a bare run does. */
    const preset *dp = &presets[0];
    const qkv_train_config dt = qkv_train_defaults();
    run_options ro = {.kind = &gpt_run_kind, .iters = dp->iters, .batch = dp->batch,
                      .grad_accum = 1, .lr = dt.lr,
                      .min_lr = dt.min_lr, .warmup = dt.warmup,
                      .weight_decay = dt.weight_decay, .grad_clip = dt.grad_clip,
                      .eval_every = 500, .eval_iters = dt.eval_iters, .log_every = 100,
                      .seed = (int)dt.seed, .threads = ARG_AUTO, .out = "gpt.ckpt"};
    const char *data = getenv("QKV_DATA"), *config = dp->name, *tokenizer = "chars", *init = NULL;
    int block = dp->block, layers = dp->layers, heads = dp->heads, embd = dp->embd;
    double dropout = dp->dropout;
    model_option_args opt_args = {0};
    const arg_spec head[] = {
        {"--data", ARG_STR, &data, 0, 0, "FILE", "training text (default: $QKV_DATA)"},
        {"--config", ARG_STR, &config, 0, 0, "NAME",
         "preset: baby, small or fast; flags below override it. A new run with --time and no "
         "size flag, with no --config or fast, is the budget's recipe: its tokenizer, size, "
         "dropout and rate chosen from the time, this machine's speed and the text (budget: "
         "insist on it)"},
        {"--tokenizer", ARG_STR, &tokenizer, 0, 0, "KIND",
         "chars (one token a byte), bpe:N (a BPE of N tokens trained on the training split), "
         "FILE.bpe (a saved BPE) or a folder of GPT-2's vocab.json and merges.txt; with --init: "
         "chars, the folder, "
         "bytes (every byte its own id) or a qkv checkpoint's"},
        {"--init", ARG_STR, &init, 0, 0, "FILE.safetensors",
         "fine-tune GPT-2's weights (Hugging Face's layout): the sizes are the file's, "
         "--block may shorten the context, --heads names the heads"},
    };
    enum { N_SIZES = 5 };
    arg_spec model[N_SIZES + MODEL_OPTION_SPECS] = {
        {"--block", ARG_INT, &block, 1, 65536, "T", "context length"},
        {"--layers", ARG_INT, &layers, 1, 256, "L", "transformer blocks"},
        {"--heads", ARG_INT, &heads, 1, 4096, "H", "attention heads (must divide --embd)"},
        {"--embd", ARG_INT, &embd, 1, 65536, "C", "model width"},
        {"--dropout", ARG_REAL, &dropout, 0, QKV_DROPOUT_MAX, "P", "dropout probability in training"},
    };
    int n_model = N_SIZES + model_option_specs(&opt_args, model + N_SIZES);
    arg_spec specs[sizeof head / sizeof *head + sizeof model / sizeof *model + RUN_SPECS_MAX];
    int n_specs = run_specs(&ro, head, (int)(sizeof head / sizeof *head), model, n_model, specs);
    const arg_cmd cmd = {"train", "Train the character GPT on a text file. In a `make MPI=1` build, "
                         "`mpirun -np N qkv train ...` trains it data-parallel on N processes "
                         "(--batch is the global batch; across machines: mpirun --hostfile HOSTS).", "", specs,
                         n_specs, 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;

    /* Presets first, then every flag given explicitly wins. A new run with
     * --time and no flag that sizes the model is the budget's recipe
     * (recipe.h): fast's options, its sizes, tokenizer, dropout and rate
     * chosen from the budget, the machine's speed and the text, so that a
     * longer budget buys a better model. That holds with no --config, with
     * --config fast, and with --config budget (which insists on it). */
    bool sized = false;
    for (int i = 0; i < N_SIZES - 1; i++) /* --block, --layers, --heads, --embd */
        sized |= args_given(&cmd, model[i].name);
    const bool budget = strcmp(config, "budget") == 0;
    if (budget && (!ro.time || ro.resume || init || sized))
        return args_error(&cmd, "--config budget sizes a new model to --time: give --time, "
                          "and no --resume, --init or size flag");
    const bool by_recipe = budget || (ro.time && !ro.resume && !init && !sized &&
                                      (!args_given(&cmd, "--config") || strcmp(config, "fast") == 0));
    if (by_recipe)
        config = "fast";
    const preset *ps = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(config, presets[i].name) == 0)
            ps = &presets[i];
    if (!ps)
        return args_error(&cmd, "--config: unknown preset '%s' (baby, small, fast or budget)",
                          config);
    struct { const char *flag; int *dest, value; } ints[] = {
        {"--iters", &ro.iters, ps->iters}, {"--batch", &ro.batch, ps->batch},
        {"--block", &block, ps->block}, {"--layers", &layers, ps->layers},
        {"--heads", &heads, ps->heads}, {"--embd", &embd, ps->embd}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!args_given(&cmd, ints[i].flag))
            *ints[i].dest = ints[i].value;
    struct { const char *flag; double *dest, value; } reals[] = {
        {"--dropout", &dropout, ps->dropout}, {"--lr", &ro.lr, ps->lr},
        {"--min-lr", &ro.min_lr, ps->min_lr}, {"--wsd", &ro.wsd, ps->wsd}};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!args_given(&cmd, reals[i].flag))
            *reals[i].dest = reals[i].value;
    qkv_model_options opts;
    if ((rc = model_options_choose(&cmd, &opt_args, &ps->opts, &opts)) >= 0)
        return rc;
    if (init && (rc = init_check(&cmd, &opts)) >= 0)
        return rc;
    if (embd % heads)
        return args_error(&cmd, "--heads %d does not divide --embd %d", heads, embd);
    if (!data)
        return args_error(&cmd, "no training text: give --data FILE or set QKV_DATA");
    char recipe_tokens[32]; /* the recipe's tokenizer, unless --tokenizer chose */
    if (by_recipe && !args_given(&cmd, "--tokenizer")) {
        int n = recipe_tokenizer(text_bytes(data));
        snprintf(recipe_tokens, sizeof recipe_tokens, n ? "bpe:%d" : "chars", n);
        tokenizer = recipe_tokens;
    }
    int bpe_vocab = 0; /* with --init, the tokenizer is the model's (weights.h) */
    if (!init && tokenizer_parse(tokenizer, &bpe_vocab) < 0)
        return args_error(&cmd, "%s", qkv_last_error());
    if ((rc = run_check(&cmd, &ro)) >= 0)
        return rc;
    if (ro.batch % dist_size())
        return args_error(&cmd, "--batch %d does not split evenly over %d ranks", ro.batch,
                          dist_size());
    qkv_protect_input(data); /* a missing corpus is said below, by the loader */
    if (ranks_meet("qkv train") < 0) /* every rank is here to train (see ranks_agree.h) */
        return 1;
    if (run_start(&cmd, &ro) < 0 || run_precision(&ro) < 0)
        return 1;

    /* The model and its text are this function's; the run owns its batches. */
    qkv_gpt *m = NULL;
    qkv_corpus *corpus = NULL;
    qkv_training *run = NULL;
    qkv_training_model tm;
    qkv_bpe *bpe = NULL; /* a model of BPE tokens' tokenizer (tokenizer_text.h) */
    double bytes_per_token;
    const model_shape shape = {&block, &layers, &heads, &embd, &dropout};
    rc = -1;
    if (ro.resume) {
        qkv_tokenizer vocab;
        if ((m = qkv_gpt_load_bpe(ro.resume, &vocab, &bpe)) &&
            (corpus = tokenizer_corpus(data, &vocab, 0, &bpe, &bytes_per_token)) &&
            gpt_training_model(m, corpus, bpe, &tm) == 0)
            run = qkv_training_resume(&tm, ro.resume, ro.iters);
    } else if (init) {
        m = weights_load(init, args_given(&cmd, "--heads") ? heads : 0,
                         args_given(&cmd, "--block") ? block : 0);
        if (m && (corpus = init_corpus(m, data, tokenizer, &bpe, &bytes_per_token)) &&
            gpt_training_model(m, corpus, bpe, &tm) == 0)
            run = run_new(&tm, &ro);
    } else if ((bpe_vocab != TOKENIZER_LOADED || (bpe = tokenizer_load_path(tokenizer))) &&
               (corpus = tokenizer_corpus(data, NULL, bpe_vocab, &bpe, &bytes_per_token)) &&
               (!by_recipe || (rc = use_recipe(&cmd, corpus, bpe, &opts, &ro, shape)) < 0)) {
        qkv_gpt_config mc = {.vocab_size = bpe ? qkv_bpe_size(bpe) : corpus->tok.size,
                             .block_size = block, .n_layer = layers,
                             .n_head = heads, .n_embd = embd, .dropout = dropout,
                             .opts = opts};
        qkv_train_config tc = run_config(&ro);
        if ((m = qkv_gpt_new(&mc, tc.seed)) && gpt_training_model(m, corpus, bpe, &tm) == 0)
            run = run_new(&tm, &ro);
    }
    if (rc >= 0) { /* the recipe said why it stopped */
        qkv_corpus_free(corpus);
        qkv_bpe_free(bpe);
        cli_release_outputs();
        return rc;
    }
    run_note(&ro, run); /* a resumed run's own --eval-every and --log-every */
    /* Every rank built the same run, or none trains (see ranks_agree.h). */
    if (ranks_agree("qkv train", run, m, corpus, &ro) < 0) {
        qkv_training_free(run);
        qkv_gpt_free(m);
        qkv_corpus_free(corpus);
        qkv_bpe_free(bpe);
        cli_release_outputs();
        return 1;
    }
    if (dist_size() > 1)
        printf("%d ranks x %d threads: each computes %d of every %d sequences\n", dist_size(),
               qkv_threads(), run->cfg.batch_size / dist_size(), run->cfg.batch_size);
    const qkv_gpt_config *mc = &m->cfg;
    const qkv_train_config *tc = &run->cfg;
    int B = tc->batch_size, T = mc->block_size, K = tc->grad_accum > 1 ? tc->grad_accum : 1;
    printf("data %s: %zu %s, vocabulary %d, train %zu / val %zu\n", data, corpus->len,
           bpe ? "tokens" : "characters", mc->vocab_size, corpus->n_train,
           corpus->len - corpus->n_train);
    char options[160];
    model_options_words(&mc->opts, options, sizeof options);
    printf("model: %d layers, %d heads, width %d, block %d, dropout %g%s: %zu parameters\n",
           mc->n_layer, mc->n_head, mc->n_embd, mc->block_size, mc->dropout, options,
           m->params->total);
    char step_size[64];
    if (K > 1)
        snprintf(step_size, sizeof step_size, "%d micro-batches of %d x %d tokens", K, B, T);
    else
        snprintf(step_size, sizeof step_size, "%d x %d tokens", B, T);
    cli_threads_settle();
    train_print_plan(run, &ro, step_size);
    char resume_args[4200];
    snprintf(resume_args, sizeof resume_args, "--data %s", data);
    /* An evaluation runs 2·eval_iters forwards, each about a third of a step. */
    const gpt_eval text = {m, corpus, bytes_per_token};
    const train_loop loop = {.prog = "qkv train", .opts = &ro, .run = run,
                             .resume_args = resume_args, .tokens_per_step = (double)K * B * T,
                             .bytes_per_token = bytes_per_token,
                             .eval_cost = 2 * tc->eval_iters / 3.0, .evaluate = evaluate,
                             .ud = &text, .evaluate_final = evaluate_final,
                             .final_cost = final_cost};
    int status = train_loop_run(&loop);
    qkv_training_free(run);
    qkv_gpt_free(m);
    qkv_corpus_free(corpus);
    qkv_bpe_free(bpe);
    cli_release_outputs();
    return status;
}
