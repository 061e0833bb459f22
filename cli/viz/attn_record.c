/* The attention page of a model: run its real forward pass once with a
 * record of every attention call (qkv_ctx.record), and hand the calls, in
 * the order the model makes them, to the page's writer (attn_html.c) or to
 * the live page's module (live/live.c): both get the same page. */
#include <stdio.h>
#include <string.h>

#include "qkv/seq2seq.h"
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

/* 0 when the forward made exactly the n attention calls the page expects,
 * and each call's weights are there. The forward recorded only the calls'
 * queries and keys (qkv_set_record_weights(false)); the page shows every
 * row of every call, so it asks qkv_attention_weights for all of them. */
static int check_calls(const char *who, qkv_arena *a, qkv_attn_record *rec, int n)
{
    if (rec->n != n)
        return qkv_set_error("%s: the forward made %d attention calls; the model has %d", who,
                             rec->n, n);
    for (int i = 0; i < n; i++) {
        qkv_attn_call *c = &rec->calls[i];
        c->weights = qkv_attention_weights(a, c->q, c->k, c->n_head, &c->mask, 0, c->q->shape[1]);
        if (!c->weights)
            return -1;
    }
    return 0;
}

/* The page of the GPT m reading text, vocab's characters or bpe's tokens. */
static int record_gpt(const char *who, const qkv_gpt *m, const qkv_tokenizer *vocab,
                      const qkv_bpe *bpe, const char *text, qkv__attn_page_fn fn, void *user)
{
    int L = m->cfg.n_layer, V = m->cfg.vocab_size, rc = -1;
    char what[96];
    snprintf(what, sizeof what, "%s: text", who);
    viz_tokens tok;
    qkv_arena *a = qkv_arena_new((size_t)1 << 20);
    qkv_attn_record *rec = a ? record_new(a, L) : NULL;
    const char **next = bpe && a ? qkv_arena_alloc(a, (size_t)V * sizeof *next) : NULL;
    for (int i = 0; next && i < V; i++) {
        size_t n;
        const char *bytes = qkv_bpe_token(bpe, i, &n);
        if (!bytes || !(next[i] = qkv__viz_token_name(a, bytes, n)))
            next = NULL;
    }
    if (rec && (!bpe || next) &&
        viz_tokenize(a, vocab, bpe, text, m->cfg.block_size, what, &tok) == 0) {
        int T = tok.T;
        qkv_ctx ctx = {.arena = a, .record = rec};
        bool was = qkv_set_grad_enabled(false), had = qkv_set_record_weights(false);
        qkv_tensor *logits = qkv_gpt_logits(m, &ctx, tok.ids, 1, T, NULL);
        qkv_set_record_weights(had);
        qkv_set_grad_enabled(was);
        char summary[160];
        snprintf(summary, sizeof summary,
                 "%s GPT: %d layers, %d heads of size d = %d (n_embd %d), reading %d %s",
                 bpe ? "BPE" : "character", L, m->cfg.n_head, m->cfg.n_embd / m->cfg.n_head,
                 m->cfg.n_embd, T, bpe ? "tokens" : "characters");
        qkv__attn_page page = {
            .model = "gpt", .summary = summary, .text = text, .n_view = 1,
            .n_next = V, .next_chars = bpe ? NULL : (const char *)vocab->byte,
            .next_names = next,
            .next_logits = logits ? logits->data + (size_t)(T - 1) * V : NULL,
            .views = {{.id = "self", .name = "causal self-attention",
                       .rows_name = "query (position reading)", .cols_name = "key (position read)",
                       .rows = text, .cols = text, .row_names = tok.names,
                       .col_names = tok.names, .n_layer = L, .calls = rec->calls, .stride = 1}},
        };
        if (logits && check_calls(who, a, rec, L) == 0)
            rc = fn(&page, user);
    }
    qkv_arena_free(&a);
    return rc < 0 ? viz_fail_in(who) : 0;
}

int qkv__attn_record_gpt(const char *who, const qkv_gpt *m, const qkv_tokenizer *vocab,
                         const char *text, qkv__attn_page_fn fn, void *user)
{
    if (viz_null(who, "m", m) || viz_null(who, "vocab", vocab) || viz_null(who, "text", text))
        return -1;
    return record_gpt(who, m, vocab, NULL, text, fn, user);
}

int qkv__attn_record_gpt_bpe(const char *who, const qkv_gpt *m, const qkv_bpe *bpe,
                             const char *text, qkv__attn_page_fn fn, void *user)
{
    if (viz_null(who, "m", m) || viz_null(who, "bpe", bpe) || viz_null(who, "text", text))
        return -1;
    if (qkv_bpe_size(bpe) != m->cfg.vocab_size)
        return qkv_set_error("%s: bpe has %d tokens; the model's vocabulary has %d", who,
                             qkv_bpe_size(bpe), m->cfg.vocab_size);
    return record_gpt(who, m, NULL, bpe, text, fn, user);
}

/* The page of the encoder-decoder once the forward has recorded its calls:
 * the encoder's L, then each decoder layer's self- and cross-attention. */
static int give_seq2seq_page(const qkv_seq2seq *m, const qkv_attn_record *rec, const char *input,
                             const char *labels, const uint8_t *valid, const char *output,
                             const char *answer, const char *next_chars, const qkv_real *next_logits,
                             qkv__attn_page_fn fn, void *user)
{
    int L = m->cfg.n_layer;
    char summary[200];
    snprintf(summary, sizeof summary,
             "encoder-decoder: %d + %d layers, %d heads of size d = %d (n_embd %d); \"%s\" -> "
             "\"%.*s\", the input padded to %d positions as in a training batch",
             L, L, m->cfg.n_head, m->cfg.n_embd / m->cfg.n_head, m->cfg.n_embd,
             input, (int)strlen(answer), answer, m->cfg.max_src);
    /* Decoder position t is named by the character it writes. */
    const char *out_name = "output (\xE2\x8F\x8E = the end)";
    qkv__attn_page page = {
        .model = "seq2seq", .summary = summary, .text = input, .output = answer, .n_view = 3,
        .n_next = next_logits ? m->vocab_size : 0, .next_chars = next_chars,
        .next_logits = next_logits,
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
    return fn(&page, user);
}

/* The decoder reading BOS + output teacher-forced over the encoder's reading
 * of src: the logits (1,Tt,V), with every attention in ctx's record. */
static qkv_tensor *forced(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                          const uint8_t *valid, const qkv_seq2seq_batch *b)
{
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *memory = qkv_seq2seq_encode(m, ctx, src, valid, 1, m->cfg.max_src);
    qkv_tensor *logits = qkv_seq2seq_decode(m, ctx, memory, valid, b->dec_in, 1, b->Tt, NULL);
    qkv_set_grad_enabled(was);
    return logits;
}

int qkv__attn_record_seq2seq(const char *who, const qkv_seq2seq *m, const char *input,
                             const char *output, qkv__attn_page_fn fn, void *user)
{
    if (viz_null(who, "m", m) || viz_null(who, "input", input))
        return -1;
    int L = m->cfg.n_layer, Ts = m->cfg.max_src, V = m->vocab_size, rc = -1, Tt;
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    qkv_arena *a = qkv_arena_new((size_t)1 << 20);
    qkv_attn_record *rec = a ? record_new(a, 3 * L) : NULL;
    int32_t *src = a ? qkv_arena_alloc(a, (size_t)Ts * sizeof *src) : NULL;
    uint8_t *valid = a ? qkv_arena_alloc(a, (size_t)Ts) : NULL;
    char *labels = a ? qkv_arena_calloc(a, (size_t)Ts + 1) : NULL;
    char *rows = a ? qkv_arena_calloc(a, (size_t)m->cfg.max_tgt + 2) : NULL;
    char *chars = a ? qkv_arena_calloc(a, (size_t)V + 1) : NULL;
    const char *tgt = output;
    bool had = qkv_set_record_weights(false); /* the calls' weights: asked in check_calls */
    if (!b || !rec || !src || !valid || !labels || !rows || !chars ||
        qkv_seq2seq_batch_fill(m, b, 1, &input, output ? &tgt : NULL) < 0)
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
    const qkv_real *next = NULL;
    if (output) {
        /* Row t is the query that writes output[t], the last one what comes next. */
        qkv_tensor *logits = forced(m, &ctx, src, valid, b);
        if (!logits)
            goto done;
        Tt = b->Tt;
        snprintf(rows, (size_t)m->cfg.max_tgt + 2, "%s?", output);
        next = logits->data + (size_t)(Tt - 1) * V;
        /* Token ids: PAD and BOS (never written: '?'), EOS as a newline (⏎), the alphabet. */
        chars[0] = chars[1] = '?', chars[2] = '\n';
        memcpy(chars + QKV_SEQ2SEQ_N_SPECIAL, m->chars.byte, (size_t)m->chars.size);
    } else {
        if ((Tt = qkv_seq2seq_replay(m, &ctx, src, valid, Ts, rows)) < 0)
            goto done;
        /* Decoder position t writes rows[t]; the last one may write EOS (⏎). */
        size_t n = strlen(rows);
        if ((int)n < Tt)
            strcpy(rows + n, "\n");
    }
    /* The answer: the output given, or the decoded one (rows without its ⏎). */
    const char *answer = output;
    if (!output) {
        char *decoded = qkv_arena_calloc(a, (size_t)m->cfg.max_tgt + 2);
        if (!decoded)
            goto done;
        memcpy(decoded, rows, strcspn(rows, "\n"));
        answer = decoded;
    }
    if (check_calls(who, a, rec, 3 * L) == 0)
        rc = give_seq2seq_page(m, rec, input, labels, valid, rows, answer, chars, next, fn,
                               user);
done:
    qkv_set_record_weights(had);
    qkv_arena_free(&a);
    qkv_seq2seq_batch_free(b);
    return rc < 0 ? viz_fail_in(who) : 0;
}
