/* The PyTorch-made GPT-2 (see torch_ref.h). */
#include "torch_ref.h"
#include "files.h"
#include "nn_fixture.h"
#include "testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

bool qkv_test_torch_ref(char *dir, size_t len, int vocab)
{
    qkv_test_make_tmpdir(dir, len, "qkv_gpt2");
    const char *python = getenv("QKV_TEST_PYTHON");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s tests/models/gpt2_ref.py %s --vocab %d",
             python ? python : "/usr/bin/python3", dir, vocab);
    int status = system(cmd);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    /* 77: the script found no torch; 126, 127: no python3 to run it. */
    if (rc == 77 || rc == 126 || rc == 127) {
        printf("SKIPPED: the PyTorch reference of GPT-2's weights needs /usr/bin/python3 with "
               "torch\n");
        qkv_test_remove_tmpdir(dir);
        return false;
    }
    ck_assert_msg(rc == 0, "%s: exit status %d", cmd, rc);
    return true;
}

void qkv_test_ref_values(const char *dir, const char *file, const char *name, qkv_real *out,
                         size_t n)
{
    qkv_safetensors *st = qkv_safetensors_open(qkv_test_path(dir, file));
    ck_assert_qkv(st);
    const qkv_st_tensor *t = qkv_safetensors_find(st, name);
    ck_assert_qkv(t);
    ck_assert_uint_eq(t->count, n);
    ck_assert_int_eq(qkv_safetensors_read(st, t, out, n), 0);
    qkv_safetensors_free(st);
}

qkv_gpt *qkv_test_ref_model(const char *dir, const char *file)
{
    qkv_gpt *m = qkv_gpt_load_safetensors(qkv_test_path(dir, file), 0);
    ck_assert_qkv(m);
    return m;
}

void qkv_test_ref_batch(const char *dir, int32_t *idx, int32_t *targets)
{
    enum { N = QKV_REF_B * QKV_REF_T };
    qkv_real v[N];
    qkv_test_ref_values(dir, "ref.safetensors", "idx", v, N);
    for (int i = 0; i < N; i++)
        idx[i] = (int32_t)v[i];
    qkv_test_ref_values(dir, "ref.safetensors", "targets", v, N);
    for (int i = 0; i < N; i++)
        targets[i] = (int32_t)v[i];
}

void qkv_test_ref_steps(const char *dir, qkv_gpt *m, qkv_real losses[QKV_REF_STEPS + 1])
{
    int32_t idx[QKV_REF_B * QKV_REF_T], targets[QKV_REF_B * QKV_REF_T];
    qkv_test_ref_batch(dir, idx, targets);
    qkv_optim *opt = qkv_optim_new(m->params, &(qkv_optim_config){.weight_decay = 0.1});
    ck_assert_qkv(opt);
    qkv_test_env env = qkv_test_env_new(1);
    qkv_ctx ctx = {.arena = env.a, .train = true, .rng = &env.rng};
    for (int step = 0; step <= QKV_REF_STEPS; step++) {
        qkv_arena_reset(env.a);
        qkv_params_zero_grad(m->params);
        qkv_tensor *loss = qkv_gpt_loss(m, &ctx, idx, targets, QKV_REF_B, QKV_REF_T);
        ck_assert_qkv(loss);
        losses[step] = loss->data[0];
        if (step < QKV_REF_STEPS) {
            ck_assert_int_eq(qkv_backward(env.a, loss), 0);
            ck_assert_int_eq(qkv_optim_step(opt, m->params, 1e-3), 0);
        }
    }
    qkv_arena_free(&env.a);
    qkv_optim_free(opt);
}

double qkv_test_ref_logits_error(const char *dir, const qkv_gpt *m)
{
    enum { N = QKV_REF_B * QKV_REF_T };
    int32_t idx[N], targets[N];
    qkv_test_ref_batch(dir, idx, targets);
    size_t n = (size_t)N * (size_t)m->cfg.vocab_size;
    qkv_real *want = malloc(n * sizeof *want);
    ck_assert_ptr_nonnull(want);
    qkv_test_ref_values(dir, "ref.safetensors", "logits", want, n);
    qkv_test_env env = qkv_test_env_new(1);
    qkv_ctx ctx = {.arena = env.a, .rng = &env.rng};
    qkv_tensor *logits = qkv_gpt_logits(m, &ctx, idx, QKV_REF_B, QKV_REF_T, NULL);
    ck_assert_qkv(logits);
    double worst = max_abs_diff(logits->data, want, n);
    qkv_arena_free(&env.a);
    free(want);
    return worst;
}

double qkv_test_ref_loss_error(const char *dir, qkv_gpt *m)
{
    qkv_real got[QKV_REF_STEPS + 1], want[QKV_REF_STEPS + 1];
    qkv_test_ref_steps(dir, m, got);
    qkv_test_ref_values(dir, "ref.safetensors", "losses", want, QKV_REF_STEPS + 1);
    /* The shared helper, not a loop of its own: aarch64's gcc 12 stops with an
     * internal error vectorising this max over a fixed count of 4. */
    return max_abs_diff(got, want, QKV_REF_STEPS + 1);
}

/* ---- the suites' shared case: the fixture, the logits and the losses ---- */

static char case_dir[128];
static bool case_made;

static void make_case_ref(void) { case_made = qkv_test_torch_ref(case_dir, sizeof case_dir, 50); }

static void remove_case_ref(void)
{
    if (case_made)
        qkv_test_remove_tmpdir(case_dir);
}

const char *qkv_test_ref_dir(void) { return case_made ? case_dir : NULL; }

/* Which build this is, for the figures printed. */
#define BUILD_NAME (sizeof(qkv_real) == sizeof(double) ? "double" : "float")

START_TEST(logits_as_pytorch)
{
    if (!case_made)
        return;
    qkv_gpt *m = qkv_test_ref_model(case_dir, "model.safetensors");
    double err = qkv_test_ref_logits_error(case_dir, m);
    printf("%s build: logits within %.3g of PyTorch's\n", BUILD_NAME, err);
    ck_assert_msg(err <= 1e-5, "logits differ from PyTorch's by %g", err);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(losses_of_three_adamw_steps_as_pytorch)
{
    if (!case_made)
        return;
    qkv_gpt *m = qkv_test_ref_model(case_dir, "model.safetensors");
    double err = qkv_test_ref_loss_error(case_dir, m);
    printf("%s build: losses of 3 AdamW steps within %.3g of PyTorch's\n", BUILD_NAME, err);
    ck_assert_msg(err <= 1e-5, "losses differ from PyTorch's by %g", err);
    qkv_gpt_free(m);
}
END_TEST

TCase *qkv_test_torch_case(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_unchecked_fixture(tc, make_case_ref, remove_case_ref);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, logits_as_pytorch);
    tcase_add_test(tc, losses_of_three_adamw_steps_as_pytorch);
    return tc;
}
