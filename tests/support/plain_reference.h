/* Plain-loop references written from the documented formulas (qkv/ops.h,
 * qkv/nn.h, qkv/gpt.h), in double, with no qkv op inside: what the
 * definition tests (tests/test_definitions*.c) compare the library with.
 * Matrices are row-major; a "pitch" is the distance between two rows. */
#ifndef QKV_PLAIN_REFERENCE_H
#define QKV_PLAIN_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qkv/gpt.h"
#include "qkv/nn.h"

/* 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
double ref_gelu(double x);

/* max(x, 0)². */
double ref_relu2(double x);

/* x·σ(x) = x / (1 + e^−x). */
double ref_silu(double x);

/* The MLP's activation act (qkv/options.h) of x: one of the above. */
double ref_activation(qkv_activation act, double x);

/* One row of C values: (x − mean)/sqrt(var + eps)·w + b, var the mean square
 * deviation; w, b may be NULL (1 and 0). */
void ref_layernorm_row(double *y, const double *x, const qkv_real *w, const qkv_real *b, int C,
                       double eps);

/* One row: x / sqrt(mean(x²) + eps)·w, w NULL: 1. */
void ref_rmsnorm_row(double *y, const double *x, const qkv_real *w, int C, double eps);

/* y (rows, out) = x (rows, in)·Wᵀ + b, W (out, in), b (out) or NULL. */
void ref_linear(double *y, const double *x, const qkv_real *W, const qkv_real *b, int rows, int in,
                int out);

/* One head's vector of d values at position pos, turned in place: each pair
 * (2i, 2i+1) by the angle pos·10000^(−2i/d). */
void ref_rope_head(double *x, int d, int pos);

/* One head: o (tq rows, pitch po) = softmax(q·kᵀ/√d + mask)·v for q (tq rows,
 * pitch pq), k, v (tk rows, pitch pk); causal hides keys j > i + tk − tq,
 * valid (tk) 0 = padding, or NULL. w (tq, tk) receives the weights (a row
 * with no visible key: zeros). */
void ref_attention_head(double *o, int po, double *w, const double *q, int pq, const double *k,
                        const double *v, int pk, int tq, int tk, int d, bool causal,
                        const uint8_t *valid);

/* The parameter called name (printf-style) in p, its values; NULL when absent. */
const qkv_real *ref_param(const qkv_params *p, const char *fmt, ...);

/* Multi-head self-attention of x (B, T, C), as qkv/nn.h documents it, from
 * the parameters "<prefix>.c_attn.*", "<prefix>.c_proj.*" (and with qk_norm
 * "<prefix>.q_norm.weight", "<prefix>.k_norm.weight") in p: y (B, T, C), and
 * the weights w (B, H, T, T) when not NULL. */
void ref_self_attn(double *y, double *w, const qkv_params *p, const char *prefix,
                   const double *x, int B, int T, int C, int H, bool causal, bool rope,
                   bool qk_norm, const uint8_t *key_valid);

/* nanoGPT's logits (B, T, V) for ids (B, T), every option of m->cfg
 * followed, from m's parameters read by name (m->params). */
void ref_gpt_logits(double *logits, const qkv_gpt *m, const int32_t *ids, int B, int T);

/* ln(1 + e^x), as written (for |x| where e^x is finite). */
double ref_softplus(double x);

/* One row of C values: ln(e^x_j / Σ_k e^x_k), as written (no shift: for x where e^x is finite). */
void ref_log_softmax_row(double *y, const double *x, int C);

/* Σ_k (x[k·stride] - mean)² / (n - correction) over n values. */
double ref_variance(const double *x, size_t n, size_t stride, int correction);

#endif
