/* Generation with any model (qkv/generate.h): the window and cache protocol
 * a model's logits callback sees, the GPT through the public loop, the text
 * helpers, zero-initialised sampling options, and misuse. */
#include <omp.h>
#include <stdlib.h>

#include "error_text.h"
#include "testing.h"

enum { V = 7, MAX_CALLS = 256 };

/* A toy model that can check the protocol: a cached one rebuilds the window
 * from the pieces it is given, so it knows what a real cache would hold.
 * Its logits depend on the whole window and the positions, so a slip in
 * either changes the tokens. */
typedef struct toy {
    bool cached;
    int32_t seen[64]; /* a cached model's copy of the window so far */
    int n_seen;
    int calls, resets; /* callback calls; calls with pos 0 after the first */
    int fail_at;       /* return NULL at this call (0 = never) */
    bool wrong_shape;  /* return V-1 values instead of rows of V */
} toy;

static qkv_tensor *toy_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                              int pos)
{
    toy *t = model;
    ck_assert_int_eq(B, 1);
    ck_assert_int_ge(n, 1);
    if (++t->calls == t->fail_at) {
        qkv_set_error("toy: made to fail");
        return NULL;
    }
    if (t->wrong_shape)
        return qkv_zeros(ctx->arena, QKV_SHAPE(V - 1));
    const int32_t *window = ids;
    int len = n;
    if (t->cached) {
        /* Every token exactly once: pos is how many it has seen, or 0 for a new window. */
        if (pos == 0) {
            t->resets += t->calls > 1;
            t->n_seen = 0;
        }
        ck_assert_int_eq(pos, t->n_seen);
        memcpy(t->seen + pos, ids, (size_t)n * sizeof *ids);
        t->n_seen = len = pos + n;
        window = t->seen;
    } else {
        ck_assert_int_eq(pos, 0);
    }
    qkv_tensor *out = qkv_zeros(ctx->arena, QKV_SHAPE(1, 1, V));
    for (int i = 0; i < len; i++)
        out->data[(window[i] * 3 + i) % V] += (qkv_real)(1 + window[i]) * 0.7f;
    return out;
}

typedef struct tokens {
    int32_t ids[MAX_CALLS];
    int n, stop_after; /* stop_after 0: never stop */
} tokens;

static int collect(int32_t tok, void *ud)
{
    tokens *t = ud;
    t->ids[t->n++] = tok;
    return t->stop_after && t->n >= t->stop_after;
}

START_TEST(test_cached_and_uncached_models_get_the_same_tokens)
{
    const int32_t prompt[5] = {1, 2, 3, 4, 5};
    qkv_sample_opts opts[2] = {{0}, {.temperature = 1, .top_k = 3}};
    for (int o = 0; o < 2; o++) {
        toy cached = {.cached = true}, plain = {.cached = false};
        qkv_lm a = {.model = &cached, .logits = toy_logits, .vocab_size = V, .context = 9,
                    .cached = true};
        qkv_lm b = {.model = &plain, .logits = toy_logits, .vocab_size = V, .context = 9};
        tokens ta = {0}, tb = {0};
        qkv_rng r1, r2;
        qkv_rng_seed(&r1, 5);
        qkv_rng_seed(&r2, 5);
        /* 60 tokens through a window of 9: it slides many times. */
        ck_assert_int_eq(qkv_generate(&a, prompt, 5, 60, &opts[o], &r1, collect, &ta), 0);
        ck_assert_int_eq(qkv_generate(&b, prompt, 5, 60, &opts[o], &r2, collect, &tb), 0);
        ck_assert_int_eq(ta.n, 60);
        ck_assert_int_eq(tb.n, 60);
        for (int i = 0; i < 60; i++)
            ck_assert_msg(ta.ids[i] == tb.ids[i], "opts %d token %d: cached %d, uncached %d", o,
                          i, ta.ids[i], tb.ids[i]);
        ck_assert_int_eq(cached.calls, 60);
        /* The window is full (9) at token 4; it slides to its newest 4 (3 kept and the new
         * token) and is full again 6 tokens later: restarts after tokens 4, 10, ..., 58. */
        ck_assert_int_eq(cached.resets, 10);
    }
}
END_TEST

START_TEST(test_emit_stops_early_and_zero_tokens_call_nothing)
{
    toy t = {.cached = true};
    qkv_lm lm = {.model = &t, .logits = toy_logits, .vocab_size = V, .context = 4, .cached = true};
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    tokens got = {.stop_after = 3};
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){0}, 1, 50, &(qkv_sample_opts){0}, &rng,
                                  collect, &got), 0);
    ck_assert_int_eq(got.n, 3);
    ck_assert_int_eq(t.calls, 3);
    t.calls = 0;
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){0}, 1, 0, &(qkv_sample_opts){0}, &rng, NULL,
                                  NULL), 0);
    ck_assert_int_eq(t.calls, 0);
    /* A prompt longer than the context: only its newest tokens are read. */
    t = (toy){.cached = true};
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){1, 2, 3, 4, 5, 6}, 6, 1, &(qkv_sample_opts){0},
                                  &rng, NULL, NULL), 0);
    ck_assert_int_eq(t.n_seen, 4);
    ck_assert_int_eq(t.seen[0], 3);
}
END_TEST

/* A model built only from the public API: the GPT's qkv_gpt_logits, without a cache. */
static qkv_tensor *public_gpt_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B,
                                     int n, int pos)
{
    ck_assert_int_eq(pos, 0);
    return qkv_gpt_logits(model, ctx, ids, B, n, NULL);
}

/* A small GPT over 20 tokens with a window of block, its weights scaled far from uniform. */
static qkv_gpt *sharp_gpt(int block, uint64_t seed)
{
    qkv_gpt_config mc = {.vocab_size = 20, .block_size = block, .n_layer = 2, .n_head = 2,
                         .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&mc, seed);
    ck_assert_qkv(m);
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] *= 20;
    return m;
}

START_TEST(test_a_model_of_ones_own_matches_the_gpt_generation)
{
    qkv_gpt *m = sharp_gpt(12, 7);
    qkv_lm lm = {.model = m, .logits = public_gpt_logits, .vocab_size = 20, .context = 12};
    const int32_t prompt[3] = {1, 2, 3};
    qkv_sample_opts opts = {.temperature = 0.9, .top_k = 8};
    for (int cache = 0; cache < 2; cache++) {
        tokens mine = {0}, gpt = {0};
        qkv_rng r1, r2;
        qkv_rng_seed(&r1, 11);
        qkv_rng_seed(&r2, 11);
        ck_assert_int_eq(qkv_generate(&lm, prompt, 3, 40, &opts, &r1, collect, &mine), 0);
        ck_assert_int_eq(qkv_gpt_generate(m, prompt, 3, 40, &opts, &r2, cache, collect, &gpt), 0);
        ck_assert_int_eq(mine.n, 40);
        ck_assert_int_eq(gpt.n, 40);
        for (int i = 0; i < 40; i++)
            ck_assert_msg(mine.ids[i] == gpt.ids[i], "cache %d token %d: %d vs %d", cache, i,
                          mine.ids[i], gpt.ids[i]);
    }
    qkv_gpt_free(m);
}
END_TEST

/* A batch is its rows generated one by one: the GPT's B-row cache (and no
 * cache) over a window that slides, greedy so no row's draws depend on the
 * others'; with a stop token every row ends at its first one, then stop. */
START_TEST(test_a_batch_is_its_rows_one_by_one)
{
    qkv_gpt *m = sharp_gpt(8, 9);
    enum { B = 3, N = 30 };
    const int32_t prompts[B * 2] = {1, 2, 7, 7, 19, 0};
    qkv_sample_opts greedy = {0};
    tokens alone[B];
    memset(alone, 0, sizeof alone);
    for (int b = 0; b < B; b++)
        ck_assert_int_eq(qkv_gpt_generate(m, prompts + 2 * b, 2, N, &greedy, NULL, false, collect,
                                          &alone[b]), 0);
    for (int cache = 0; cache < 2; cache++) {
        qkv_lm *lm = qkv_gpt_lm_new(m, cache);
        ck_assert_qkv(lm);
        int32_t out[B * N];
        ck_assert_int_eq(qkv_generate_batch(lm, B, prompts, 2, N, &greedy, NULL, -1, out), 0);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < N; i++)
                ck_assert_msg(out[b * N + i] == alone[b].ids[i], "cache %d row %d token %d: %d, "
                              "alone %d", cache, b, i, out[b * N + i], alone[b].ids[i]);
        /* Stop at row 1's 6th token: each row ends at its first such token. */
        int32_t stop = alone[1].ids[5];
        ck_assert_int_eq(qkv_generate_batch(lm, B, prompts, 2, N, &greedy, NULL, stop, out), 0);
        for (int b = 0; b < B; b++) {
            bool ended = false;
            for (int i = 0; i < N; i++) {
                int32_t want = ended ? stop : alone[b].ids[i];
                ck_assert_int_eq(out[b * N + i], want);
                ended = ended || want == stop;
            }
            if (b == 1)
                ck_assert(ended);
        }
        qkv_gpt_lm_free(lm);
    }
    /* Sampled, a batch of one draws what qkv_generate draws. */
    qkv_lm *lm = qkv_gpt_lm_new(m, true);
    qkv_sample_opts opts = {.temperature = 1, .top_k = 10};
    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 3);
    qkv_rng_seed(&r2, 3);
    tokens one = {0};
    int32_t out[N];
    ck_assert_int_eq(qkv_generate(lm, prompts, 2, N, &opts, &r1, collect, &one), 0);
    ck_assert_int_eq(qkv_generate_batch(lm, 1, prompts, 2, N, &opts, &r2, -1, out), 0);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(out[i], one.ids[i]);
    qkv_gpt_lm_free(lm);
    qkv_gpt_free(m);
}
END_TEST

/* A home-made transformer from the public nn modules, the way a user would
 * write one: token + position embeddings, two causal blocks, a LayerNorm and
 * an lm head, with a key/value cache or without. */
typedef struct tiny {
    qkv_params *p;
    qkv_embed wte, wpe;
    qkv_block h[2];
    qkv_ln ln_f;
    qkv_linear head;
    qkv_kv_cache *cache; /* NULL: recompute the window */
} tiny;

static qkv_tensor *tiny_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                               int pos)
{
    tiny *m = model;
    ck_assert_int_eq(B, 1);
    int32_t at[16];
    for (int i = 0; i < n; i++)
        at[i] = pos + i;
    if (m->cache && pos == 0)
        qkv_kv_cache_reset(m->cache);
    qkv_tensor *x = qkv_add(ctx->arena, qkv_embed_forward(&m->wte, ctx, ids, QKV_SHAPE(1, n)),
                            qkv_embed_forward(&m->wpe, ctx, at, QKV_SHAPE(1, n)));
    for (int l = 0; l < 2; l++)
        x = m->cache ? qkv_block_forward_cached(&m->h[l], ctx, x, m->cache, l)
                     : qkv_block_forward(&m->h[l], ctx, x, NULL, NULL);
    return qkv_linear_forward(&m->head, ctx, qkv_ln_forward(&m->ln_f, ctx, x));
}

START_TEST(test_a_home_made_transformer_with_and_without_its_cache)
{
    enum { VOCAB = 11, CONTEXT = 10, C = 16 };
    qkv_block_config bc = {.n_embd = C, .n_head = 4, .n_layer = 2};
    tiny m = {.p = qkv_params_new()};
    ck_assert_int_eq(qkv_embed_init(&m.wte, m.p, "wte", VOCAB, C, 1), 0);
    ck_assert_int_eq(qkv_embed_init(&m.wpe, m.p, "wpe", CONTEXT, C, 1), 0);
    ck_assert_int_eq(qkv_block_init(&m.h[0], m.p, "h.0", &bc, true), 0);
    ck_assert_int_eq(qkv_block_init(&m.h[1], m.p, "h.1", &bc, true), 0);
    ck_assert_int_eq(qkv_ln_init(&m.ln_f, m.p, "ln_f", C, true), 0);
    ck_assert_int_eq(qkv_linear_init(&m.head, m.p, "head", C, VOCAB, false, 1), 0);
    qkv_rng init;
    qkv_rng_seed(&init, 4);
    ck_assert_int_eq(qkv_params_alloc(m.p, &init), 0);
    qkv_lm lm = {.model = &m, .logits = tiny_logits, .vocab_size = VOCAB, .context = CONTEXT};
    qkv_sample_opts opts = {.temperature = 1};
    tokens with = {0}, without = {0};
    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 8);
    qkv_rng_seed(&r2, 8);
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){3, 1, 4}, 3, 50, &opts, &r1, collect, &without),
                     0);
    m.cache = qkv_kv_cache_new(&bc, 1, CONTEXT);
    ck_assert_qkv(m.cache);
    lm.cached = true;
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){3, 1, 4}, 3, 50, &opts, &r2, collect, &with),
                     0);
    for (int i = 0; i < 50; i++)
        ck_assert_msg(with.ids[i] == without.ids[i], "token %d: cached %d, uncached %d", i,
                      with.ids[i], without.ids[i]);
    qkv_kv_cache_free(m.cache);
    qkv_params_free(&m.p);
}
END_TEST

typedef struct text {
    char s[MAX_CALLS + 1];
    size_t n, stop_after;
} text;

static int append(const char *piece, size_t len, void *ud)
{
    text *t = ud;
    memcpy(t->s + t->n, piece, len);
    t->n += len;
    t->s[t->n] = 0;
    return t->stop_after && t->n >= t->stop_after;
}

START_TEST(test_text_in_text_out)
{
    const char *corpus = "abcdefg";
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, corpus, strlen(corpus));
    ck_assert_int_eq(tok.size, V);
    toy t1 = {.cached = true}, t2 = {.cached = true};
    qkv_lm lm = {.model = &t1, .logits = toy_logits, .vocab_size = V, .context = 8, .cached = true};
    qkv_sample_opts opts = {.temperature = 0.8, .top_k = 5};
    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 3);
    qkv_rng_seed(&r2, 3);
    text out = {0};
    ck_assert_int_eq(qkv_generate_text(&lm, &tok, "cab", 30, &opts, &r1, append, &out), 0);
    ck_assert_uint_eq(out.n, 30);
    /* The same as the token loop on the encoded prompt, decoded. */
    lm.model = &t2;
    tokens ids = {0};
    ck_assert_int_eq(qkv_generate(&lm, (int32_t[]){2, 0, 1}, 3, 30, &opts, &r2, collect, &ids), 0);
    char want[31];
    ck_assert_int_eq(qkv_decode(&tok, ids.ids, 30, want), 0);
    want[30] = 0;
    ck_assert_str_eq(out.s, want);
    /* The text callback can stop it. */
    text few = {.stop_after = 4};
    ck_assert_int_eq(qkv_generate_text(&lm, &tok, "g", 30, &opts, &r1, append, &few), 0);
    ck_assert_uint_eq(few.n, 4);
}
END_TEST

START_TEST(test_gpt_as_an_lm_text_in_text_out)
{
    const char *corpus = "abcdefghijklmnopqrst";
    qkv_tokenizer tok;
    qkv_tokenizer_build(&tok, corpus, strlen(corpus));
    qkv_gpt *m = qkv_gpt_new(&(qkv_gpt_config){.vocab_size = 20, .block_size = 12, .n_layer = 2,
                                                .n_head = 2, .n_embd = 16}, 7);
    ck_assert_qkv(m);
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] *= 20;
    qkv_sample_opts opts = {.temperature = 0.9, .top_k = 8};
    for (int cache = 0; cache < 2; cache++) {
        qkv_lm *lm = qkv_gpt_lm_new(m, cache);
        ck_assert_qkv(lm);
        ck_assert_int_eq(lm->vocab_size, 20);
        ck_assert_int_eq(lm->context, 12);
        qkv_rng r1, r2;
        qkv_rng_seed(&r1, 2);
        qkv_rng_seed(&r2, 2);
        text out = {0};
        ck_assert_int_eq(qkv_generate_text(lm, &tok, "bcd", 40, &opts, &r1, append, &out), 0);
        tokens ids = {0};
        ck_assert_int_eq(qkv_gpt_generate(m, (int32_t[]){1, 2, 3}, 3, 40, &opts, &r2, cache,
                                          collect, &ids), 0);
        char want[41];
        ck_assert_int_eq(qkv_decode(&tok, ids.ids, 40, want), 0);
        want[40] = 0;
        ck_assert_str_eq(out.s, want);
        qkv_gpt_lm_free(lm);
    }
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_zero_sampling_options_are_greedy_and_top_p_zero_keeps_all)
{
    const qkv_real logits[5] = {0.5f, 2.0f, 1.0f, -1.0f, 1.9f};
    qkv_real scratch[10];
    qkv_rng rng, r1, r2;
    qkv_rng_seed(&rng, 3);
    ck_assert_int_eq(qkv_sample_opts_check(&(qkv_sample_opts){0}), 0);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(qkv_sample_token(logits, 5, &(qkv_sample_opts){0}, &rng, scratch), 1);
    /* The example: temperature and top_k set, top_p left 0 = keep all. */
    qkv_sample_opts zero_p = {.temperature = 0.8, .top_k = 5};
    qkv_sample_opts one_p = {.temperature = 0.8, .top_k = 5, .top_p = 1};
    ck_assert_int_eq(qkv_sample_opts_check(&zero_p), 0);
    qkv_rng_seed(&r1, 9);
    qkv_rng_seed(&r2, 9);
    int differ = 0, seen[5] = {0};
    for (int i = 0; i < 2000; i++) {
        int a = qkv_sample_token(logits, 5, &zero_p, &r1, scratch);
        differ += a != qkv_sample_token(logits, 5, &one_p, &r2, scratch);
        seen[a]++;
    }
    ck_assert_int_eq(differ, 0);
    for (int i = 0; i < 5; i++) /* every token can be drawn: nothing was cut */
        ck_assert_int_gt(seen[i], 0);
}
END_TEST

START_TEST(test_misuse)
{
    toy t = {.cached = false};
    qkv_lm lm = {.model = &t, .logits = toy_logits, .vocab_size = V, .context = 8};
    qkv_sample_opts opts = {0};
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    const int32_t p[2] = {1, 2};
    qkv_real scratch[2 * V], logits[V] = {0};
    FAILS_INT(qkv_sample_token(NULL, V, &opts, &rng, scratch), "qkv_sample_token", "logits");
    FAILS_INT(qkv_sample_token(logits, V, &(qkv_sample_opts){.temperature = 1}, NULL, scratch),
              "qkv_sample_token", "rng");
    ck_assert_int_eq(qkv_sample_token(logits, V, &opts, NULL, scratch), 0); /* greedy: no rng */
    qkv_real nan_logits[V] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    FAILS_INT(qkv_sample_token(nan_logits, V, &(qkv_sample_opts){.temperature = 1}, &rng, scratch),
              "qkv_sample_token", "not finite");
    FAILS_INT(qkv_sample_token(logits, V, &opts, &rng, NULL), "qkv_sample_token", "scratch");
    FAILS_INT(qkv_sample_token(logits, 0, &opts, &rng, scratch), "qkv_sample_token", "V 0");
    FAILS_INT(qkv_sample_token(logits, V, NULL, &rng, scratch), "qkv_sample_token", "opts is NULL");
    FAILS_INT(qkv_sample_opts_check(NULL), "qkv_sample_opts_check", "opts is NULL");
    FAILS_INT(qkv_generate(NULL, p, 2, 4, &opts, &rng, NULL, NULL), "qkv_generate", "lm");
    FAILS_INT(qkv_generate(&(qkv_lm){.vocab_size = V, .context = 8}, p, 2, 4, &opts, &rng, NULL,
                           NULL), "qkv_generate", "lm->logits");
    FAILS_INT(qkv_generate(&lm, NULL, 2, 4, &opts, &rng, NULL, NULL), "qkv_generate", "prompt");
    FAILS_INT(qkv_generate(&lm, p, 2, 4, &(qkv_sample_opts){.temperature = 1}, NULL, NULL, NULL),
              "qkv_generate", "rng");
    ck_assert_int_eq(qkv_generate(&lm, p, 2, 4, &opts, NULL, NULL, NULL), 0); /* greedy: no rng */
    FAILS_INT(qkv_generate(&lm, p, 2, 4, NULL, &rng, NULL, NULL), "qkv_generate", "opts is NULL");
    FAILS_INT(qkv_generate(&lm, p, 2, 4, &(qkv_sample_opts){.top_k = -1}, &rng, NULL, NULL),
              "top_k -1");
    qkv_lm no_context = lm, no_vocab = lm;
    no_context.context = 0;
    no_vocab.vocab_size = -3;
    FAILS_INT(qkv_generate(&no_context, p, 2, 4, &opts, &rng, NULL, NULL), "lm->context 0");
    FAILS_INT(qkv_generate(&no_vocab, p, 2, 4, &opts, &rng, NULL, NULL), "lm->vocab_size -3");
    FAILS_INT(qkv_generate(&lm, p, 0, 4, &opts, &rng, NULL, NULL), "at least one token (got 0)");
    FAILS_INT(qkv_generate(&lm, (int32_t[]){1, V}, 2, 4, &opts, &rng, NULL, NULL),
              "prompt token 7 at position 1", "vocabulary of 7");
    FAILS_INT(qkv_generate(&lm, p, 2, -1, &opts, &rng, NULL, NULL), "-1 new tokens");
    /* The callback's failures: its own message, and a tensor that is not rows of V. */
    t = (toy){.fail_at = 2};
    FAILS_INT(qkv_generate(&lm, p, 2, 4, &opts, &rng, NULL, NULL), "qkv_generate",
              "position 0", "toy: made to fail");
    t = (toy){.wrong_shape = true};
    FAILS_INT(qkv_generate(&lm, p, 2, 4, &opts, &rng, NULL, NULL), "qkv_generate", "(6)",
              "vocab_size 7");
    t = (toy){0};
    /* The text helper. */
    qkv_tokenizer tok, small;
    qkv_tokenizer_build(&tok, "abcdefg", 7);
    qkv_tokenizer_build(&small, "ab", 2);
    FAILS_INT(qkv_generate_text(NULL, &tok, "a", 4, &opts, &rng, NULL, NULL),
              "qkv_generate_text", "lm");
    FAILS_INT(qkv_generate_text(&lm, NULL, "a", 4, &opts, &rng, NULL, NULL),
              "qkv_generate_text", "tok");
    FAILS_INT(qkv_generate_text(&lm, &tok, NULL, 4, &opts, &rng, NULL, NULL),
              "qkv_generate_text", "prompt");
    FAILS_INT(qkv_generate_text(&lm, &tok, "", 4, &opts, &rng, NULL, NULL), "prompt is empty");
    FAILS_INT(qkv_generate_text(&lm, &tok, "abz", 4, &opts, &rng, NULL, NULL),
              "qkv_generate_text", "'z' at position 2");
    FAILS_INT(qkv_generate_text(&lm, &small, "a", 4, &opts, &rng, NULL, NULL), "2 tokens",
              "vocab_size is 7");
    FAILS_INT(qkv_generate_text(&lm, &tok, "a", -2, &opts, &rng, NULL, NULL), "-2 new tokens");
    ck_assert_int_eq(qkv_generate_text(&lm, &tok, "a", 3, &opts, &rng, NULL, NULL), 0);
    FAILS_INT(qkv_gpt_generate(NULL, p, 2, 4, &opts, &rng, true, NULL, NULL), "qkv_gpt_generate",
              "NULL");
    qkv_clear_error();
    ck_assert_ptr_null(qkv_gpt_lm_new(NULL, true));
    ck_assert_error("qkv_gpt_lm_new", "NULL");
    qkv_gpt_lm_free(NULL);
    qkv_gpt_lm_free(&lm); /* not the GPT's: refused, not freed */
    ck_assert_error("qkv_gpt_lm_free", "not made by qkv_gpt_lm_new");
}
END_TEST

static void one_thread(void) { omp_set_num_threads(1); }

static Suite *generate_suite(void)
{
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("generate");
    tcase_add_checked_fixture(tc, one_thread, NULL);
    tcase_add_test(tc, test_cached_and_uncached_models_get_the_same_tokens);
    tcase_add_test(tc, test_emit_stops_early_and_zero_tokens_call_nothing);
    tcase_add_test(tc, test_a_model_of_ones_own_matches_the_gpt_generation);
    tcase_add_test(tc, test_a_batch_is_its_rows_one_by_one);
    tcase_add_test(tc, test_a_home_made_transformer_with_and_without_its_cache);
    tcase_add_test(tc, test_text_in_text_out);
    tcase_add_test(tc, test_gpt_as_an_lm_text_in_text_out);
    tcase_add_test(tc, test_zero_sampling_options_are_greedy_and_top_p_zero_keeps_all);
    tcase_add_test(tc, test_misuse);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(generate_suite)
