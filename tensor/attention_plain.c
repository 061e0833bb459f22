/* Attention, read first: one head of
 *
 *     O = softmax(Q·Kᵀ/√d + mask) · V
 *
 * and its backward, as plain loops over plain row-major matrices, one step
 * of the formula at a time. Q has a row per query, K and V a row per key:
 * the keys are what the queries are matched against, the values what the
 * output is made of. The fast core, qkv_attention in op_attention.c, takes
 * the same steps on many heads at once with gemms, skips the masked
 * triangle and shares the work among threads; the tests check it against
 * these loops. Sums are kept in double, so in the float build these loops
 * are as exact as their results can be stored. */
#include <math.h>

#include "attention_plain.h"

/* Row i of a matrix with n columns. */
#define ROW(m, i, n) ((m) + (size_t)(i) * (n))

static double dot(const qkv_real *x, const qkv_real *y, int n)
{
    double s = 0;
    for (int c = 0; c < n; c++)
        s += (double)x[c] * y[c];
    return s;
}

/* Whether query i may look at key j: not a future key under the causal mask
 * (with tk > tq the first tk − tq keys are an earlier context every query
 * sees), and not a padding key. */
static bool visible(int i, int j, int tq, int tk, bool causal, const uint8_t *key_valid)
{
    if (causal && j > i + tk - tq)
        return false;
    return !key_valid || key_valid[j];
}

void qkv__attention_plain(qkv_real *o, qkv_real *p, const qkv_real *q, const qkv_real *k,
                          const qkv_real *v, int tq, int tk, int d, bool causal,
                          const uint8_t *key_valid)
{
    /* Why 1/√d: a dot product of d terms of unit variance has variance d.
     * Unscaled, the scores grow with d and the softmax tends to one-hot
     * weights, where its gradient vanishes; divided by √d they stay O(1). */
    double scale = 1 / sqrt((double)d);

    for (int i = 0; i < tq; i++) {
        qkv_real *pi = ROW(p, i, tk);

        /* 1. Scores: how well query i matches each key, S[i,j] = q_i·k_j/√d.
         * 2. The mask, before the softmax: a hidden key's score is −∞, so
         *    its weight exp(−∞) is exactly 0 and the visible weights alone
         *    sum to 1. (Zeroing weights after the softmax would leave rows
         *    that sum to less than 1.) */
        double max = -INFINITY;
        for (int j = 0; j < tk; j++) {
            bool seen = visible(i, j, tq, tk, causal, key_valid);
            pi[j] = seen ? (qkv_real)(scale * dot(ROW(q, i, d), ROW(k, j, d), d)) : -INFINITY;
            max = fmax(max, pi[j]);
        }

        /* 3. Softmax over the row, i.e. over the keys: each query shares out
         *    a weight of 1 among the keys. Subtracting the row's max first
         *    changes nothing but keeps exp from overflowing. A row with no
         *    visible key at all gets weights 0 (and so an output 0). */
        double sum = 0;
        for (int j = 0; j < tk; j++) {
            double e = max == -INFINITY ? 0 : exp(pi[j] - max);
            pi[j] = (qkv_real)e;
            sum += e;
        }
        for (int j = 0; j < tk; j++)
            pi[j] = sum > 0 ? (qkv_real)(pi[j] / sum) : 0;

        /* 4. The output: the weighted average of the values,
         *    o_i = Σ_j P[i,j]·v_j. */
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int j = 0; j < tk; j++)
                s += (double)pi[j] * ROW(v, j, d)[c];
            ROW(o, i, d)[c] = (qkv_real)s;
        }
    }
}

void qkv__attention_plain_backward(qkv_real *dq, qkv_real *dk, qkv_real *dv, qkv_real *ds,
                                   const qkv_real *q, const qkv_real *k, const qkv_real *v,
                                   const qkv_real *p, const qkv_real *dout, int tq, int tk, int d)
{
    double scale = 1 / sqrt((double)d);

    /* 4 backwards. O = P·V, so dV = Pᵀ·dO: value j collects the output
     * gradients of the queries that used it, in proportion to their weights
     * (a hidden key's weight is 0, so its value gets nothing from there). */
    for (int j = 0; j < tk; j++)
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int i = 0; i < tq; i++)
                s += (double)ROW(p, i, tk)[j] * ROW(dout, i, d)[c];
            ROW(dv, j, d)[c] = (qkv_real)s;
        }

    /* ...and dP = dO·Vᵀ: how the loss changes with each weight. */
    for (int i = 0; i < tq; i++)
        for (int j = 0; j < tk; j++)
            ROW(ds, i, tk)[j] = (qkv_real)dot(ROW(dout, i, d), ROW(v, j, d), d);

    /* 3 backwards. Through the softmax of each row:
     * dS = P ⊙ (dP − Σ_j P·dP). Raising one score raises its weight and
     * lowers the others, hence the row's weighted mean subtracted. Where a
     * key is hidden its weight is exactly 0, so its score's gradient is
     * exactly 0: the mask (step 2) passes no gradient. */
    for (int i = 0; i < tq; i++) {
        const qkv_real *pi = ROW(p, i, tk);
        qkv_real *dsi = ROW(ds, i, tk);
        double mean = 0;
        for (int j = 0; j < tk; j++)
            mean += (double)pi[j] * dsi[j];
        for (int j = 0; j < tk; j++)
            dsi[j] = (qkv_real)(pi[j] * (dsi[j] - mean));
    }

    /* 1 backwards. S = Q·Kᵀ/√d, so dQ = dS·K/√d (query i moves towards the
     * keys whose scores should rise) and dK = dSᵀ·Q/√d. */
    for (int i = 0; i < tq; i++)
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int j = 0; j < tk; j++)
                s += (double)ROW(ds, i, tk)[j] * ROW(k, j, d)[c];
            ROW(dq, i, d)[c] = (qkv_real)(scale * s);
        }
    for (int j = 0; j < tk; j++)
        for (int c = 0; c < d; c++) {
            double s = 0;
            for (int i = 0; i < tq; i++)
                s += (double)ROW(ds, i, tk)[j] * ROW(q, i, d)[c];
            ROW(dk, j, d)[c] = (qkv_real)(scale * s);
        }
}
