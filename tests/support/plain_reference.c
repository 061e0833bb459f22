/* Plain-loop references from the documented formulas (plain_reference.h).
 * Everything here is a loop over plain arrays in double; nothing calls an
 * op, so a mistake in an op cannot hide in its own reference. */
#include "plain_reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ref_gelu(double x)
{
    const double pi = 3.14159265358979323846;
    return 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
}

double ref_relu2(double x) { return x > 0 ? x * x : 0; }

double ref_silu(double x) { return x / (1 + exp(-x)); }

double ref_activation(qkv_activation act, double x)
{
    switch (act) {
    case QKV_ACTIVATION_GELU:
        break;
    case QKV_ACTIVATION_RELU2:
        return ref_relu2(x);
    case QKV_ACTIVATION_SILU:
        return ref_silu(x);
    }
    return ref_gelu(x);
}

void ref_layernorm_row(double *y, const double *x, const qkv_real *w, const qkv_real *b, int C,
                       double eps)
{
    double mean = 0, var = 0;
    for (int j = 0; j < C; j++)
        mean += x[j];
    mean /= C;
    for (int j = 0; j < C; j++)
        var += (x[j] - mean) * (x[j] - mean);
    var /= C;
    for (int j = 0; j < C; j++)
        y[j] = (x[j] - mean) / sqrt(var + eps) * (w ? w[j] : 1) + (b ? b[j] : 0);
}

void ref_rmsnorm_row(double *y, const double *x, const qkv_real *w, int C, double eps)
{
    double ms = 0;
    for (int j = 0; j < C; j++)
        ms += x[j] * x[j];
    ms /= C;
    for (int j = 0; j < C; j++)
        y[j] = x[j] / sqrt(ms + eps) * (w ? w[j] : 1);
}

void ref_linear(double *y, const double *x, const qkv_real *W, const qkv_real *b, int rows, int in,
                int out)
{
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double s = b ? b[o] : 0;
            for (int i = 0; i < in; i++)
                s += x[(size_t)r * in + i] * W[(size_t)o * in + i];
            y[(size_t)r * out + o] = s;
        }
}

void ref_rope_head(double *x, int d, int pos)
{
    for (int i = 0; i < d / 2; i++) {
        double angle = pos * pow(10000.0, -2.0 * i / d);
        double x0 = x[2 * i], x1 = x[2 * i + 1];
        x[2 * i] = x0 * cos(angle) - x1 * sin(angle);
        x[2 * i + 1] = x0 * sin(angle) + x1 * cos(angle);
    }
}

void ref_attention_head(double *o, int po, double *w, const double *q, int pq, const double *k,
                        const double *v, int pk, int tq, int tk, int d, bool causal,
                        const uint8_t *valid)
{
    for (int i = 0; i < tq; i++) {
        double *wi = w + (size_t)i * tk, max = -INFINITY, sum = 0;
        for (int j = 0; j < tk; j++) {
            bool seen = !(causal && j > i + tk - tq) && (!valid || valid[j]);
            double s = 0;
            for (int c = 0; c < d; c++)
                s += q[(size_t)i * pq + c] * k[(size_t)j * pk + c];
            wi[j] = seen ? s / sqrt(d) : -INFINITY;
            max = fmax(max, wi[j]);
        }
        for (int j = 0; j < tk; j++)
            sum += wi[j] = max == -INFINITY ? 0 : exp(wi[j] - max);
        for (int j = 0; j < tk; j++)
            wi[j] = sum > 0 ? wi[j] / sum : 0;
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int j = 0; j < tk; j++)
                s += wi[j] * v[(size_t)j * pk + c];
            o[(size_t)i * po + c] = s;
        }
    }
}

const qkv_real *ref_param(const qkv_params *p, const char *fmt, ...)
{
    char name[QKV_PARAM_NAME_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    qkv_param *found = qkv_params_find(p, name);
    return found ? found->t->data : NULL;
}

static double *alloc_doubles(size_t n)
{
    double *x = calloc(n, sizeof *x);
    if (!x) {
        fprintf(stderr, "plain_reference: out of memory\n");
        abort();
    }
    return x;
}

void ref_self_attn(double *y, double *w, const qkv_params *p, const char *prefix,
                   const double *x, int B, int T, int C, int H, bool causal, bool rope,
                   bool qk_norm, const uint8_t *key_valid)
{
    int D = C / H;
    double *qkv = alloc_doubles((size_t)B * T * 3 * C), *att = alloc_doubles((size_t)B * T * C);
    double *wh = alloc_doubles((size_t)T * T), *norm = alloc_doubles((size_t)D);
    ref_linear(qkv, x, ref_param(p, "%s.c_attn.weight", prefix),
               ref_param(p, "%s.c_attn.bias", prefix), B * T, C, 3 * C);
    const qkv_real *gq = ref_param(p, "%s.q_norm.weight", prefix);
    const qkv_real *gk = ref_param(p, "%s.k_norm.weight", prefix);
    /* Row (b, t) holds q in [0, C), k in [C, 2C), v in [2C, 3C); head h
     * owns [h·D, (h+1)·D) of each. QK-norm, then RoPE, per head. */
    for (int r = 0; r < B * T; r++)
        for (int h = 0; h < H; h++)
            for (int part = 0; part < 2; part++) {
                double *head = qkv + (size_t)r * 3 * C + part * C + h * D;
                if (qk_norm) {
                    ref_rmsnorm_row(norm, head, part == 0 ? gq : gk, D, 1e-5);
                    memcpy(head, norm, (size_t)D * sizeof *head);
                }
                if (rope)
                    ref_rope_head(head, D, r % T);
            }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *base = qkv + (size_t)b * T * 3 * C + h * D;
            ref_attention_head(att + (size_t)b * T * C + h * D, C, wh, base, 3 * C, base + C,
                               base + 2 * C, 3 * C, T, T, D, causal,
                               key_valid ? key_valid + (size_t)b * T : NULL);
            if (w)
                memcpy(w + ((size_t)b * H + h) * T * T, wh, (size_t)T * T * sizeof *w);
        }
    ref_linear(y, att, ref_param(p, "%s.c_proj.weight", prefix),
               ref_param(p, "%s.c_proj.bias", prefix), B * T, C, C);
    free(qkv);
    free(att);
    free(wh);
    free(norm);
}

/* Each row of x (rows, C) through the norm "<name>" of m: RMSNorm or LayerNorm as m->cfg says. */
static void ref_norm(double *y, const double *x, const qkv_gpt *m, const char *name, int rows)
{
    int C = m->cfg.n_embd;
    const qkv_real *w = ref_param(m->params, "%s.weight", name);
    const qkv_real *b = ref_param(m->params, "%s.bias", name);
    for (int r = 0; r < rows; r++) {
        if (m->cfg.opts.norm == QKV_NORM_RMSNORM)
            ref_rmsnorm_row(y + (size_t)r * C, x + (size_t)r * C, w, C, 1e-5);
        else
            ref_layernorm_row(y + (size_t)r * C, x + (size_t)r * C, w, b, C, 1e-5);
    }
}

void ref_gpt_logits(double *logits, const qkv_gpt *m, const int32_t *ids, int B, int T)
{
    const qkv_gpt_config *c = &m->cfg;
    int C = c->n_embd, V = c->vocab_size, rows = B * T;
    const qkv_params *p = m->params;
    double *x = alloc_doubles((size_t)rows * C), *h = alloc_doubles((size_t)rows * C);
    double *y = alloc_doubles((size_t)rows * C), *f = alloc_doubles((size_t)rows * 4 * C);
    /* Token rows, plus position rows unless the positions enter as rotations. */
    const qkv_real *wte = ref_param(p, "wte.weight"), *wpe = ref_param(p, "wpe.weight");
    bool rope = c->opts.positions == QKV_POSITIONS_ROPE;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < C; j++)
            x[(size_t)r * C + j] = wte[(size_t)ids[r] * C + j] +
                                   (rope ? 0 : wpe[(size_t)(r % T) * C + j]);
    char name[QKV_PARAM_NAME_MAX];
    for (int l = 0; l < c->n_layer; l++) {
        /* x + attn(ln_1(x)), then x + mlp(ln_2(x)). */
        snprintf(name, sizeof name, "h.%d.ln_1", l);
        ref_norm(h, x, m, name, rows);
        snprintf(name, sizeof name, "h.%d.attn", l);
        ref_self_attn(y, NULL, p, name, h, B, T, C, c->n_head, true, rope, c->opts.qk_norm, NULL);
        for (size_t i = 0; i < (size_t)rows * C; i++)
            x[i] += y[i];
        snprintf(name, sizeof name, "h.%d.ln_2", l);
        ref_norm(h, x, m, name, rows);
        ref_linear(f, h, ref_param(p, "h.%d.mlp.c_fc.weight", l),
                   ref_param(p, "h.%d.mlp.c_fc.bias", l), rows, C, 4 * C);
        for (size_t i = 0; i < (size_t)rows * 4 * C; i++)
            f[i] = ref_activation((qkv_activation)c->opts.activation, f[i]);
        ref_linear(y, f, ref_param(p, "h.%d.mlp.c_proj.weight", l),
                   ref_param(p, "h.%d.mlp.c_proj.bias", l), rows, 4 * C, C);
        for (size_t i = 0; i < (size_t)rows * C; i++)
            x[i] += y[i];
    }
    ref_norm(h, x, m, "ln_f", rows);
    /* Tied: the head is the token table itself; untied: lm_head, no bias. */
    ref_linear(logits, h, c->opts.untied ? ref_param(p, "lm_head.weight") : wte, NULL, rows, C, V);
    free(x);
    free(h);
    free(y);
    free(f);
}

double ref_softplus(double x) { return log(1 + exp(x)); }

void ref_log_softmax_row(double *y, const double *x, int C)
{
    double s = 0;
    for (int j = 0; j < C; j++)
        s += exp(x[j]);
    for (int j = 0; j < C; j++)
        y[j] = log(exp(x[j]) / s);
}

double ref_variance(const double *x, size_t n, size_t stride, int correction)
{
    double mean = 0, ss = 0;
    for (size_t k = 0; k < n; k++)
        mean += x[k * stride];
    mean /= (double)n;
    for (size_t k = 0; k < n; k++)
        ss += (x[k * stride] - mean) * (x[k * stride] - mean);
    return ss / ((double)n - correction);
}
