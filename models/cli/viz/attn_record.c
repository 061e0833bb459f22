/* The attention page of a model: run its real forward pass once with a
 * record of every attention call (qkv_ctx.record), and hand the calls, in
 * the order the model makes them, to the page writer (see viz.h). */
#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "models/seq2seq/internal.h"
#include "viz_internal.h"

/* A record of up to n calls, from arena a; NULL when out of memory. */
static qkv_attn_record *record_new(qkv_arena *a, int n)
{
    qkv_attn_record *rec = qkv_arena_calloc(a, sizeof *rec);
    qkv_attn_call *calls = qkv_arena_calloc(a, (size_t)n * sizeof *calls);
    if (!rec || !calls)
        return NULL;
    *rec = (qkv_attn_record){.calls = calls, .cap = n};
    return rec;
}

/* 0 when the forward made exactly the n attention calls the page expects. */
static int check_calls(const char *who, const qkv_attn_record *rec, int n)
{
    if (rec->n != n)
        return qkv_set_error("%s: the forward made %d attention calls; the model has %d", who,
                             rec->n, n);
    return 0;
}

int attn_html_gpt(const char *path, const qkv_gpt *m, const qkv_tokenizer *vocab, const char *text)
{
    const char *who = "attn_html_gpt";
    if (qkv__null(who, "path", path) || qkv__null(who, "m", m) || qkv__null(who, "vocab", vocab) ||
        qkv__null(who, "text", text))
        return -1;
    size_t len = strlen(text);
    int L = m->cfg.n_layer;
    if (len < 1 || len > (size_t)m->cfg.block_size)
        return qkv_set_error("%s: text has %zu characters; the model reads 1 to %d", who, len,
                             m->cfg.block_size);
    int T = (int)len, rc = -1;
    qkv_arena *a = qkv_arena_new((size_t)1 << 20);
    int32_t *ids = a ? qkv_arena_alloc(a, len * sizeof *ids) : NULL;
    qkv_attn_record *rec = a ? record_new(a, L) : NULL;
    if (ids && rec && qkv_encode(vocab, text, len, ids) == 0) {
        qkv_ctx ctx = {.arena = a, .record = rec};
        bool was = qkv_set_grad_enabled(false);
        qkv_tensor *logits = qkv_gpt_logits(m, &ctx, ids, 1, T, NULL);
        qkv_set_grad_enabled(was);
        char summary[160];
        snprintf(summary, sizeof summary,
                 "character GPT: %d layers, %d heads of size d = %d (n_embd %d), reading %d "
                 "characters", L, m->cfg.n_head, m->cfg.n_embd / m->cfg.n_head, m->cfg.n_embd, T);
        qkv__attn_page page = {
            .model = "gpt", .summary = summary, .n_view = 1,
            .views = {{.id = "self", .name = "causal self-attention",
                       .rows_name = "query (position reading)", .cols_name = "key (position read)",
                       .rows = text, .cols = text, .n_layer = L, .calls = rec->calls,
                       .stride = 1}},
        };
        if (logits && check_calls(who, rec, L) == 0)
            rc = qkv__attn_page_write(path, &page);
    }
    qkv_arena_free(&a);
    return rc < 0 ? qkv__fail_in(who) : 0;
}

/* The page of the encoder-decoder once the replay has recorded its calls:
 * the encoder's L, then each decoder layer's self- and cross-attention. */
static int write_seq2seq_page(const char *path, const qkv_seq2seq *m, const qkv_attn_record *rec,
                              const char *input, const char *labels, const uint8_t *valid,
                              const char *output)
{
    int L = m->cfg.n_layer;
    char summary[200];
    snprintf(summary, sizeof summary,
             "encoder-decoder: %d + %d layers, %d heads of size d = %d (n_embd %d); \"%s\" -> "
             "\"%.*s\", the input padded to %d positions as in a training batch",
             L, L, m->cfg.n_head, m->cfg.n_embd / m->cfg.n_head, m->cfg.n_embd,
             input, (int)strcspn(output, "\n"), output, m->cfg.max_src);
    /* Decoder position t is named by the character it writes. */
    const char *out_name = "output (\xE2\x8F\x8E = the end)";
    qkv__attn_page page = {
        .model = "seq2seq", .summary = summary, .n_view = 3,
        .views = {
            {.id = "enc", .name = "encoder self-attention", .rows_name = "input (query)",
             .cols_name = "input (key)", .rows = labels, .cols = labels, .rows_valid = valid,
             .key_valid = valid, .n_layer = L, .calls = rec->calls, .stride = 1},
            {.id = "dec", .name = "decoder self-attention (causal)", .rows_name = out_name,
             .cols_name = out_name, .rows = output, .cols = output, .n_layer = L,
             .calls = rec->calls + L, .stride = 2},
            {.id = "cross", .name = "cross-attention", .rows_name = out_name,
             .cols_name = "input", .rows = output, .cols = labels, .key_valid = valid,
             .n_layer = L, .calls = rec->calls + L + 1, .stride = 2},
        },
    };
    return qkv__attn_page_write(path, &page);
}

int attn_html_seq2seq(const char *path, const qkv_seq2seq *m, const char *input)
{
    const char *who = "attn_html_seq2seq";
    if (qkv__null(who, "path", path) || qkv__null(who, "m", m) || qkv__null(who, "input", input))
        return -1;
    int L = m->cfg.n_layer, Ts = m->cfg.max_src, rc = -1, Tt;
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    qkv_arena *a = qkv_arena_new((size_t)1 << 20);
    qkv_attn_record *rec = a ? record_new(a, 3 * L) : NULL;
    int32_t *src = a ? qkv_arena_alloc(a, (size_t)Ts * sizeof *src) : NULL;
    uint8_t *valid = a ? qkv_arena_alloc(a, (size_t)Ts) : NULL;
    char *labels = a ? qkv_arena_calloc(a, (size_t)Ts + 1) : NULL;
    char *output = a ? qkv_arena_calloc(a, (size_t)m->cfg.max_tgt + 2) : NULL;
    if (!b || !rec || !src || !valid || !labels || !output ||
        qkv_seq2seq_batch_fill(m, b, 1, &input, NULL) < 0)
        goto done;
    /* The input padded to max_src positions: a batch of one has no padding,
     * and the page is to show how the mask keeps every query off it. */
    for (int t = 0; t < Ts; t++) {
        bool real = t < b->Ts;
        src[t] = real ? b->src[t] : QKV_SEQ2SEQ_PAD;
        valid[t] = real;
        labels[t] = real ? input[t] : ' ';
    }
    qkv_ctx ctx = {.arena = a, .record = rec};
    if (qkv__seq2seq_replay(m, &ctx, src, valid, Ts, output, &Tt, NULL) < 0 ||
        check_calls(who, rec, 3 * L) < 0)
        goto done;
    /* Decoder position t writes output[t]; the last one may write EOS (⏎). */
    size_t n = strlen(output);
    if ((int)n < Tt)
        strcpy(output + n, "\n");
    rc = write_seq2seq_page(path, m, rec, input, labels, valid, output);
done:
    qkv_arena_free(&a);
    qkv_seq2seq_batch_free(b);
    return rc < 0 ? qkv__fail_in(who) : 0;
}
