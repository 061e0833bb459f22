/* The PyTorch-made GPT-2 of tests/models/gpt2_ref.py, for the suites that load it. */
#ifndef QKV_TEST_TORCH_REF_H
#define QKV_TEST_TORCH_REF_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include "qkv/qkv.h"

/* The reference's sizes: gpt2_ref.py's batch, and the vocabulary asked of it. */
enum { QKV_REF_B = 2, QKV_REF_T = 8, QKV_REF_STEPS = 3 };

/* Run tests/models/gpt2_ref.py (under $QKV_TEST_PYTHON, default /usr/bin/python3) into a new temporary
 * folder dir (len bytes) for a model of vocab tokens. True when it wrote its
 * files; false, having printed "SKIPPED" and removed dir, when python3 or
 * torch is missing. Any other failure fails the test. */
bool qkv_test_torch_ref(char *dir, size_t len, int vocab);

/* The n values of tensor name of dir's file (a .safetensors) into out. */
void qkv_test_ref_values(const char *dir, const char *file, const char *name, qkv_real *out,
                         size_t n);

/* The model dir/file loaded by qkv_gpt_load_safetensors (the test fails if it cannot be). */
qkv_gpt *qkv_test_ref_model(const char *dir, const char *file);

/* The reference's input ids and targets, QKV_REF_B x QKV_REF_T each. */
void qkv_test_ref_batch(const char *dir, int32_t *idx, int32_t *targets);

/* The largest difference between m's logits of the reference batch and PyTorch's. */
double qkv_test_ref_logits_error(const char *dir, const qkv_gpt *m);

/* The largest difference between the losses of qkv_test_ref_steps on m and
 * PyTorch's (m is trained as PyTorch's model was). */
double qkv_test_ref_loss_error(const char *dir, qkv_gpt *m);

/* gpt2_ref.py's training on m: QKV_REF_STEPS AdamW steps with qkv's defaults
 * (betas 0.9, 0.99, eps 1e-8, decay 0.1 on matrices) at lr 1e-3 on the
 * reference batch, the loss before each and after the last into losses. */
void qkv_test_ref_steps(const char *dir, qkv_gpt *m, qkv_real losses[QKV_REF_STEPS + 1]);

/* A case of the 50-token reference model, made once (its folder is
 * qkv_test_ref_dir()): its logits and the losses of its 3 AdamW steps within
 * 1e-5 of PyTorch's, the figures printed with the build's precision. A suite
 * adds its own tests to it. */
TCase *qkv_test_torch_case(const char *name);

/* The case's reference folder, or NULL when it was SKIPPED. */
const char *qkv_test_ref_dir(void);

#endif
