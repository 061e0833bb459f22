/* Labelled and paired examples from memory (qkv_examples): every example once
 * per epoch with its own target and validity, a new order each epoch, the
 * same batches from the same seed, and a resumed stream (epoch and next
 * restored) going on exactly where the first left off. */
#include "qkv/data.h"
#include "testing.h"

#include <string.h>

enum { N = 10, IN = 3, OUT = 2, B = 3 };

/* Example k: inputs (k, 100+k, 200+k), valid (1, k%2, 0), targets (-k, 7). */
static int32_t inputs[N][IN], targets[N][OUT];
static uint8_t valid[N][IN];

static void make_examples(void)
{
    for (int k = 0; k < N; k++) {
        for (int t = 0; t < IN; t++)
            inputs[k][t] = 100 * t + k, valid[k][t] = t == 0 ? 1 : t == 1 ? (uint8_t)(k % 2) : 0;
        targets[k][0] = -k, targets[k][1] = 7;
    }
}

/* The next example ids of e, n of them (batches of B, as many as needed),
 * each checked against its example (validity all 1 when e has none). */
static void draw(qkv_examples *e, int n, int *ids)
{
    static const uint8_t all_valid[IN] = {1, 1, 1};
    int32_t x[B * IN], y[B * OUT];
    uint8_t v[B * IN];
    for (int got = 0; got < n; got += B) {
        ck_assert_int_eq(qkv_examples_next(e, x, v, y), 0);
        for (int b = 0; b < B && got + b < n; b++) {
            int k = x[b * IN];
            ck_assert(k >= 0 && k < N);
            ck_assert_int_eq(memcmp(x + b * IN, inputs[k], sizeof inputs[k]), 0);
            ck_assert_int_eq(memcmp(v + b * IN, e->valid ? valid[k] : all_valid, IN), 0);
            ck_assert_int_eq(memcmp(y + b * OUT, targets[k], sizeof targets[k]), 0);
            ids[got + b] = k;
        }
    }
}

START_TEST(test_each_example_once_per_epoch)
{
    make_examples();
    qkv_examples e;
    ck_assert_int_eq(qkv_examples_init(&e, &inputs[0][0], &valid[0][0], IN, &targets[0][0], OUT, N,
                                       B, 42),
                     0);
    int ids[3 * N + 2];
    draw(&e, 3 * N, ids); /* 10 batches of 3: three whole epochs */
    for (int ep = 0; ep < 3; ep++) {
        int seen[N] = {0};
        for (int i = 0; i < N; i++)
            seen[ids[ep * N + i]]++;
        for (int k = 0; k < N; k++)
            ck_assert_int_eq(seen[k], 1);
    }
    ck_assert(memcmp(ids, ids + N, N * sizeof *ids) != 0); /* a new order each epoch */
    ck_assert_int_eq(e.epoch, 2);
    ck_assert_int_eq(e.next, N);
    qkv_examples_free(&e);
}
END_TEST

START_TEST(test_same_seed_same_batches_and_resume)
{
    make_examples();
    qkv_examples a, b;
    ck_assert_int_eq(qkv_examples_init(&a, &inputs[0][0], NULL, IN, &targets[0][0], OUT, N, B, 9), 0);
    int first[12], rest[12], again[24];
    draw(&a, 12, first); /* 4 batches: into the second epoch */
    /* A resumed stream: a fresh init, then the two numbers a run saves. */
    ck_assert_int_eq(qkv_examples_init(&b, &inputs[0][0], NULL, IN, &targets[0][0], OUT, N, B, 9), 0);
    b.epoch = a.epoch, b.next = a.next;
    draw(&a, 12, rest);
    int resumed[12];
    draw(&b, 12, resumed);
    ck_assert_int_eq(memcmp(rest, resumed, sizeof rest), 0);
    /* From the start again, the same 24. */
    qkv_examples_free(&b);
    ck_assert_int_eq(qkv_examples_init(&b, &inputs[0][0], NULL, IN, &targets[0][0], OUT, N, B, 9), 0);
    draw(&b, 24, again);
    ck_assert_int_eq(memcmp(again, first, sizeof first), 0);
    ck_assert_int_eq(memcmp(again + 12, rest, sizeof rest), 0);
    qkv_examples_free(&a);
    qkv_examples_free(&b);
}
END_TEST

START_TEST(test_bad_setup_refused)
{
    qkv_examples e;
    int32_t ids[4] = {0};
    ck_assert_int_eq(qkv_examples_init(&e, ids, NULL, 2, ids, 1, 0, 1, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_examples_init: in_len 2, out_len 1, n 0"));
    memset(&e, 0, sizeof e);
    int32_t x[2], y[1];
    ck_assert_int_eq(qkv_examples_next(&e, x, NULL, y), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "not set up"));
}
END_TEST

static Suite *examples_suite(void)
{
    Suite *s = suite_create("examples");
    TCase *c = tcase_create("core");
    tcase_add_test(c, test_each_example_once_per_epoch);
    tcase_add_test(c, test_same_seed_same_batches_and_resume);
    tcase_add_test(c, test_bad_setup_refused);
    suite_add_tcase(s, c);
    return s;
}

QKV_TEST_MAIN(examples_suite)
