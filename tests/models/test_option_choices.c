/* The model options as choices (qkv/options.h): a choice's field is the
 * byte the 1.x bool was (same size, same places, true is value 1), a
 * checkpoint's flag word holds each option's value in bit planes whose
 * plane 0 is the word of bools every earlier checkpoint holds, and every
 * config check refuses a value its option does not have. */
#include <stddef.h>

#include "error_text.h"
#include "testing.h"

/* How many values option i has: 2 for a flag. */
static int n_values(int i)
{
    static const int n[] = {
#define FLAG_N(...) 2,
#define ONE(...) +1
#define CHOICE_N(field, alias, values, help) 0 values(ONE),
        QKV_MODEL_OPTIONS(FLAG_N, CHOICE_N)
#undef FLAG_N
#undef ONE
#undef CHOICE_N
    };
    return n[i];
}

/* A config whose head size (32) suits every option; its flag word packed. */
static qkv_gpt_config config_with(qkv_model_options o)
{
    return (qkv_gpt_config){.vocab_size = 65, .block_size = 64, .n_layer = 2, .n_head = 4,
                            .n_embd = 128, .opts = o};
}

static uint32_t word_of(const qkv_gpt_config *c)
{
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(c, blob);
    return (uint32_t)blob[28] | (uint32_t)blob[29] << 8 | (uint32_t)blob[30] << 16 |
           (uint32_t)blob[31] << 24;
}

/* Unpack a config blob holding word as its flag word: 0 or -1. */
static int unpack_word(uint32_t word, qkv_gpt_config *out)
{
    qkv_gpt_config c = config_with((qkv_model_options){0});
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(&c, blob);
    for (int k = 0; k < 4; k++)
        blob[28 + k] = (uint8_t)(word >> 8 * k);
    return qkv_gpt_config_unpack(out, blob, sizeof blob);
}

/* The layout callers were built against: six bytes, one per option in the
 * list's order, and the 1.x names writing the choices' value 1. */
START_TEST(test_choices_keep_the_bools_layout)
{
    ck_assert_uint_eq(sizeof(qkv_model_options), 6);
    ck_assert_uint_eq(offsetof(qkv_model_options, no_bias), 0);
    ck_assert_uint_eq(offsetof(qkv_model_options, positions), 1);
    ck_assert_uint_eq(offsetof(qkv_model_options, rope), 1);
    ck_assert_uint_eq(offsetof(qkv_model_options, norm), 2);
    ck_assert_uint_eq(offsetof(qkv_model_options, rmsnorm), 2);
    ck_assert_uint_eq(offsetof(qkv_model_options, activation), 3);
    ck_assert_uint_eq(offsetof(qkv_model_options, relu2), 3);
    ck_assert_uint_eq(offsetof(qkv_model_options, qk_norm), 4);
    ck_assert_uint_eq(offsetof(qkv_model_options, untied), 5);
    qkv_model_options old = {.rope = true, .rmsnorm = true, .relu2 = true};
    qkv_model_options now = {.positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM,
                             .activation = QKV_ACTIVATION_RELU2};
    ck_assert(memcmp(&old, &now, sizeof old) == 0);
}
END_TEST

/* Every word of bools (6 bits, 64 words) reads as the options it meant, bit
 * i the value of row i, and packs back to itself: every checkpoint written
 * before the choices loads, and a model 1.x could make writes 1.x's word. */
START_TEST(test_every_word_of_bools_means_what_it_meant)
{
    for (uint32_t word = 0; word < 1u << QKV_N_MODEL_OPTIONS; word++) {
        qkv_gpt_config c;
        ck_assert_msg(unpack_word(word, &c) == 0, "word 0x%x: %s", word, qkv_last_error());
        const uint8_t *v = (const uint8_t *)&c.opts; /* row i is byte i (the test above) */
        for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
            ck_assert_msg(v[i] == (word >> i & 1), "word 0x%x: option %d is %d", word, i, v[i]);
        ck_assert_uint_eq(word_of(&c), word);
    }
}
END_TEST

/* Each value of each option, the others 0: bit k of the value of row i is
 * bit 8·k + i, and it reads back. */
START_TEST(test_each_value_in_its_bit_planes)
{
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        for (int value = 0; value < n_values(i); value++) {
            qkv_model_options o = {0};
            ((uint8_t *)&o)[i] = (uint8_t)value; /* row i is byte i (the test above) */
            qkv_gpt_config c = config_with(o), d;
            uint32_t want = 0;
            for (int k = 0; k < 4; k++)
                want |= (uint32_t)(value >> k & 1) << (8 * k + i);
            ck_assert_uint_eq(word_of(&c), want);
            ck_assert_int_eq(unpack_word(want, &d), 0);
            ck_assert(memcmp(&d.opts, &o, sizeof o) == 0);
        }
    /* SiLU, value 2 of row 3: bit 8·1 + 3, no bit of a word of bools (a qkv
     * from before the choices refuses the checkpoint instead of misreading it). */
    qkv_gpt_config silu = config_with((qkv_model_options){.activation = QKV_ACTIVATION_SILU});
    ck_assert_uint_eq(word_of(&silu), 0x800);
}
END_TEST

/* A word holding a value its option lacks, or a bit of no option, is
 * refused, named (a newer qkv's checkpoint, or a corrupt one). */
START_TEST(test_a_word_with_values_of_no_option_is_refused)
{
    qkv_gpt_config c;
    ck_assert_int_eq(unpack_word(1u << 8, &c), -1); /* no_bias 2 */
    ck_assert_error("gpt config", "option no_bias is 2, not one of its 2 values");
    uint32_t past = (uint32_t)QKV_N_ACTIVATIONS, word = 0;
    for (int k = 0; k < 4; k++)
        word |= (past >> k & 1) << (8 * k + 3);
    ck_assert_int_eq(unpack_word(word, &c), -1);
    ck_assert_error("option activation is", "values");
    ck_assert_int_eq(unpack_word(1u << QKV_N_MODEL_OPTIONS, &c), -1); /* row 6: none */
    ck_assert_error("flag word is 0x40", "bits 0x40 hold no option");
}
END_TEST

/* Every config check refuses a choice's value past its last: the models',
 * and the modules' (a block's, an MLP's: its activation picks the op). */
START_TEST(test_config_checks_refuse_a_value_past_the_last)
{
    qkv_gpt_config c = config_with((qkv_model_options){.activation = QKV_N_ACTIVATIONS});
    ck_assert_ptr_null(qkv_gpt_new(&c, 1));
    ck_assert_error("qkv_gpt_new", "option activation is");
    c.opts = (qkv_model_options){.norm = QKV_N_NORMS};
    ck_assert_int_eq(qkv_gpt_config_check(&c), -1);
    ck_assert_error("option norm is 2, not one of its 2 values");
    qkv_seq2seq_config s = {.max_src = 8, .max_tgt = 8, .n_layer = 1, .n_head = 2, .n_embd = 16,
                            .opts = {.positions = QKV_N_POSITIONS}};
    ck_assert_int_eq(qkv_seq2seq_config_check(&s), -1);
    ck_assert_error("seq2seq config", "option positions is 2");
    qkv_params *p = qkv_params_new();
    qkv_block_config b = {.n_embd = 8, .n_head = 2, .opts.activation = QKV_N_ACTIVATIONS};
    qkv_mlp mlp;
    ck_assert_int_eq(qkv_mlp_init(&mlp, p, "mlp", &b), -1);
    ck_assert_error("qkv_mlp_init 'mlp'", "option activation is");
    qkv_block block;
    ck_assert_int_eq(qkv_block_init(&block, p, "h.0", &b, true), -1);
    ck_assert_error("'h.0", "option activation is");
    /* A value set after the checks: the forward refuses it too (it picks the op). */
    b.opts.activation = QKV_ACTIVATION_SILU;
    ck_assert_int_eq(qkv_mlp_init(&mlp, p, "mlp", &b), 0);
    qkv_test_env f = qkv_test_env_new(3);
    ck_assert_int_eq(qkv_params_alloc(p, &f.rng), 0);
    mlp.opts.activation = QKV_N_ACTIVATIONS;
    qkv_ctx ctx = {.arena = f.a};
    ck_assert_ptr_null(qkv_mlp_forward(&mlp, &ctx, qkv_randn(f.a, QKV_SHAPE(2, 8), 1, &f.rng)));
    ck_assert_error("qkv_mlp_forward: opts.activation is", "not one of its");
    qkv_arena_free(&f.a);
    qkv_params_free(&p);
}
END_TEST

static Suite *option_choices_suite(void)
{
    Suite *s = suite_create("option_choices");
    TCase *tc = tcase_create("choices");
    tcase_add_test(tc, test_choices_keep_the_bools_layout);
    tcase_add_test(tc, test_every_word_of_bools_means_what_it_meant);
    tcase_add_test(tc, test_each_value_in_its_bit_planes);
    tcase_add_test(tc, test_a_word_with_values_of_no_option_is_refused);
    tcase_add_test(tc, test_config_checks_refuse_a_value_past_the_last);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(option_choices_suite)
