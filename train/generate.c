/* Generation with any language model: the window, its positions, the cache
 * protocol and sampling, in one loop (see qkv/generate.h). */
#include <string.h>

#include "tensor/check.h"
#include "decode.h"
#include "internal.h"

/* 0 when lm can generate from prompt (n_prompt ids) and n_new >= 0; else -1
 * with a message that starts with fn. */
static int check_request(const char *fn, const qkv_lm *lm, const int32_t *prompt, int n_prompt,
                         int n_new, const qkv_sample_opts *opts, const qkv_rng *rng)
{
    if (qkv__null(fn, "lm", lm) || qkv__null(fn, "lm->logits", lm->logits) ||
        qkv__null(fn, "prompt", prompt) || qkv__check_sample_opts(fn, opts) < 0 ||
        (opts->temperature > 0 && qkv__null(fn, "rng", rng)))
        return -1;
    if (lm->vocab_size < 1 || lm->context < 1)
        return qkv_set_error("%s: lm->vocab_size %d and lm->context %d must be >= 1", fn,
                             lm->vocab_size, lm->context);
    if (n_prompt < 1)
        return qkv_set_error("%s: the prompt needs at least one token (got %d)", fn, n_prompt);
    if (n_new < 0)
        return qkv_set_error("%s: cannot generate %d new tokens", fn, n_new);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= lm->vocab_size)
            return qkv_set_error("%s: prompt token %d at position %d is outside the "
                                 "vocabulary of %d", fn, prompt[i], i, lm->vocab_size);
    return 0;
}

/* The next token's logits (V values) from lm for the n ids at positions pos..: the
 * callback's tensor's last V values. NULL with a message that starts with fn. */
static const qkv_real *next_logits(const char *fn, const qkv_lm *lm, const qkv_ctx *ctx,
                                   const int32_t *ids, int n, int pos)
{
    qkv_clear_error();
    qkv_tensor *t = lm->logits(lm->model, ctx, ids, n, pos);
    if (!t) {
        if (!qkv_last_error()[0])
            qkv_set_error("the callback returned NULL without a message");
        qkv__error_prefix("%s: logits of %d tokens at position %d", fn, n, pos);
        return NULL;
    }
    size_t numel = t->size, V = (size_t)lm->vocab_size;
    if (!t->data || numel < V || numel % V != 0) {
        char s[64];
        qkv_set_error("%s: the logits callback returned %s, not rows of vocab_size %d", fn,
                      qkv_shape_str(t, s, sizeof s), lm->vocab_size);
        return NULL;
    }
    return t->data + numel - V;
}

int qkv__generate(const char *fn, const qkv_lm *lm, const int32_t *prompt, int n_prompt,
                  int n_new, const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit,
                  void *ud)
{
    if (check_request(fn, lm, prompt, n_prompt, n_new, opts, rng) < 0)
        return -1;
    int V = lm->vocab_size, context = lm->context;
    int32_t *window = qkv_alloc((size_t)context * sizeof *window);
    qkv_real *scratch = qkv_alloc(2 * (size_t)V * sizeof *scratch);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    int rc = -1;
    bool was = qkv_set_grad_enabled(false);
    if (!window || !scratch || !arena)
        goto done;
    /* The window holds the newest tokens; a cached model has seen the first `seen` of them. */
    int len = n_prompt < context ? n_prompt : context, seen = 0;
    memcpy(window, prompt + n_prompt - len, (size_t)len * sizeof *window);
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    for (int i = 0; i < n_new; i++) {
        qkv_arena_reset(arena);
        const qkv_real *logits = lm->cached
                                     ? next_logits(fn, lm, &ctx, window + seen, len - seen, seen)
                                     : next_logits(fn, lm, &ctx, window, len, 0);
        if (!logits)
            goto done;
        seen = len;
        int32_t tok = qkv_sample_token(logits, V, opts, rng, scratch);
        if (tok < 0) { /* logits that are not numbers */
            qkv__fail_in(fn);
            goto done;
        }
        if (emit && emit(tok, ud))
            break;
        if (len == context) { /* full: slide by half; positions (and a cache) start over */
            int keep = context / 2 > 0 ? context / 2 : 1;
            memmove(window, window + len - keep + 1, (size_t)(keep - 1) * sizeof *window);
            len = keep - 1;
            seen = 0;
        }
        window[len++] = tok;
    }
    rc = 0;
done:
    qkv_set_grad_enabled(was);
    qkv_arena_free(&arena);
    qkv_free(scratch);
    qkv_free(window);
    return rc;
}

int qkv_generate(const qkv_lm *lm, const int32_t *prompt, int n_prompt, int n_new,
                 const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit, void *ud)
{
    return qkv__generate("qkv_generate", lm, prompt, n_prompt, n_new, opts, rng, emit, ud);
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
