/* Generation in bf16 (qkv/precision.h, tensor/kernels/gemm_bf16_held.h): a
 * generation holds each weight rounded and packed to bf16 once, and
 *   - a product that reads a held weight gives the bits of one that packs it
 *     afresh (shapes past one k block and one column block, 1 and 2 threads);
 *   - the copy follows the weights: an optimizer step or a checkpoint's load
 *     inside a hold, a generation after training, an activation at the same
 *     address;
 *   - a weight is packed once per generation, not once per token;
 *   - the logits of a cached bf16 generation are those of the same model with
 *     its weights rounded to bf16 by the definition and every product in
 *     fp32, within the rounding of the activations, and the greedy tokens
 *     agree wherever the reference's margin is wider than that;
 *   - 1 and 2 threads give the same bytes. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include "decode/decode.h"
#include "tensor/kernels/gemm_bf16.h"
#include "tensor/kernels/gemm_bf16_held.h"
#include "testing.h"

enum { V = 40, BLOCK = 32, N_PROMPT = 4, N_NEW = 24, STEPS_MAX = 64 };

static void bf16_on(void)
{
    omp_set_num_threads(1);
    ck_assert_int_eq(qkv_precision_use(QKV_PRECISION_BF16), 0);
}

static void bf16_off(void) { qkv_precision_use(QKV_PRECISION_FP32); }

/* A 2-layer GPT of width 64 with an lm head of its own, its weights scaled
 * up so that its logits are far from uniform. */
static qkv_gpt *small_gpt(uint64_t seed)
{
    qkv_gpt_config c = {.vocab_size = V, .block_size = BLOCK, .n_layer = 2, .n_head = 2,
                        .n_embd = 64};
    c.opts.untied = true;
    qkv_gpt *m = qkv_gpt_new(&c, seed);
    ck_assert_qkv(m);
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] *= 3;
    return m;
}

/* Round every matrix a product reads (the 2-D weights but the two
 * embeddings, which are looked up, not multiplied) to bf16 by the definition. */
static void round_weights(qkv_gpt *m)
{
    for (int i = 0; i < m->params->count; i++) {
        const qkv_param *p = &m->params->items[i];
        if (p->t->ndim != 2 || strncmp(p->name, "wte.", 4) == 0 || strncmp(p->name, "wpe.", 4) == 0)
            continue;
        for (size_t j = 0; j < p->t->size; j++)
            p->t->data[j] = qkv__bf16_float(qkv__bf16_round(p->t->data[j]));
    }
}

/* A plain SGD step of lr along a fixed pseudo-random direction: every weight moves. */
static void step_weights(qkv_gpt *m, double lr)
{
    qkv_optim_config cfg = qkv_sgd_defaults();
    qkv_optim *o = qkv_optim_new(m->params, &cfg);
    ck_assert_qkv(o);
    qkv_rng r;
    qkv_rng_seed(&r, 99);
    for (size_t i = 0; i < m->params->total; i++)
        m->params->grad[i] = (qkv_real)qkv_rng_normal(&r);
    ck_assert_int_eq(qkv_optim_step(o, m->params, lr), 0);
    qkv_optim_free(o);
}

/* ---- the held copy against a fresh packing ---- */

/* y = x·Wᵀ through qkv_affine in the active precision. */
static void affine(qkv_tensor *x, qkv_tensor *w, qkv_real *y)
{
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *out = qkv_affine(a, x, w, NULL);
    ck_assert_qkv(out);
    memcpy(y, out->data, out->size * sizeof *y);
    qkv_arena_free(&a);
}

START_TEST(test_a_held_weight_gives_the_bits_of_a_fresh_packing)
{
    /* K 1537: three k blocks, the last shorter (514, 514, 509 steps); N 1100: past two
     * blocks of columns (512) */
    enum { K = 1537, N = 1100, M_MAX = 37 };
    qkv_params *p = qkv_params_new();
    qkv_tensor *w = qkv_params_add(p, "w", QKV_SHAPE(N, K), QKV_INIT_NORMAL, 1);
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    ck_assert_int_eq(qkv_params_alloc(p, &r), 0);
    qkv_arena *a = qkv_arena_new(1 << 22);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(M_MAX, K), 1, &r);
    qkv_real *fresh = malloc(sizeof(qkv_real) * M_MAX * N), *held = malloc(sizeof(qkv_real) * M_MAX * N);
    const int rows[2] = {1, M_MAX};
    for (int threads = 1; threads <= 2; threads++)
        for (int c = 0; c < 2; c++) {
            omp_set_num_threads(threads);
            qkv_tensor xm = *x;
            xm.shape[0] = rows[c], xm.size = (size_t)rows[c] * K;
            affine(&xm, w, fresh);
            qkv__bf16_held_open();
            uint64_t made = qkv__bf16_held_made();
            affine(&xm, w, held);
            ck_assert_int_eq(memcmp(fresh, held, xm.size / K * N * sizeof *held), 0);
            affine(&xm, w, held); /* the copy, not a new one */
            ck_assert_int_eq(memcmp(fresh, held, xm.size / K * N * sizeof *held), 0);
            ck_assert_uint_eq(qkv__bf16_held_made(), made + 1);
            qkv__bf16_held_close();
        }
    free(fresh), free(held);
    qkv_arena_free(&a);
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_the_copy_follows_the_weights)
{
    qkv_gpt *m = small_gpt(3);
    qkv_tensor *w = m->h[0].mlp.c_fc.weight;
    const int K = w->shape[1], N = w->shape[0];
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_rng r;
    qkv_rng_seed(&r, 8);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(3, K), 1, &r);
    qkv_real before[3 * 256], after[3 * 256], fresh[3 * 256];
    ck_assert_int_le(3 * N, 3 * 256);

    /* an optimizer step inside a hold: the next product reads the new weights */
    qkv__bf16_held_open();
    affine(x, w, before);
    step_weights(m, 0.5);
    affine(x, w, after);
    qkv__bf16_held_close();
    affine(x, w, fresh);
    ck_assert_int_eq(memcmp(after, fresh, sizeof(qkv_real) * 3 * N), 0);
    ck_assert_int_ne(memcmp(before, after, sizeof(qkv_real) * 3 * N), 0);

    /* a checkpoint loaded inside a hold: likewise */
    char dir[] = "/tmp/qkv_bf16_held.XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/other.ckpt", dir);
    qkv_gpt *other = small_gpt(4);
    qkv_ckpt_model kind = {.kind = "test"};
    ck_assert_int_eq(qkv_checkpoint_save(path, &kind, other->params, NULL, NULL), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "test");
    ck_assert_qkv(ck);
    qkv__bf16_held_open();
    affine(x, w, before);
    ck_assert_int_eq(qkv_checkpoint_load(ck, m->params, NULL, NULL), 0);
    affine(x, w, after);
    qkv__bf16_held_close();
    affine(x, w, fresh);
    ck_assert_int_eq(memcmp(after, fresh, sizeof(qkv_real) * 3 * N), 0);
    ck_assert_int_ne(memcmp(before, after, sizeof(qkv_real) * 3 * N), 0);
    qkv_checkpoint_close(ck);
    qkv_gpt_free(other);
    unlink(path);
    rmdir(dir);

    /* a weight that is no parameter (an activation, here) is never held: it
     * may change at the same address between tokens */
    qkv_tensor *act = qkv_randn(a, QKV_SHAPE(N, K), 1, &r);
    qkv__bf16_held_open();
    uint64_t made = qkv__bf16_held_made();
    affine(x, act, before);
    for (size_t i = 0; i < act->size; i++)
        act->data[i] *= -2;
    affine(x, act, after);
    ck_assert_uint_eq(qkv__bf16_held_made(), made);
    qkv__bf16_held_close();
    for (int i = 0; i < 3 * N; i++)
        ck_assert_float_eq(after[i], -2 * before[i]); /* ×−2 is exact in bf16 and in fp32 */
    qkv_arena_free(&a);
    qkv_gpt_free(m);
}
END_TEST

/* ---- generation ---- */

/* What a generation saw: each step's next-token logits and the tokens. */
typedef struct record {
    qkv_lm *inner; /* the GPT's cached lm */
    qkv_real logits[STEPS_MAX][V];
    int32_t tokens[STEPS_MAX];
    int steps, n_tokens;
    uint64_t made_at_first; /* copies made by the end of the first step */
} record;

static qkv_tensor *recording_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B,
                                    int n, int pos)
{
    record *rec = model;
    qkv_tensor *t = rec->inner->logits(rec->inner->model, ctx, ids, B, n, pos);
    if (t && rec->steps < STEPS_MAX)
        memcpy(rec->logits[rec->steps++], t->data + t->size - V, V * sizeof(qkv_real));
    if (rec->steps == 1)
        rec->made_at_first = qkv__bf16_held_made();
    return t;
}

static int keep_token(int32_t tok, void *ud)
{
    record *rec = ud;
    rec->tokens[rec->n_tokens++] = tok;
    return 0;
}

static const int32_t prompt[N_PROMPT] = {3, 14, 15, 9};

/* m's greedy cached generation of n_new tokens in the active precision, recorded. */
static void generate(const qkv_gpt *m, int n_new, record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->inner = qkv_gpt_lm_new(m, true);
    ck_assert_qkv(rec->inner);
    qkv_lm lm = {.model = rec, .logits = recording_logits, .vocab_size = V, .context = BLOCK,
                 .cached = true};
    qkv_sample_opts greedy = {0};
    ck_assert_int_eq(qkv_generate(&lm, prompt, N_PROMPT, n_new, &greedy, NULL, keep_token, rec),
                     0);
    ck_assert_int_eq(rec->n_tokens, n_new);
    qkv_gpt_lm_free(rec->inner);
}

/* ref's logits in the active precision after the prompt and the first
 * `step` tokens rec generated, all positions recomputed (no cache, no hold).
 * The reference is the model with its weights rounded, in fp32. */
static void reference_logits(const qkv_gpt *ref, const record *rec, int step, qkv_real *out)
{
    int32_t ids[BLOCK];
    memcpy(ids, prompt, sizeof prompt);
    memcpy(ids + N_PROMPT, rec->tokens, (size_t)step * sizeof *ids);
    const int T = N_PROMPT + step;
    qkv_arena *a = qkv_arena_new(1 << 22);
    qkv_ctx ctx = {.arena = a};
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *t = qkv_gpt_logits(ref, &ctx, ids, 1, T, NULL);
    qkv_set_grad_enabled(was);
    ck_assert_qkv(t);
    memcpy(out, t->data + (size_t)(T - 1) * V, V * sizeof *out);
    qkv_arena_free(&a);
}

/* How far bf16's logits may be from the reference's: the reference rounds
 * the weights as bf16 does, so what is left is bf16's rounding of the
 * activations each product reads (x before every Linear, q, k, v and the
 * attention weights): a relative 2^-9 for each operand, through two blocks
 * and the head. On logits of size `scale` (the largest |logit|), 2^-9 per
 * rounding with some ten roundings on the way compounds to a few percent:
 * 0.04·scale. Measured: the worst step of the test's model uses about half
 * of it (the test prints it, and how far fp32's products are). */
static double tolerance(const qkv_real *ref)
{
    double scale = 0;
    for (int v = 0; v < V; v++)
        scale = fabs(ref[v]) > scale ? fabs(ref[v]) : scale;
    return 0.04 * scale;
}

/* The gap between the largest logit and the next. */
static double margin(const qkv_real *x)
{
    int32_t best = qkv__argmax(x, V);
    double next = -INFINITY;
    for (int v = 0; v < V; v++)
        if (v != best && x[v] > next)
            next = x[v];
    return x[best] - next;
}

/* rec (a cached bf16 generation from m, its weights held) against m: every
 * step's logits the bits of m's whole forward in bf16 without a hold (so
 * every copy was the weights of the moment: no stale one), and within the
 * tolerance of the rounded reference, the tokens equal where the margin
 * allows. Returns the worst difference over the tolerance. */
static double check_against_reference(const qkv_gpt *m, uint64_t seed, const record *rec)
{
    qkv_gpt *ref = small_gpt(seed);
    memcpy(ref->params->data, m->params->data, m->params->total * sizeof(qkv_real));
    round_weights(ref);
    double worst = 0;
    int compared = 0;
    for (int s = 0; s < rec->steps; s++) {
        qkv_real want[V];
        /* one attention tile (28 positions): the cache changes no sum's order */
        ck_assert_int_eq(qkv_precision_active(), QKV_PRECISION_BF16);
        reference_logits(m, rec, s, want);
        ck_assert_msg(memcmp(want, rec->logits[s], sizeof want) == 0,
                      "step %d: the held generation is not the bf16 forward", s);
        qkv_precision_use(QKV_PRECISION_FP32);
        reference_logits(ref, rec, s, want);
        qkv_precision_use(QKV_PRECISION_BF16);
        double tol = tolerance(want), diff = 0;
        for (int v = 0; v < V; v++)
            diff = fmax(diff, fabs((double)rec->logits[s][v] - want[v]));
        ck_assert_msg(diff <= tol, "step %d: logits %g from the reference (tolerance %g)", s,
                      diff, tol);
        worst = fmax(worst, diff / tol);
        if (margin(want) > 2 * tol) { /* no rounding within the tolerance can swap the top two */
            ck_assert_msg(rec->tokens[s] == qkv__argmax(want, V), "step %d: token %d, the "
                          "reference's %d (margin %g)", s, rec->tokens[s], qkv__argmax(want, V),
                          margin(want));
            compared++;
        }
    }
    ck_assert_msg(compared >= rec->steps / 2, "only %d of %d steps had the margin to compare "
                  "tokens", compared, rec->steps);
    qkv_gpt_free(ref);
    return worst;
}

START_TEST(test_bf16_generation_is_the_rounded_model)
{
    qkv_gpt *m = small_gpt(11);
    record *bf = malloc(sizeof *bf), *fp = malloc(sizeof *fp);
    generate(m, N_NEW, bf);
    double worst = check_against_reference(m, 11, bf);
    /* the same generation in fp32 with the weights as they are, for scale */
    qkv_precision_use(QKV_PRECISION_FP32);
    generate(m, N_NEW, fp);
    double fp_gap = 0;
    for (int s = 0; s < N_NEW; s++)
        for (int v = 0; v < V; v++)
            fp_gap = fmax(fp_gap, fabs((double)fp->logits[s][v] - bf->logits[s][v]));
    printf("bf16 generation: worst logit gap %.3f of the tolerance; fp32 one %.4g away\n", worst,
           fp_gap);
    ck_assert_msg(fp_gap > 0, "bf16 gave fp32's logits: the products did not change");
    free(bf), free(fp);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_a_generation_after_training_reads_the_new_weights)
{
    qkv_gpt *m = small_gpt(12);
    record *before = malloc(sizeof *before), *after = malloc(sizeof *after);
    generate(m, N_NEW, before);
    step_weights(m, 0.05);
    generate(m, N_NEW, after);
    check_against_reference(m, 12, after);
    double moved = 0;
    for (int v = 0; v < V; v++)
        moved = fmax(moved, fabs((double)after->logits[0][v] - before->logits[0][v]));
    ck_assert_msg(moved > 1, "the step moved the first logits by only %g", moved);
    free(before), free(after);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_each_weight_is_packed_once_per_generation)
{
    qkv_gpt *m = small_gpt(13);
    record *rec = malloc(sizeof *rec);
    uint64_t at = qkv__bf16_held_made();
    generate(m, 4, rec);
    uint64_t short_run = qkv__bf16_held_made() - at, first = rec->made_at_first - at;
    at = qkv__bf16_held_made();
    generate(m, N_NEW, rec);
    uint64_t long_run = qkv__bf16_held_made() - at;
    /* every weight in the first step (the prompt), none after it */
    ck_assert_uint_gt(first, 0);
    ck_assert_uint_eq(short_run, first);
    ck_assert_uint_eq(long_run, short_run);
    ck_assert_uint_le(long_run, 3 * (uint64_t)m->params->count);
    free(rec);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_one_and_two_threads_give_the_same_bytes)
{
    qkv_gpt *m = small_gpt(14);
    record *one = malloc(sizeof *one), *two = malloc(sizeof *two);
    generate(m, N_NEW, one);
    omp_set_num_threads(2);
    generate(m, N_NEW, two);
    ck_assert_int_eq(memcmp(one->logits, two->logits, sizeof one->logits), 0);
    ck_assert_int_eq(memcmp(one->tokens, two->tokens, sizeof one->tokens), 0);
    free(one), free(two);
    qkv_gpt_free(m);
}
END_TEST

static Suite *bf16_generate_suite(void)
{
    Suite *s = suite_create("bf16_generate");
    TCase *tc = tcase_create("bf16_generate");
    tcase_add_checked_fixture(tc, bf16_on, bf16_off);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_a_held_weight_gives_the_bits_of_a_fresh_packing);
    tcase_add_test(tc, test_the_copy_follows_the_weights);
    tcase_add_test(tc, test_bf16_generation_is_the_rounded_model);
    tcase_add_test(tc, test_a_generation_after_training_reads_the_new_weights);
    tcase_add_test(tc, test_each_weight_is_packed_once_per_generation);
    tcase_add_test(tc, test_one_and_two_threads_give_the_same_bytes);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bf16_generate_suite)
