/* Bad input never takes the caller's process down, part 1: tensors, ops,
 * parameters, modules, optimizers and the tokenizer, given bad arguments,
 * return NULL (or -1, or NAN) and leave a message that says what is wrong,
 * naming the shapes, ids and sizes involved (test_errors_runs.c: models,
 * training, checkpoints, pictures, and the library's own references). */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "errors_suite.h"
#include "testing.h"
/* Under AddressSanitizer a huge malloc must return NULL like the real one
 * (qkv reports it), not stop the test. Unused without ASan; visible, since
 * the build hides symbols by default and ASan looks this one up. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* The test's arena (errors_suite.h). */
#define A errors_arena

/* A tensor of the given shape filled with 0.1, 0.2, ... */
static qkv_tensor *filled(int ndim, const int *shape)
{
    qkv_tensor *t = qkv_tensor_new(A, ndim, shape);
    ck_assert_qkv(t);
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (qkv_real)(0.1 * (double)(i % 7 + 1));
    return t;
}

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
    FAILS_INT(qkv_optim_step(o, other, 1e-3), "o was made for 1 parameters (16 values)",
              "p has 1 (48)");
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
    const char *path = qkv_test_temp_file(ERRORS_TEXT, strlen(ERRORS_TEXT), 2);
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
    const char *path = qkv_test_temp_file((const char *)all, sizeof all, 3);
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

static Suite *errors_ops_suite(void)
{
    Suite *s = suite_create("errors_ops");
    TCase *tc = errors_tcase("library");
    tcase_add_test(tc, test_bad_shapes_and_sizes);
    tcase_add_test(tc, test_backward_errors);
    tcase_add_test(tc, test_elementwise_mismatch_names_both_shapes);
    tcase_add_test(tc, test_matmul_mismatch_names_both_shapes);
    tcase_add_test(tc, test_shape_ops_bad_arguments);
    tcase_add_test(tc, test_out_of_range_ids_name_id_and_vocabulary);
    tcase_add_test(tc, test_fused_ops_bad_arguments);
    tcase_add_test(tc, test_params_misuse);
    tcase_add_test(tc, test_module_inits_reject_bad_sizes);
    tcase_add_test(tc, test_module_forwards_reject_bad_input);
    tcase_add_test(tc, test_optimizer_misuse);
    tcase_add_test(tc, test_tokenizer_and_sampler_errors);
    tcase_add_test(tc, test_any_bytes_are_accepted);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(errors_ops_suite)
