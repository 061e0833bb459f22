/* Generation with any language model: the window, its positions, the cache
 * protocol and sampling, in one loop (see qkv/generate.h). */
#include <string.h>

#include "tensor/check.h"
#include "tensor/kernels/gemm_bf16_held.h"
#include "decode/decode.h"

/* 0 when lm can generate for B rows of prompts (n_prompt ids each), n_new
 * >= 0 and stop is a token or negative; else -1 with a message that starts
 * with fn (and calls the prompts "prompts" when out_named, the batch's). */
static int check_request(const char *fn, const qkv_lm *lm, int B, const int32_t *prompts,
                         int n_prompt, int n_new, const qkv_sample_opts *opts, const qkv_rng *rng,
                         int32_t stop, bool out_named)
{
    if (qkv__null(fn, "lm", lm) || qkv__null(fn, "lm->logits", lm->logits) ||
        qkv__null(fn, out_named ? "prompts" : "prompt", prompts) || qkv__check_sample_opts(fn, opts) < 0 ||
        (opts->temperature > 0 && qkv__null(fn, "rng", rng)))
        return -1;
    if (lm->vocab_size < 1 || lm->context < 1)
        return qkv_set_error("%s: lm->vocab_size %d and lm->context %d must be >= 1", fn,
                             lm->vocab_size, lm->context);
    if (B < 1)
        return qkv_set_error("%s: B %d: a batch needs at least one row", fn, B);
    if (n_prompt < 1)
        return qkv_set_error("%s: the prompt needs at least one token (got %d)", fn, n_prompt);
    if (n_new < 0)
        return qkv_set_error("%s: cannot generate %d new tokens", fn, n_new);
    if (stop >= lm->vocab_size)
        return qkv_set_error("%s: stop token %d is outside the vocabulary of %d", fn, stop,
                             lm->vocab_size);
    for (size_t i = 0; i < (size_t)B * n_prompt; i++)
        if (prompts[i] < 0 || prompts[i] >= lm->vocab_size)
            return qkv_set_error("%s: prompt token %d at position %zu is outside the "
                                 "vocabulary of %d", fn, prompts[i], i, lm->vocab_size);
    return 0;
}

/* The next-token logits of lm for B rows of n ids at positions pos..: a
 * pointer to the callback's values, whose B rows each end with their V
 * logits (row r's at data + (r+1)·stride − V). NULL with a message that
 * starts with fn. */
static const qkv_real *next_logits(const char *fn, const qkv_lm *lm, const qkv_ctx *ctx,
                                   const int32_t *ids, int B, int n, int pos, size_t *stride)
{
    qkv_clear_error();
    qkv_tensor *t = lm->logits(lm->model, ctx, ids, B, n, pos);
    if (!t) {
        if (!qkv_last_error()[0])
            qkv_set_error("the callback returned NULL without a message");
        qkv__error_prefix("%s: logits of %d tokens at position %d", fn, n, pos);
        return NULL;
    }
    size_t numel = t->size, V = (size_t)lm->vocab_size;
    if (!t->data || numel % (size_t)B != 0 || numel / B < V || numel / B % V != 0) {
        char s[64];
        qkv_set_error("%s: the logits callback returned %s, not %d rows of vocab_size %d", fn,
                      qkv_shape_str(t, s, sizeof s), B, lm->vocab_size);
        return NULL;
    }
    *stride = numel / B;
    return t->data + *stride - V;
}

/* Where the new tokens go: emit (B = 1) and/or out (B, n_new), with stop. */
typedef struct sink {
    qkv_emit_fn emit;
    void *ud;
    int32_t *out;
    int32_t stop; /* < 0: none */
} sink;

/* The loop of qkv_generate and qkv_generate_batch. Every row's window holds
 * its newest tokens (len of them, the same for all rows); a cached model has
 * seen the first `seen`. The rows are in window (B, context) and the ids of
 * one call, the (B, len − seen) tokens not seen yet, are copied to ids. */
static int generate(const char *fn, const qkv_lm *lm, int B, const int32_t *prompts, int n_prompt,
                    int n_new, const qkv_sample_opts *opts, qkv_rng *rng, const sink *to)
{
    if (check_request(fn, lm, B, prompts, n_prompt, n_new, opts, rng, to->stop, to->out) < 0)
        return -1;
    int V = lm->vocab_size, context = lm->context;
    size_t rows = (size_t)B * context;
    int32_t *window = qkv_alloc(2 * rows * sizeof *window), *ids = window + rows;
    bool *ended = qkv_calloc((size_t)B * sizeof *ended);
    qkv_real *scratch = qkv_alloc(2 * (size_t)V * sizeof *scratch);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    int rc = -1, n_ended = 0;
    bool was = qkv_set_grad_enabled(false);
    /* in bf16 each weight is rounded and packed once for the whole loop, not per token */
    qkv__bf16_held_open();
    if (!window || !ended || !scratch || !arena)
        goto done;
    int len = n_prompt < context ? n_prompt : context, seen = 0;
    for (int b = 0; b < B; b++)
        memcpy(window + (size_t)b * context, prompts + (size_t)b * n_prompt + n_prompt - len,
               (size_t)len * sizeof *window);
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    int i = 0; /* steps run: every row has its tokens 0..i-1 */
    for (; i < n_new && n_ended < B; i++) {
        qkv_arena_reset(arena);
        int from = lm->cached ? seen : 0, n = len - from;
        for (int b = 0; b < B; b++)
            memcpy(ids + (size_t)b * n, window + (size_t)b * context + from,
                   (size_t)n * sizeof *ids);
        size_t stride;
        const qkv_real *logits = next_logits(fn, lm, &ctx, ids, B, n, from, &stride);
        if (!logits)
            goto done;
        seen = len;
        bool slide = len == context; /* full: slide by half; positions (and a cache) start over */
        int keep = context / 2 > 0 ? context / 2 : 1;
        for (int b = 0; b < B; b++) {
            int32_t tok = to->stop;
            if (!ended[b] && (tok = qkv_sample_token(logits + b * stride, V, opts, rng,
                                                     scratch)) < 0) { /* logits not numbers */
                qkv__fail_in(fn);
                goto done;
            }
            if (to->out)
                to->out[(size_t)b * n_new + i] = tok;
            if (!ended[b] && tok == to->stop)
                ended[b] = true, n_ended++;
            if (to->emit && to->emit(tok, to->ud))
                n_ended = B; /* the caller stops it */
            int32_t *row = window + (size_t)b * context;
            if (slide)
                memmove(row, row + len - keep + 1, (size_t)(keep - 1) * sizeof *row);
            row[slide ? keep - 1 : len] = tok;
        }
        if (slide)
            len = keep - 1, seen = 0;
        len++;
    }
    /* Every row ended before n_new steps: stop to the end of each. */
    for (int b = 0; to->out && b < B; b++)
        for (int j = i; j < n_new; j++)
            to->out[(size_t)b * n_new + j] = to->stop;
    rc = 0;
done:
    qkv__bf16_held_close();
    qkv_set_grad_enabled(was);
    qkv_arena_free(&arena);
    qkv_free(scratch);
    qkv_free(ended);
    qkv_free(window);
    return rc;
}

int qkv__generate(const char *fn, const qkv_lm *lm, const int32_t *prompt, int n_prompt,
                  int n_new, const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit,
                  void *ud)
{
    return generate(fn, lm, 1, prompt, n_prompt, n_new, opts, rng,
                    &(sink){.emit = emit, .ud = ud, .stop = -1});
}

int qkv_generate(const qkv_lm *lm, const int32_t *prompt, int n_prompt, int n_new,
                 const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit, void *ud)
{
    return qkv__generate("qkv_generate", lm, prompt, n_prompt, n_new, opts, rng, emit, ud);
}

int qkv_generate_batch(const qkv_lm *lm, int B, const int32_t *prompts, int n_prompt, int n_new,
                       const qkv_sample_opts *opts, qkv_rng *rng, int32_t stop, int32_t *out)
{
    const char *fn = "qkv_generate_batch";
    if (qkv__null(fn, "out", out))
        return -1;
    return generate(fn, lm, B, prompts, n_prompt, n_new, opts, rng,
                    &(sink){.out = out, .stop = stop < 0 ? -1 : stop});
}

/* What qkv_generate_text's emit needs: the vocabulary and the caller's text callback. */
typedef struct text_sink {
    const qkv_tokenizer *tok;
    qkv_text_fn out;
    void *ud;
} text_sink;

static int emit_text(int32_t token, void *ud)
{
    text_sink *s = ud;
    char c;
    if (qkv_decode(s->tok, &token, 1, &c) < 0)
        return -1; /* cannot happen: the token is below vocab_size = tok->size */
    return s->out ? s->out(&c, 1, s->ud) : 0;
}

int qkv_generate_text(const qkv_lm *lm, const qkv_tokenizer *tok, const char *prompt, int n_new,
                      const qkv_sample_opts *opts, qkv_rng *rng, qkv_text_fn out, void *ud)
{
    const char *fn = "qkv_generate_text";
    if (qkv__null(fn, "lm", lm) || qkv__null(fn, "tok", tok) || qkv__null(fn, "prompt", prompt))
        return -1;
    size_t n = strlen(prompt);
    if (n == 0)
        return qkv_set_error("%s: the prompt is empty; give at least one character", fn);
    if (n > (size_t)INT32_MAX)
        return qkv_set_error("%s: the prompt has %zu bytes, too many", fn, n);
    if (tok->size != lm->vocab_size)
        return qkv_set_error("%s: the tokenizer has %d tokens but lm->vocab_size is %d", fn,
                             tok->size, lm->vocab_size);
    int32_t *ids = qkv_alloc(n * sizeof *ids);
    if (!ids)
        return qkv__fail_in(fn);
    int rc = qkv_encode(tok, prompt, n, ids);
    if (rc < 0)
        qkv__error_prefix("%s: prompt", fn);
    else
        rc = qkv__generate(fn, lm, ids, (int)n, n_new, opts, rng, emit_text,
                           &(text_sink){.tok = tok, .out = out, .ud = ud});
    qkv_free(ids);
    return rc;
}
