/* qkv attn: attention weights of a trained model as an SVG heatmap (the
 * encoder-decoder's cross-attention while it decodes an input, or the
 * character GPT's causal self-attention over a text) and as an interactive
 * page of every attention, layer and head (--html). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "attn_live.h"
#include "commands.h"
#include "output.h"
#include "qkv/qkv.h"
#include "qkv/seq2seq.h"
#include "cli/viz/viz.h"
#include "threads.h"

/* What the user asked to draw. */
typedef struct attn_opts {
    const char *ckpt, *input, *text;
    const char *out;  /* the SVG, or NULL for none */
    const char *html; /* the page, or NULL for none */
    int layer; /* -1: the last */
    int head;  /* -1: every head */
    bool average;
    bool force; /* replace existing files */
    bool live;  /* the page runs the model itself (WebAssembly) */
    const char *rows; /* "I:J": the GPT SVG draws query rows i..j-1 only; NULL: every one */
} attn_opts;

/* The query rows [*row0, *row0 + *n) of a text of T characters (or tokens)
 * that --rows names (every row without it); -1 with a message naming the
 * option when it is not I:J with 0 <= I < J <= T. */
static int pick_rows(const char *rows, int T, bool tokens, int *row0, int *n)
{
    int i = 0, j = T, end = 0;
    if (rows && (sscanf(rows, "%d:%d%n", &i, &j, &end) != 2 || rows[end] || i < 0 || j <= i ||
                 j > T))
        return qkv_set_error("--rows %s: give I:J, the query rows i to j-1, with 0 <= I < J <= "
                             "%d (the text's length%s)", rows, T, tokens ? " in tokens" : "");
    *row0 = i, *n = j - i;
    return 0;
}

/* The layer to draw (o->layer, or the last of n_layer), once --layer and
 * --head are checked against the model, before anything is written: -1 with
 * a message naming the option and its range when either does not exist. */
static int pick_layer(const attn_opts *o, int n_layer, int n_head)
{
    if (o->layer >= n_layer)
        return qkv_set_error("--layer %d does not exist; the model has layers 0 to %d", o->layer,
                             n_layer - 1);
    if (o->head >= n_head)
        return qkv_set_error("--head %d does not exist; the model has heads 0 to %d", o->head,
                             n_head - 1);
    return o->layer < 0 ? n_layer - 1 : o->layer;
}

/* Cross-attention of the encoder-decoder while it decodes o->input. */
static int draw_seq2seq(const attn_opts *o, qkv_arena *arena)
{
    qkv_seq2seq *m = qkv_seq2seq_load(o->ckpt);
    if (!m)
        return -1;
    int layer = pick_layer(o, m->cfg.n_layer, m->cfg.n_head);
    if (layer < 0) {
        qkv_seq2seq_free(m);
        return -1;
    }
    attn_live live = {0};
    int made = o->live ? attn_live_make(&live, NULL, NULL, m) : 0;
    int wrote = made == 0 && o->html ? attn_html_seq2seq_live(o->html, m, o->input,
                                                              o->live ? &live : NULL) : -1;
    attn_live_free(&live);
    if (wrote == 0)
        printf("%s: wrote %s (encoder, decoder and cross-attention, %d layers, %d heads)\n",
               o->input, o->html, m->cfg.n_layer, m->cfg.n_head);
    else if (o->html) {
        qkv_seq2seq_free(m);
        return -1;
    }
    if (!o->out) {
        qkv_seq2seq_free(m);
        return 0;
    }
    int rc = -1;
    char *output = malloc((size_t)m->cfg.max_tgt + 2), title[64];
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    qkv_tensor *w = output ? qkv_seq2seq_cross_weights(m, &ctx, o->input, layer, output) : NULL;
    if (w) {
        /* Row labels: the output, then ⏎ for the row that chose to stop (EOS). */
        size_t n = strlen(output);
        if ((int)n < w->shape[2])
            strcpy(output + n, "\n");
        /* Short: the input and output are the axes' labels, and a narrow picture clips a long title. */
        snprintf(title, sizeof title, "cross-attention, layer %d", layer);
        attn_svg_spec spec = {.title = title, .head = o->head, .average = o->average,
                              .row_labels = output, .col_labels = o->input,
                              .rows_name = "output (written top to bottom)", .cols_name = "input"};
        rc = attn_svg(o->out, w, &spec);
        if (rc == 0)
            printf("%s -> %.*s: wrote %s (layer %d, %d heads%s)\n", o->input, (int)n, output,
                   o->out, layer, w->shape[1], o->average ? ", averaged" : "");
    }
    free(output);
    qkv_seq2seq_free(m);
    return rc;
}

/* The page of the GPT m over o->text, recorded or live (characters only: the
 * live page's module tokenizes what is typed into it one byte a token). */
static int draw_gpt_page(const attn_opts *o, const qkv_gpt *m, const qkv_tokenizer *vocab,
                         const qkv_bpe *bpe)
{
    if (bpe && o->live)
        return qkv_set_error("--live: the live page's module reads characters only; a model of "
                             "BPE tokens gets the recorded page (drop --live)");
    attn_live live = {0};
    int made = o->live ? attn_live_make(&live, m, vocab, NULL) : 0;
    int wrote = made < 0 ? -1
                : bpe    ? attn_html_gpt_bpe(o->html, m, bpe, o->text)
                         : attn_html_gpt_live(o->html, m, vocab, o->text, o->live ? &live : NULL);
    attn_live_free(&live);
    if (wrote == 0)
        printf("wrote %s: %zu %s, %d layers, %d heads\n", o->html, strlen(o->text),
               bpe ? "bytes" : "characters", m->cfg.n_layer, m->cfg.n_head);
    return wrote;
}

/* Causal self-attention of the GPT over o->text: one row and column a
 * character, or a token of a model of BPE tokens, labelled with its text. */
static int draw_gpt(const attn_opts *o, qkv_arena *arena)
{
    qkv_tokenizer vocab;
    qkv_bpe *bpe = NULL;
    qkv_gpt *m = qkv_gpt_load_bpe(o->ckpt, &vocab, &bpe);
    int layer = m ? pick_layer(o, m->cfg.n_layer, m->cfg.n_head) : -1;
    int rc = layer < 0 || (o->html && draw_gpt_page(o, m, &vocab, bpe) < 0) ? -1 : 0;
    if (rc < 0 || !o->out) {
        qkv_bpe_free(bpe);
        qkv_gpt_free(m);
        return rc;
    }
    viz_tokens tok;
    int row0 = 0, n_rows = 0;
    const char *unit = bpe ? "tokens" : "characters";
    qkv_attn_call *calls = qkv_arena_calloc(arena, (size_t)m->cfg.n_layer * sizeof *calls);
    rc = !calls ? -1
         : viz_tokenize(arena, &vocab, bpe, o->text, m->cfg.block_size, "--text", &tok) < 0
             ? -1
             : pick_rows(o->rows, tok.T, bpe != NULL, &row0, &n_rows);
    if (rc == 0) {
        int T = tok.T;
        /* The forward records each layer's queries and keys, not its T×T
         * weights; then only the drawn layer's weights are made, for the
         * drawn rows: n_rows·T a head, whatever the context. */
        qkv_attn_record rec = {.calls = calls, .cap = m->cfg.n_layer};
        qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL, .record = &rec};
        bool was = qkv_set_grad_enabled(false), had = qkv_set_record_weights(false);
        qkv_tensor *logits = qkv_gpt_logits(m, &ctx, tok.ids, 1, T, NULL);
        qkv_set_record_weights(had);
        qkv_set_grad_enabled(was);
        const qkv_attn_call *c = &calls[layer];
        char *row_labels = qkv_arena_calloc(arena, (size_t)n_rows + 1);
        if (row_labels && !bpe)
            memcpy(row_labels, o->text + row0, (size_t)n_rows);
        qkv_tensor *w = logits && row_labels
                            ? qkv_attention_weights(arena, c->q, c->k, c->n_head, &c->mask, row0,
                                                    n_rows)
                            : NULL;
        char title[64];
        snprintf(title, sizeof title, "causal self-attention, layer %d", layer);
        attn_svg_spec spec = {.title = title, .head = o->head, .average = o->average,
                              .causal = true, .row0 = row0, .row_labels = row_labels,
                              .col_labels = o->text, .rows_name = "query (position reading)",
                              .cols_name = "key (position read)",
                              .row_names = bpe ? tok.names + row0 : NULL, .col_names = tok.names};
        rc = w ? attn_svg(o->out, w, &spec) : -1;
        if (rc == 0)
            printf("wrote %s: %d %s, layer %d, %d heads%s, query rows %d to %d\n", o->out, T,
                   unit, layer, w->shape[1], o->average ? ", averaged" : "", row0,
                   row0 + n_rows - 1);
    }
    qkv_bpe_free(bpe);
    qkv_gpt_free(m);
    return rc;
}

int cmd_attn(int argc, char **argv)
{
    attn_opts o = {.layer = -1, .head = -1};
    int threads = 1;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &o.ckpt, 0, 0, "CKPT", "a seq2seq or gpt checkpoint"},
        {"--input", ARG_STR, &o.input, 0, 0, "TEXT", "seq2seq: the input to decode"},
        {"--text", ARG_STR, &o.text, 0, 0, "TEXT", "gpt: the text to read"},
        {"--layer", ARG_INT, &o.layer, -1, 255, "L",
         "layer the SVG draws (-1 = the last; the page shows every one)"},
        {"--head", ARG_INT, &o.head, -1, 4095, "H", "head the SVG draws (-1 = one panel per head)"},
        {"--average", ARG_FLAG, &o.average, 0, 0, NULL, "one panel: the mean over the heads"},
        {"--out", ARG_STR, &o.out, 0, 0, "SVG", "picture to write (default attn.svg, none "
         "with --html alone)"},
        {"--html", ARG_STR, &o.html, 0, 0, "HTML", "also or instead: an interactive page of "
         "every layer and head"},
        {"--live", ARG_FLAG, &o.live, 0, 0, NULL, "with --html: the page runs the model itself "
         "(WebAssembly, built by `make wasm`) on any text typed into it"},
        {"--rows", ARG_STR, &o.rows, 0, 0, "I:J", "gpt: the SVG draws query rows i to j-1 "
         "only, whose weights alone are computed (default every row)"},
        {"--force", ARG_FLAG, &o.force, 0, 0, NULL, "replace an existing --out or --html (never "
         "done without it)"},
        {"--threads", ARG_THREADS, &threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
    };
    const arg_cmd cmd = {"attn", "Draw attention weights as an SVG heatmap: a seq2seq model's "
                         "cross-attention (output characters down, input characters across) or "
                         "a GPT's causal self-attention; with --html, an interactive page of "
                         "every attention, layer and head, and each step of one query's "
                         "attention.", "", specs,
                         (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (!o.ckpt)
        return args_error(&cmd, "--ckpt is required");
    /* The flag says which kind of model to load, so the checkpoint is read once; the
     * loader of that kind says so when the file holds another. */
    if ((o.input != NULL) == (o.text != NULL))
        return args_error(&cmd, "give exactly one of --input TEXT (a seq2seq checkpoint) and "
                          "--text TEXT (a gpt checkpoint)");
    if (o.live && !o.html)
        return args_error(&cmd, "--live makes the --html page live: give --html OUT too");
    if (o.rows && (!o.text || (o.html && !o.out)))
        return args_error(&cmd, "--rows chooses the rows of the GPT's SVG: give --text, and "
                          "--out when there is an --html");
    if (!o.out && !o.html)
        o.out = "attn.svg";
    qkv_protect_input(o.ckpt); /* --out naming the checkpoint must not replace it */
    /* Both outputs claimed before any work, under the rule of every file the program writes. */
    if ((o.html && cli_claim("attn", "--html", o.html, o.force) < 0) ||
        (o.out && cli_claim("attn", "--out", o.out, o.force) < 0)) {
        cli_release_outputs();
        return 1;
    }
    cli_use_threads(threads);
    qkv_arena *arena = qkv_arena_new((size_t)1 << 20);
    rc = arena ? (o.input ? draw_seq2seq(&o, arena) : draw_gpt(&o, arena)) : -1;
    if (rc < 0)
        fprintf(stderr, "qkv attn: %s\n", qkv_last_error());
    qkv_arena_free(&arena);
    cli_release_outputs();
    return rc < 0 ? 1 : 0;
}
