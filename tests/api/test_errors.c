/* Bad input never takes the caller's process down: every public entry point
 * given bad arguments returns NULL (or -1, or NAN) and leaves a message that
 * says what is wrong, naming the shapes, ids and sizes involved; and the
 * library does not even reference exit(), abort() or the assert machinery. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "cli/viz/viz.h"
#include "testing.h"

/* Under AddressSanitizer a huge malloc must return NULL like the real one
 * (qkv reports it), not stop the test. Unused without ASan; visible, since
 * the build hides symbols by default and ASan looks this one up. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* Every test gets a fresh arena. One thread: these tests are about messages,
 * and idle OpenMP threads only slow tiny models down on a busy machine. */
static qkv_arena *A;
static void arena_setup(void)
{
    omp_set_num_threads(1);
    A = qkv_arena_new(1 << 16);
}
static void arena_teardown(void) { qkv_arena_free(&A); }

/* A tensor of the given shape filled with 0.1, 0.2, ... */
static qkv_tensor *filled(int ndim, const int *shape)
{
    qkv_tensor *t = qkv_tensor_new(A, ndim, shape);
    ck_assert_qkv(t);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (qkv_real)(0.1 * (double)(i % 7 + 1));
    return t;
}

/* A temporary file holding text, repeated; its path is in a static buffer (unlink it). */
static const char *temp_text(const char *text, size_t len, int repeats)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/qkv_err_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    for (int i = 0; i < repeats; i++)
        ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static const char *TEXT =
    "the quick brown fox jumps over the lazy dog; attention is all you need.\n";

/* ======================================================== tensors and memory */

START_TEST(test_bad_shapes_and_sizes)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    FAILS_NULL(qkv_zeros(A, 0, (int[]){1}), "1 to 4 dimensions, not 0");
    FAILS_NULL(qkv_ones(A, 5, (int[]){1, 1, 1, 1, 1}), "1 to 4 dimensions, not 5");
    FAILS_NULL(qkv_zeros(A, QKV_SHAPE(2, 0)), "dimension 1 of a tensor shape is 0");
    FAILS_NULL(qkv_from_array(A, QKV_SHAPE(-3), (qkv_real[]){1}), "dimension 0", "is -3");
    FAILS_NULL(qkv_randn(A, QKV_SHAPE(1 << 30, 1 << 30, 1 << 30, 1 << 30), 1, &rng), "too large");
    FAILS_NULL(qkv_rand_uniform(A, QKV_SHAPE(2, -1), 0, 1, &rng), "is -1");
    FAILS_NULL(qkv_arena_alloc(A, SIZE_MAX - 8), "arena", "too large");
    FAILS_NULL(qkv_alloc(SIZE_MAX - 8), "too large");
    FAILS_NULL(qkv_alloc((size_t)1 << 60), "out of memory allocating 1152921504606846976 bytes");
}
END_TEST

START_TEST(test_backward_errors)
{
    qkv_tensor *x = filled(QKV_SHAPE(2, 3));
    qkv_set_requires_grad(x, true);
    FAILS_INT(qkv_backward(A, qkv_scale(A, x, 2)), "backward", "one value, not shape (2,3)");
    qkv_tensor *c = filled(QKV_SHAPE(2, 3));
    FAILS_INT(qkv_backward(A, qkv_sum(A, c)), "does not depend on any tensor that requires grad");
    /* A NULL loss (an earlier op failed) names itself and keeps the earlier message as the cause. */
    qkv_set_error("the earlier failure");
    ck_assert_int_eq(qkv_backward(A, NULL), -1);
    ck_assert_str_eq(qkv_last_error(),
                     "qkv_backward: input loss is NULL: an earlier call failed: the earlier failure");
}
END_TEST

/* ======================================================== ops */

START_TEST(test_elementwise_mismatch_names_both_shapes)
{
    qkv_tensor *x = filled(QKV_SHAPE(2, 3)), *y = filled(QKV_SHAPE(4));
    FAILS_NULL(qkv_add(A, x, y), "add", "(2,3)", "(4)");
    FAILS_NULL(qkv_sub(A, x, y), "sub", "(2,3)", "(4)");
    FAILS_NULL(qkv_mul(A, y, x), "mul", "(4)", "(2,3)");
    FAILS_NULL(qkv_dropout(A, x, 1, NULL, true), "dropout", "[0, 1), not 1");
    FAILS_NULL(qkv_dropout(A, x, (qkv_real)NAN, NULL, true), "dropout", "not nan");
    FAILS_NULL(qkv_dropout(A, x, 0.5, NULL, true), "dropout", "needs an rng");
    /* A NULL input is an earlier failure: NULL again, its message kept as the
     * cause, once, however many ops it passed through. */
    qkv_set_error("the earlier failure");
    ck_assert_ptr_null(qkv_gelu(A, qkv_add(A, NULL, x)));
    ck_assert_str_eq(qkv_last_error(),
                     "qkv_gelu: input x is NULL: an earlier call failed: the earlier failure");
}
END_TEST

START_TEST(test_matmul_mismatch_names_both_shapes)
{
    qkv_tensor *x = filled(QKV_SHAPE(2, 3)), *w = filled(QKV_SHAPE(4, 5));
    FAILS_NULL(qkv_matmul(A, x, w, false, false), "matmul", "inner dimensions differ", "(2,3)",
               "(4,5)");
    FAILS_NULL(qkv_matmul(A, x, w, false, true), "matmul", "(2,3)", "(4,5)");
    qkv_tensor *v = filled(QKV_SHAPE(3));
    FAILS_NULL(qkv_matmul(A, x, v, false, false), "matmul", "at least 2 dimensions", "(3)");
    qkv_tensor *b1 = filled(QKV_SHAPE(2, 3, 4)), *b2 = filled(QKV_SHAPE(3, 4, 5));
    FAILS_NULL(qkv_matmul(A, b1, b2, false, false), "batch dimensions differ", "(2,3,4)",
               "(3,4,5)");
}
END_TEST

START_TEST(test_shape_ops_bad_arguments)
{
    qkv_tensor *x = filled(QKV_SHAPE(2, 3)), *y = filled(QKV_SHAPE(4, 2));
    FAILS_NULL(qkv_reshape(A, x, QKV_SHAPE(7)), "reshape", "(2,3)", "(7)");
    FAILS_NULL(qkv_reshape(A, x, QKV_SHAPE(6, 0)), "reshape", "extents must be >= 1");
    FAILS_NULL(qkv_reshape(A, x, 0, (int[]){1}), "reshape", "not 0");
    FAILS_NULL(qkv_permute(A, x, (int[]){0, 0}), "permute", "{0,0} is not a permutation", "(2,3)");
    FAILS_NULL(qkv_permute(A, x, (int[]){0, 2}), "permute", "{0,2}");
    FAILS_NULL(qkv_transpose(A, filled(QKV_SHAPE(5))), "transpose", "(5)");
    FAILS_NULL(qkv_concat(A, 0, NULL), "concat", "at least one tensor");
    FAILS_NULL(qkv_concat(A, 2, (qkv_tensor *[]){x, y}), "concat", "(2,3)", "(4,2)");
    FAILS_NULL(qkv_slice(A, x, 2, 2), "slice", "[2, 4)", "(2,3)");
    FAILS_NULL(qkv_slice(A, x, -1, 1), "slice", "(2,3)");
    FAILS_NULL(qkv_slice(A, x, 0, 0), "slice", "(2,3)");
}
END_TEST

START_TEST(test_out_of_range_ids_name_id_and_vocabulary)
{
    qkv_tensor *table = filled(QKV_SHAPE(5, 3));
    FAILS_NULL(qkv_embedding(A, table, (int32_t[]){1, 7}, QKV_SHAPE(2)), "embedding", "id 7",
               "position 1", "[0, 5)");
    FAILS_NULL(qkv_embedding(A, table, (int32_t[]){-1}, QKV_SHAPE(1)), "id -1", "[0, 5)");
    FAILS_NULL(qkv_embedding(A, table, NULL, QKV_SHAPE(1)), "embedding", "ids is NULL");
    FAILS_NULL(qkv_embedding(A, filled(QKV_SHAPE(5)), (int32_t[]){0}, QKV_SHAPE(1)), "embedding",
               "2-D", "(5)");
    FAILS_NULL(qkv_embedding(A, table, (int32_t[]){0}, QKV_SHAPE(1, 0)), "embedding", "extent 0");
    qkv_tensor *logits = filled(QKV_SHAPE(2, 5));
    FAILS_NULL(qkv_cross_entropy(A, logits, (int32_t[]){1, 9}, -1), "cross_entropy", "target 9",
               "row 1", "[0, 5)");
    FAILS_NULL(qkv_cross_entropy(A, logits, (int32_t[]){-2, 0}, -1), "target -2", "[0, 5)");
    FAILS_NULL(qkv_cross_entropy(A, logits, NULL, -1), "cross_entropy", "targets is NULL");
    /* The ignored id is not an error. */
    ck_assert_qkv(qkv_cross_entropy(A, logits, (int32_t[]){-1, 4}, -1));
}
END_TEST

START_TEST(test_fused_ops_bad_arguments)
{
    qkv_tensor *x = filled(QKV_SHAPE(2, 4)), *w = filled(QKV_SHAPE(3));
    FAILS_NULL(qkv_layernorm(A, x, w, NULL, 1e-5), "layernorm", "(2,4)", "(3)");
    FAILS_NULL(qkv_layernorm(A, x, NULL, NULL, -1), "layernorm", "eps must be >= 0");
    qkv_tensor *v = filled(QKV_SHAPE(4));
    FAILS_NULL(qkv_softmax_masked(A, v, &(qkv_mask){.causal = true}, 1), "causal mask", "(4)");
    FAILS_NULL(qkv_softmax_masked(A, x, &(qkv_mask){.key_valid = (uint8_t[]){1, 1, 1, 1}}, 1),
               "key-padding mask", "(2,4)");
    qkv_tensor *q = filled(QKV_SHAPE(1, 3, 4)), *k = filled(QKV_SHAPE(1, 5, 8));
    FAILS_NULL(qkv_attention(A, q, k, k, NULL, 0, NULL, NULL), "attention", "(1,3,4)", "(1,5,8)");
    qkv_tensor *k4 = filled(QKV_SHAPE(1, 5, 4)), *v6 = filled(QKV_SHAPE(1, 6, 4));
    FAILS_NULL(qkv_attention(A, q, k4, v6, NULL, 0, NULL, NULL), "attention", "(1,5,4)", "(1,6,4)");
    FAILS_NULL(qkv_attention(A, q, k4, k4, NULL, 0.5, NULL, NULL), "attention", "needs an rng");
}
END_TEST

/* ======================================================== parameters and modules */

START_TEST(test_params_misuse)
{
    qkv_params *p = qkv_params_new();
    ck_assert_qkv(p);
    FAILS_INT(qkv_params_alloc(p, NULL), "no parameters declared");
    FAILS_NULL(qkv_params_add(p, "w", 0, (int[]){1}, QKV_INIT_ZEROS, 0), "'w'", "0 dimensions");
    FAILS_NULL(qkv_params_add(p, "w", QKV_SHAPE(3, 0), QKV_INIT_ZEROS, 0), "'w'",
               "extent 0 in dimension 1");
    FAILS_NULL(qkv_params_add(p, "w", QKV_SHAPE(1 << 30, 1 << 30, 1 << 30, 4), QKV_INIT_ZEROS, 0),
               "'w'", "too large");
    char name[QKV_PARAM_NAME_MAX + 8];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    FAILS_NULL(qkv_params_add(p, name, QKV_SHAPE(1), QKV_INIT_ZEROS, 0), "longer than 63");
    ck_assert_qkv(qkv_params_add(p, "w", QKV_SHAPE(2), QKV_INIT_ONES, 0));
    FAILS_NULL(qkv_params_add(p, "w", QKV_SHAPE(2), QKV_INIT_ONES, 0), "'w' declared twice");
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    FAILS_INT(qkv_params_alloc(p, NULL), "called twice");
    FAILS_NULL(qkv_params_add(p, "b", QKV_SHAPE(2), QKV_INIT_ZEROS, 0),
               "'b' declared after qkv_params_alloc");
    ck_assert_ptr_null(qkv_params_find(p, "missing"));
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_module_inits_reject_bad_sizes)
{
    qkv_params *p = qkv_params_new();
    qkv_linear lin;
    qkv_embed emb;
    qkv_ln ln;
    qkv_mlp mlp;
    qkv_attn_head head;
    qkv_self_attn sa;
    qkv_cross_attn ca;
    qkv_block blk;
    qkv_cross_block cb;
    FAILS_INT(qkv_linear_init(&lin, p, "fc", 0, 4, true, 0.02), "'fc.weight'", "extent 0");
    FAILS_INT(qkv_linear_init(&lin, p, "fc2", 4, -2, true, 0.02), "'fc2.weight'", "extent -2");
    FAILS_INT(qkv_embed_init(&emb, p, "wte", -1, 8, 0.02), "'wte.weight'", "extent -1");
    FAILS_INT(qkv_ln_init(&ln, p, "ln", 0, true), "'ln.weight'", "extent 0");
    FAILS_INT(qkv_attn_head_init(&head, p, "head", 8, 0, true), "extent 0");
    qkv_block_config cfg = {.n_embd = 10, .n_head = 3, .n_layer = 1, .dropout = 0};
    FAILS_INT(qkv_self_attn_init(&sa, p, "attn", &cfg, true), "qkv_self_attn_init 'attn'",
              "n_embd 10 is not a multiple of n_head 3");
    FAILS_INT(qkv_block_init(&blk, p, "h.0", &cfg, true), "qkv_block_init 'h.0'", "n_head 3");
    FAILS_INT(qkv_cross_block_init(&cb, p, "d.0", &cfg, 8), "qkv_cross_block_init 'd.0'", "n_head 3");
    cfg = (qkv_block_config){.n_embd = 0, .n_head = 1, .n_layer = 1};
    FAILS_INT(qkv_mlp_init(&mlp, p, "mlp", &cfg), "qkv_mlp_init 'mlp'", "n_embd 0");
    cfg = (qkv_block_config){.n_embd = 8, .n_head = 2, .n_layer = 1, .dropout = 1.5};
    FAILS_INT(qkv_block_init(&blk, p, "h.1", &cfg, true), "dropout 1.5 is not in [0, 0.95]");
    cfg.dropout = 0;
    FAILS_INT(qkv_cross_attn_init(&ca, p, "x", &cfg, 0), "n_mem 0");
    FAILS_NULL(qkv_kv_cache_new(&cfg, 0, 16), "kv_cache", "batch 0");
    FAILS_NULL(qkv_kv_cache_new(&cfg, 1, -4), "kv_cache", "max_len -4");
    char prefix[QKV_PARAM_NAME_MAX];
    memset(prefix, 'p', sizeof prefix - 1);
    prefix[sizeof prefix - 1] = 0;
    FAILS_INT(qkv_block_init(&blk, p, prefix, &cfg, true), "longer than 63");
    qkv_params_free(&p);
}
END_TEST

START_TEST(test_module_forwards_reject_bad_input)
{
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1, .dropout = 0};
    qkv_params *p = qkv_params_new();
    qkv_linear lin;
    qkv_embed emb;
    qkv_block blk;
    qkv_cross_attn ca;
    ck_assert_int_eq(qkv_linear_init(&lin, p, "fc", 8, 4, true, 0.02), 0);
    ck_assert_int_eq(qkv_embed_init(&emb, p, "wte", 5, 8, 0.02), 0);
    ck_assert_int_eq(qkv_block_init(&blk, p, "h.0", &cfg, true), 0);
    ck_assert_int_eq(qkv_cross_attn_init(&ca, p, "x", &cfg, 6), 0);
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    qkv_ctx ctx = {.arena = A, .train = false};
    FAILS_NULL(qkv_linear_forward(&lin, &ctx, filled(QKV_SHAPE(2, 7))), "fc.weight", "(4,8)",
               "(2,7)", "last dim must be 8");
    FAILS_NULL(qkv_embed_forward(&emb, &ctx, (int32_t[]){4, 5}, QKV_SHAPE(1, 2)), "id 5", "[0, 5)");
    FAILS_NULL(qkv_block_forward(&blk, &ctx, filled(QKV_SHAPE(3, 8)), NULL, NULL), "(3,8)",
               "expected (B,T,8)");
    FAILS_NULL(qkv_cross_attn_forward(&ca, &ctx, filled(QKV_SHAPE(1, 3, 8)),
                                      filled(QKV_SHAPE(2, 4, 6)), NULL, NULL),
               "(1,3,8)", "(2,4,6)", "different batch sizes");
    FAILS_NULL(qkv_cross_attn_forward(&ca, &ctx, filled(QKV_SHAPE(1, 3, 8)),
                                      filled(QKV_SHAPE(1, 4, 8)), NULL, NULL),
               "(1,4,8)", "expected (B,T,6)");
    /* The key/value cache: grad mode on, a full cache, a layer it does not have. */
    qkv_kv_cache *c = qkv_kv_cache_new(&cfg, 1, 4);
    ck_assert_qkv(c);
    FAILS_NULL(qkv_block_forward_cached(&blk, &ctx, filled(QKV_SHAPE(1, 2, 8)), c, 0),
               "turn grad mode off");
    bool was = qkv_set_grad_enabled(false);
    ck_assert_qkv(qkv_block_forward_cached(&blk, &ctx, filled(QKV_SHAPE(1, 3, 8)), c, 0));
    FAILS_NULL(qkv_block_forward_cached(&blk, &ctx, filled(QKV_SHAPE(1, 2, 8)), c, 0),
               "qkv_self_attn_forward_cached: the cache's layer 0 holds 3 of 4 positions; 2 new "
               "ones do not fit");
    FAILS_NULL(qkv_block_forward_cached(&blk, &ctx, filled(QKV_SHAPE(1, 1, 8)), c, 1),
               "layer 1 does not exist");
    FAILS_NULL(qkv_block_forward_cached(&blk, &ctx, filled(QKV_SHAPE(2, 1, 8)), c, 0),
               "batch 2", "batch 1");
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(c);
    qkv_params_free(&p);
}
END_TEST

/* ======================================================== optimizers */

START_TEST(test_optimizer_misuse)
{
    qkv_params *p = qkv_params_new(), *other = qkv_params_new();
    qkv_params_add(p, "w", QKV_SHAPE(4, 4), QKV_INIT_ONES, 0);
    qkv_params_add(other, "w", QKV_SHAPE(40), QKV_INIT_ONES, 0);
    qkv_optim_config cfg = qkv_adamw_defaults();
    FAILS_NULL(qkv_optim_new(p, &cfg), "not allocated");
    ck_assert_int_eq(qkv_clip_grad_norm(p, 1.0), -1);
    ck_assert_error("clip", "not allocated");
    ck_assert_int_eq(qkv_params_alloc(p, NULL), 0);
    ck_assert_int_eq(qkv_params_alloc(other, NULL), 0);
    cfg.kind = (qkv_optim_kind)7;
    FAILS_NULL(qkv_optim_new(p, &cfg), "unknown kind 7");
    cfg = qkv_adamw_defaults();
    cfg.beta1 = 1;
    FAILS_NULL(qkv_optim_new(p, &cfg), "AdamW", "beta1, beta2 < 1", "not 1, 0.99");
    cfg = qkv_adamw_defaults();
    cfg.eps = -1e-9; /* 0 would be the default, 1e-8 */
    FAILS_NULL(qkv_optim_new(p, &cfg), "eps > 0");
    cfg = qkv_sgd_defaults();
    cfg.momentum = -0.5;
    FAILS_NULL(qkv_optim_new(p, &cfg), "momentum (-0.5) must be >= 0");
    cfg.momentum = 0.9;
    cfg.weight_decay = NAN;
    FAILS_NULL(qkv_optim_new(p, &cfg), "weight decay (nan)");
    cfg = qkv_adamw_defaults();
    qkv_optim *o = qkv_optim_new(p, &cfg);
    ck_assert_qkv(o);
    FAILS_INT(qkv_optim_step(o, other, 1e-3), "made for 16 values", "the parameters have 48");
    qkv_optim_free(o);
    qkv_params_free(&p);
    qkv_params_free(&other);
}
END_TEST

/* ======================================================== data */

START_TEST(test_tokenizer_and_sampler_errors)
{
    qkv_tokenizer tok;
    FAILS_INT(qkv_tokenizer_from_bytes(&tok, (const uint8_t *)"abca", 4), "strictly ascending",
              "byte 3 is 0x61 after 0x63");
    FAILS_INT(qkv_tokenizer_from_bytes(&tok, (const uint8_t *)"a", 300), "300 bytes");
    qkv_tokenizer_build(&tok, "abc", 3);
    int32_t ids[4];
    FAILS_INT(qkv_encode(&tok, "ab\xff", 3, ids), "character '\\xff' at position 2",
              "not in the vocabulary (3 characters)");
    FAILS_INT(qkv_encode(&tok, "a\nb", 3, ids), "'\\n' at position 1");
    FAILS_INT(qkv_decode(&tok, (int32_t[]){0, 3}, 2, (char[2]){0}), "token id 3 at position 1",
              "[0, 3)");
    const char *path = temp_text(TEXT, strlen(TEXT), 2);
    qkv_corpus *c = qkv_corpus_load(path, NULL);
    ck_assert_qkv(c);
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, c, QKV_SPLIT_TRAIN, 0, 8, 1), "batch size 0");
    FAILS_INT(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, 2, 64, 1), "val split has 15 tokens",
              "block size + 1 = 65");
    qkv_corpus_free(c);
    FAILS_NULL(qkv_corpus_load(path, &tok), "corpus '", "encode: character 't' at position 0");
    unlink(path);
    FAILS_NULL(qkv_corpus_load(path, NULL), "cannot open", "No such file or directory");
    FAILS_NULL(qkv_corpus_load("/tmp", NULL), "cannot read '/tmp': Is a directory");
}
END_TEST

/* The tokenizer is byte-level: text that is not UTF-8 (stray high bytes, a
 * NUL, every byte value) is accepted, one token per byte, and round-trips. */
START_TEST(test_any_bytes_are_accepted)
{
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(255 - i);
    const char *path = temp_text((const char *)all, sizeof all, 3);
    qkv_corpus *c = qkv_corpus_load(path, NULL);
    ck_assert_qkv(c);
    ck_assert_int_eq(c->tok.size, 256);
    ck_assert_uint_eq(c->len, 3 * 256);
    char back[256];
    ck_assert_int_eq(qkv_decode(&c->tok, c->ids, 256, back), 0);
    ck_assert_mem_eq(back, all, 256);
    ck_assert_int_eq(c->ids[0], 255); /* byte 0xff is the last of the sorted vocabulary */
    qkv_corpus_free(c);
    unlink(path);
}
END_TEST

/* ======================================================== the GPT, sampling */

static qkv_gpt_config tiny_gpt(int vocab)
{
    return (qkv_gpt_config){.vocab_size = vocab, .block_size = 8, .n_layer = 1, .n_head = 2,
                            .n_embd = 8, .dropout = 0};
}

START_TEST(test_gpt_config_errors_name_the_field)
{
    /* V, T, n_layer, n_head, n_embd, dropout */
#define GPT(V, T, L, H, C, P)                                                                      \
    {.vocab_size = V, .block_size = T, .n_layer = L, .n_head = H, .n_embd = C, .dropout = P}
    struct {
        qkv_gpt_config cfg;
        const char *want;
    } cases[] = {
        {GPT(0, 8, 1, 2, 8, 0), "vocab_size 0"},
        {GPT(5, 70000, 1, 2, 8, 0), "block_size 70000"},
        {GPT(5, 8, 0, 2, 8, 0), "n_layer 0"},
        {GPT(5, 8, 1, 2, -8, 0), "n_embd -8"},
        {GPT(5, 8, 1, 3, 8, 0), "n_embd 8 is not a multiple of n_head 3"},
        {GPT(5, 8, 1, 0, 8, 0), "n_head 0"},
        {GPT(5, 8, 1, 2, 8, 1.0), "dropout 1"},
        {GPT(5, 8, 1, 2, 8, NAN), "dropout nan"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FAILS_INT(qkv_gpt_config_check(&cases[i].cfg), "gpt config", cases[i].want);
        FAILS_NULL(qkv_gpt_new(&cases[i].cfg, 1), "gpt config", cases[i].want);
    }
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config cfg = tiny_gpt(5), back;
    qkv_gpt_config_pack(&cfg, blob);
    FAILS_INT(qkv_gpt_config_unpack(&back, blob, 31), "31 bytes, expected at least 32");
    blob[0] = 0xff, blob[3] = 0xff; /* vocab_size beyond 2^30 */
    FAILS_INT(qkv_gpt_config_unpack(&back, blob, sizeof blob), "vocab_size -1");
}
END_TEST

START_TEST(test_gpt_rejects_bad_ids_and_lengths)
{
    qkv_gpt_config mc = tiny_gpt(5);
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_ctx ctx = {.arena = A};
    int32_t idx[9] = {0, 1, 2, 3, 4, 0, 1, 2, 3}, bad[2] = {1, 5};
    FAILS_NULL(qkv_gpt_logits(m, &ctx, bad, 1, 2, NULL), "id 5", "[0, 5)");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, (int32_t[]){-3}, 1, 1, NULL), "id -3", "[0, 5)");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, idx, 1, 9, NULL), "9 positions", "block size 8");
    FAILS_NULL(qkv_gpt_logits(m, &ctx, idx, 0, 2, NULL), "batch 0");
    FAILS_NULL(qkv_gpt_loss(m, &ctx, idx, bad, 1, 2), "target 5", "[0, 5)");
    FAILS_NULL(qkv_gpt_loss(m, &ctx, bad, idx, 1, 2), "id 5", "[0, 5)");
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_sampling_and_generation_errors)
{
    struct {
        qkv_sample_opts o;
        const char *want;
    } cases[] = {
        {{-1, 0, 1}, "temperature -1"},     {{NAN, 0, 1}, "temperature nan"},
        {{INFINITY, 0, 1}, "temperature inf"}, {{1, -2, 1}, "top_k -2"},
        {{1, 0, -0.5}, "top_p -0.5 must be in [0, 1]"}, {{1, 0, 1.5}, "top_p 1.5"},
    };
    qkv_gpt_config mc = tiny_gpt(5);
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    int32_t prompt[2] = {1, 2};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FAILS_INT(qkv_sample_opts_check(&cases[i].o), "sample", cases[i].want);
        FAILS_INT(qkv_gpt_generate(m, prompt, 2, 4, &cases[i].o, &rng, true, NULL, NULL),
                  cases[i].want);
    }
    qkv_sample_opts ok = {.temperature = 1, .top_p = 1};
    FAILS_INT(qkv_gpt_generate(m, prompt, 0, 4, &ok, &rng, true, NULL, NULL),
              "at least one token (got 0)");
    FAILS_INT(qkv_gpt_generate(m, (int32_t[]){1, 9}, 2, 4, &ok, &rng, false, NULL, NULL),
              "prompt token 9 at position 1", "vocabulary of 5");
    FAILS_INT(qkv_gpt_generate(m, prompt, 2, -1, &ok, &rng, true, NULL, NULL), "-1 new tokens");
    ck_assert_int_eq(qkv_gpt_generate(m, prompt, 2, 0, &ok, &rng, true, NULL, NULL), 0);
    qkv_gpt_free(m);
}
END_TEST

/* ======================================================== training */

static qkv_train_config tiny_train(void)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 20;
    tc.batch_size = 2;
    tc.warmup = 2;
    tc.eval_iters = 2;
    return tc;
}

START_TEST(test_training_bad_arguments)
{
    const char *path = temp_text(TEXT, strlen(TEXT), 4);
    char corpus_path[64];
    snprintf(corpus_path, sizeof corpus_path, "%s", path);
    qkv_corpus *c = qkv_corpus_load(corpus_path, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = tiny_gpt(c->tok.size);
    qkv_train_config tc = tiny_train();
    qkv_gpt_config wrong = tiny_gpt(c->tok.size + 1);
    char want[128];
    snprintf(want, sizeof want,
             "corpus has %d distinct characters but the model's vocabulary is %d", c->tok.size,
             c->tok.size + 1);
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), want);
    wrong = mc;
    wrong.n_head = 3;
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), "n_embd 8 is not a multiple of n_head 3");
    wrong = mc;
    wrong.block_size = 1024;
    FAILS_NULL(gpt_run_new(&wrong, &tc, c), "fewer than block size + 1 = 1025");
    qkv_train_config bad = tc;
    bad.iters = -3;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "train config", "iters -3");
    bad = tc;
    bad.batch_size = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "batch_size -1");
    bad = tc;
    bad.lr = NAN;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "lr nan");
    bad = tc;
    bad.warmup = -5;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "warmup -5");
    bad = tc;
    bad.grad_clip = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "grad_clip -1");
    bad = tc;
    bad.eval_iters = -1;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "eval_iters -1");
    bad = tc;
    bad.wsd_decay = 1.5;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "wsd_decay 1.5 is not in [0, 1]");
    bad.wsd_decay = NAN;
    FAILS_NULL(gpt_run_new(&mc, &bad, c), "wsd_decay nan");

    /* Evaluating over no batches is an error, not a silent NaN. */
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_batcher s;
    ck_assert_int_eq(qkv_batcher_init(&s, c, QKV_SPLIT_VAL, 2, mc.block_size, 1), 0);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    int32_t x[2 * 8], y[2 * 8]; /* 2 windows of tiny_gpt's block of 8 */
    qkv_clear_error();
    ck_assert(isnan(qkv_gpt_mean_loss(m, &s, 0, arena, x, y)));
    ck_assert_error("iters 0");
    qkv_arena_free(&arena);
    qkv_gpt_free(m);

    qkv_corpus_free(c);
    unlink(corpus_path);
}
END_TEST

/* A run on a temporary copy of TEXT, its corpus path in path (unlink it). */
static test_run *tiny_run(char path[64])
{
    snprintf(path, 64, "%s", temp_text(TEXT, strlen(TEXT), 4));
    qkv_corpus *c = qkv_corpus_load(path, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = tiny_gpt(c->tok.size);
    qkv_train_config tc = tiny_train();
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    t->text = c; /* freed with the run */
    return t;
}

/* Every byte of the run's state that a step changes. */
typedef struct snapshot {
    unsigned char *data, *m, *v;
    int64_t step, opt_step;
} snapshot;

static snapshot take_snapshot(const test_run *t)
{
    size_t n = t->model->params->total * sizeof(qkv_real);
    snapshot s = {malloc(n), malloc(n), malloc(n), t->run->step, t->run->opt->step};
    memcpy(s.data, t->model->params->data, n);
    memcpy(s.m, t->run->opt->m, n);
    memcpy(s.v, t->run->opt->v, n);
    return s;
}

static void assert_unchanged(const test_run *t, snapshot *s)
{
    size_t n = t->model->params->total * sizeof(qkv_real);
    ck_assert_msg(memcmp(s->data, t->model->params->data, n) == 0, "the parameters changed");
    ck_assert_msg(memcmp(s->m, t->run->opt->m, n) == 0, "AdamW's first moments changed");
    ck_assert_msg(memcmp(s->v, t->run->opt->v, n) == 0, "AdamW's second moments changed");
    ck_assert_int_eq(t->run->step, s->step);
    ck_assert_int_eq(t->run->opt->step, s->opt_step);
    free(s->data);
    free(s->m);
    free(s->v);
}

/* A NaN (or infinite) loss stops the step before the optimizer: the error
 * names the step, and the parameters and moments are exactly as before. */
START_TEST(test_nonfinite_loss_stops_the_step_and_keeps_the_parameters)
{
    char corpus[64];
    test_run *t = tiny_run(corpus);
    double loss = 0;
    ck_assert_int_eq(qkv_training_step(t->run, &loss, NULL), 0);
    ck_assert_int_eq(qkv_training_step(t->run, &loss, NULL), 0);
    qkv_param *ln = qkv_params_find(t->model->params, "ln_f.weight");
    ck_assert_ptr_nonnull(ln);
    const qkv_real poison[2] = {(qkv_real)NAN, (qkv_real)INFINITY};
    for (int k = 0; k < 2; k++) {
        ln->t->data[0] = poison[k]; /* every position's logits go through it */
        snapshot s = take_snapshot(t);
        double before = loss;
        FAILS_INT(qkv_training_step(t->run, &loss, NULL), "step 2: the loss is ",
                  "stopping before it reaches the weights");
        ck_assert(loss == before); /* not written on failure */
        assert_unchanged(t, &s);
    }
    /* Evaluating such a model says why its loss is NaN. */
    ln->t->data[0] = (qkv_real)NAN;
    qkv_clear_error();
    ck_assert(isnan(qkv_training_eval(t->run, QKV_SPLIT_VAL)));
    ck_assert_error("qkv_gpt_mean_loss: batch 0 has a NaN loss");
    test_run_free(t);
    unlink(corpus);
}
END_TEST

/* A diverged run is never saved over the last good checkpoint. */
START_TEST(test_nonfinite_parameters_are_not_saved)
{
    char corpus[64], ckpt[80];
    test_run *t = tiny_run(corpus);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", corpus);
    ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    ck_assert_msg(qkv_training_save(t->run, ckpt) == 0, "%s", qkv_last_error());
    ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    qkv_param *w = qkv_params_find(t->model->params, "h.0.mlp.c_fc.weight");
    w->t->data[5] = (qkv_real)-INFINITY;
    FAILS_INT(qkv_training_save(t->run, ckpt), "parameter 'h.0.mlp.c_fc.weight' holds -inf", ckpt,
              "left as it was");
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt, "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 1); /* still the first save */
    qkv_checkpoint_close(ck);
    test_run_free(t);
    unlink(ckpt);
    unlink(corpus);
}
END_TEST

/* Save the weights of a new model of config real under a model kind, a
 * claimed config and a vocabulary of the caller's choice. */
static void save_model(const char *path, const char *kind, const qkv_gpt_config *real,
                       const qkv_gpt_config *claimed, const char *vocab_text)
{
    qkv_gpt *m = qkv_gpt_new(real, 2);
    ck_assert_qkv(m);
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(claimed, blob);
    qkv_tokenizer vocab;
    qkv_tokenizer_build(&vocab, vocab_text, strlen(vocab_text));
    qkv_ckpt_model model = {.kind = kind, .config = blob, .config_len = sizeof blob,
                            .vocab = &vocab};
    ck_assert_msg(qkv_checkpoint_save(path, &model, m->params, NULL, NULL) == 0, "%s",
                  qkv_last_error());
    qkv_gpt_free(m);
}

START_TEST(test_loading_a_checkpoint_of_another_model)
{
    char corpus[64], path[80];
    snprintf(corpus, sizeof corpus, "%s", temp_text("abcde", 5, 20));
    snprintf(path, sizeof path, "%s.ckpt", corpus);
    qkv_tokenizer vocab;
    qkv_gpt_config mc = tiny_gpt(5);

    save_model(path, "seq2seq", &mc, &mc, "abcde");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "holds a 'seq2seq' model, not the expected 'gpt'");
    FAILS_NULL(gpt_run_resume(path, corpus, 0), "holds a 'seq2seq' model");

    /* A GPT saved without its run loads for sampling, but cannot resume training. */
    save_model(path, "gpt", &mc, &mc, "abcde");
    qkv_gpt *m = qkv_gpt_load(path, &vocab);
    ck_assert_qkv(m);
    ck_assert_int_eq(vocab.size, 5);
    qkv_gpt_free(m);
    FAILS_NULL(gpt_run_resume(path, corpus, 0), "config of 32 bytes, expected 96");
    /* The whole message: the resume names itself, then where it failed. */
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: qkv_training_config_load: gpt "
                     "checkpoint: config of 32 bytes, expected 96 (a model saved without its run "
                     "cannot resume)");
    FAILS_NULL(gpt_run_resume(path, corpus, -5), "iters -5");
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: iters -5 is negative (0 keeps the "
                     "saved run length)");

    save_model(path, "gpt", &mc, &mc, "abcdef");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "vocabulary holds 6 characters but the model expects 5");

    /* Its config says two layers, its weights are for one. */
    qkv_gpt_config two = mc;
    two.n_layer = 2;
    save_model(path, "gpt", &mc, &two, "abcde");
    FAILS_NULL(qkv_gpt_load(path, &vocab), "config describes a model of 1864 parameter values but "
               "it holds 992");
    unlink(path);
    unlink(corpus);
}
END_TEST

/* The largest block asked of the allocation hook; blocks over 64 MB are refused. */
static size_t biggest_alloc;
static void *capped_malloc(size_t size)
{
    if (size > biggest_alloc)
        biggest_alloc = size;
    return size > ((size_t)64 << 20) ? NULL : malloc(size);
}

/* A file (with a valid checksum) whose config describes a 16 GB model but
 * which holds a tiny one is rejected before anything big is allocated. */
START_TEST(test_config_of_a_huge_model_is_rejected_before_allocating)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/qkv_err_huge_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    qkv_gpt_config small = tiny_gpt(5), huge = small;
    huge.n_embd = 4096;
    huge.n_head = 1;
    huge.n_layer = 20;
    save_model(path, "gpt", &small, &huge, "abcde");
    qkv_tokenizer vocab;
    qkv_set_allocator(capped_malloc, free);
    FAILS_NULL(qkv_gpt_load(path, &vocab), "describes a model of 4027658240 parameter values but "
               "it holds 992");
    qkv_set_allocator(NULL, NULL);
    ck_assert_msg(biggest_alloc < ((size_t)1 << 20), "asked for %zu bytes", biggest_alloc);
    unlink(path);
}
END_TEST

START_TEST(test_resume_errors)
{
    char corpus[64], ckpt[80], other[64];
    test_run *t = tiny_run(corpus);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", corpus);
    ck_assert_int_eq(qkv_training_save(t->run, ckpt), 0);
    test_run_free(t);
    FAILS_NULL(gpt_run_resume("/nonexistent/run.ckpt", corpus, 0), "cannot open",
               "'/nonexistent/run.ckpt'");
    FAILS_NULL(gpt_run_resume(ckpt, "/nonexistent/text.txt", 0),
               "cannot open '/nonexistent/text.txt'");
    const char *zz = "the quick brown fox: ZZZ\n";
    snprintf(other, sizeof other, "%s", temp_text(zz, strlen(zz), 10));
    FAILS_NULL(gpt_run_resume(ckpt, other, 0), "encode: character ':' at position 19",
               "not in the vocabulary");
    unlink(other);
    /* A text with the same characters resumes. */
    t = gpt_run_resume(ckpt, corpus, 0);
    ck_assert_qkv(t);
    test_run_free(t);
    unlink(ckpt);
    unlink(corpus);
}
END_TEST

/* ======================================================== dates, pictures */

START_TEST(test_dates_errors)
{
    char in[QKV_DATES_INPUT_MAX + 1], out[QKV_DATES_OUTPUT_LEN + 1];
    FAILS_INT(qkv_dates_format(in, sizeof in, QKV_DATES_N_FORMATS, QKV_DATES_LOWER, 1998, 3, 3),
              "format 13 is not in 0..12");
    FAILS_INT(qkv_dates_format(in, sizeof in, -1, QKV_DATES_LOWER, 1998, 3, 3), "format -1");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, (qkv_dates_case)7, 1998, 3, 3), "unknown case 7");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 1949, 12, 31),
              "1949-12-31 is not a date between");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 2001, 2, 29), "2001-2-29");
    FAILS_INT(qkv_dates_format(in, sizeof in, 0, QKV_DATES_UPPER, 2001, 13, 1), "2001-13-1");
    FAILS_INT(qkv_dates_format(in, 4, 0, QKV_DATES_UPPER, 2001, 1, 1), "4-byte buffer");
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    FAILS_INT(qkv_dates_sample(&rng, in, 5, out, sizeof out), "buffers of 5 and 11 bytes");
    FAILS_INT(qkv_dates_sample_split(&rng, true, in, sizeof in, out, 10), "10 bytes");
    ck_assert_ptr_null(qkv_dates_format_name(QKV_DATES_N_FORMATS));
    ck_assert_ptr_null(qkv_dates_format_name(-1));
}
END_TEST

START_TEST(test_svg_errors)
{
    qkv_real w[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    svg_heatmap_spec spec = {.panels = 1, .rows = 2, .cols = 3, .values = w};
    const char *path = "/tmp/qkv_err_never_written.svg";
    FAILS_INT(svg_heatmap("/nonexistent/dir/a.svg", &spec), "cannot write",
              "/nonexistent/dir/a.svg", "No such file or directory");
    FAILS_INT(svg_heatmap(path, NULL), "svg_heatmap", "spec is NULL");
    FAILS_INT(svg_heatmap(NULL, &spec), "svg_heatmap", "path is NULL");
    spec.rows = 0;
    FAILS_INT(svg_heatmap(path, &spec), "1 panels of 0x3");
    spec.rows = 2;
    spec.row_labels = "abc";
    FAILS_INT(svg_heatmap(path, &spec), "3 characters for 2");
    spec.row_labels = NULL;
    spec.values = NULL;
    FAILS_INT(svg_heatmap(path, &spec), path);
    double xs[2] = {0, 1}, ys[2] = {1, 2};
    svg_series s = {"train", 2, xs, ys};
    FAILS_INT(svg_lines(NULL, "t", "x", "y", 1, &s), "svg_lines", "path is NULL");
    FAILS_INT(svg_lines(path, "t", "x", "y", -1, &s), "-1 series");
    s.n = -3;
    FAILS_INT(svg_lines(path, "t", "x", "y", 1, &s), "series 0 has -3 points");
    s = (svg_series){"train", 2, NULL, ys};
    FAILS_INT(svg_lines(path, "t", "x", "y", 1, &s), "series 0");
    FAILS_INT(
        svg_lines("/nonexistent/dir/l.svg", "t", "x", "y", 1, &(svg_series){"train", 2, xs, ys}),
        "cannot write", "/nonexistent/dir/l.svg");
    ck_assert_int_eq(access(path, F_OK), -1); /* nothing was written for bad arguments */
}
END_TEST

/* ======================================================== the build */

/* The library must not be able to end its host process: it references none
 * of the functions that would (nor assert(), whose failure calls abort()),
 * and does not print to the terminal. `nm -u` lists what libqkv.a needs. */
START_TEST(test_library_references_no_exit_or_abort)
{
    static const char *forbidden[] = {
        "exit",   "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__assert_perror_fail",
        "__assert", "err", "errx", "verr", "verrx", "error", "error_at_line", "perror",
        "printf", "vprintf", "puts", "putchar", "stdout", "stderr",
    };
    const char *build = getenv("QKV_TEST_BUILD");
    char lib[512], cmd[600];
    snprintf(lib, sizeof lib, "%s/libqkv.a", build ? build : "build");
    ck_assert_msg(access(lib, R_OK) == 0, "%s not found (set QKV_TEST_BUILD)", lib);
    snprintf(cmd, sizeof cmd, "nm -u '%s'", lib);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char line[512], bad[2048] = "";
    int symbols = 0;
    while (fgets(line, sizeof line, f)) {
        char type[8], name[256];
        if (sscanf(line, " %7s %255s", type, name) != 2 || strcmp(type, "U") != 0)
            continue;
        symbols++;
        for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
            if (strcmp(name, forbidden[i]) == 0 && !strstr(bad, name)) {
                strncat(bad, " ", sizeof bad - strlen(bad) - 1);
                strncat(bad, name, sizeof bad - strlen(bad) - 1);
            }
    }
    ck_assert_int_eq(pclose(f), 0);
    ck_assert_msg(symbols > 20, "nm listed only %d undefined symbols: did it run?", symbols);
    ck_assert_msg(bad[0] == 0, "libqkv.a references:%s", bad);
}
END_TEST

static Suite *errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *core = tcase_create("library");
    tcase_add_checked_fixture(core, arena_setup, arena_teardown);
    tcase_set_timeout(core, 60);
    tcase_add_test(core, test_bad_shapes_and_sizes);
    tcase_add_test(core, test_backward_errors);
    tcase_add_test(core, test_elementwise_mismatch_names_both_shapes);
    tcase_add_test(core, test_matmul_mismatch_names_both_shapes);
    tcase_add_test(core, test_shape_ops_bad_arguments);
    tcase_add_test(core, test_out_of_range_ids_name_id_and_vocabulary);
    tcase_add_test(core, test_fused_ops_bad_arguments);
    tcase_add_test(core, test_params_misuse);
    tcase_add_test(core, test_module_inits_reject_bad_sizes);
    tcase_add_test(core, test_module_forwards_reject_bad_input);
    tcase_add_test(core, test_optimizer_misuse);
    tcase_add_test(core, test_tokenizer_and_sampler_errors);
    tcase_add_test(core, test_any_bytes_are_accepted);
    tcase_add_test(core, test_gpt_config_errors_name_the_field);
    tcase_add_test(core, test_gpt_rejects_bad_ids_and_lengths);
    tcase_add_test(core, test_sampling_and_generation_errors);
    tcase_add_test(core, test_training_bad_arguments);
    tcase_add_test(core, test_nonfinite_loss_stops_the_step_and_keeps_the_parameters);
    tcase_add_test(core, test_nonfinite_parameters_are_not_saved);
    tcase_add_test(core, test_loading_a_checkpoint_of_another_model);
    tcase_add_test(core, test_config_of_a_huge_model_is_rejected_before_allocating);
    tcase_add_test(core, test_resume_errors);
    tcase_add_test(core, test_dates_errors);
    tcase_add_test(core, test_svg_errors);
    tcase_add_test(core, test_library_references_no_exit_or_abort);
    suite_add_tcase(s, core);
    return s;
}

QKV_TEST_MAIN(errors_suite)
