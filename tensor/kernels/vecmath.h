/* Internal: math that vectorizes. libm's expf and tanhf are calls the
 * compiler cannot vectorize (without -ffast-math, which we keep out), and
 * GELU's tanh was the single largest cost of a training step. These are
 * branch-free polynomial versions accurate to a few float ulps; the double
 * build (the gradient checks) keeps libm. Not installed. */
#ifndef QKV_VECMATH_H
#define QKV_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "qkv/base.h"

/* Always inlined: into each path's copy of a kernel (cpu.h), whose loop
 * then vectorizes them with that path's instructions. */
#define QKV__VECMATH static inline __attribute__((always_inline))

#ifdef QKV_DOUBLE

QKV__VECMATH qkv_real qkv__exp(qkv_real x) { return exp(x); }
QKV__VECMATH qkv_real qkv__tanh(qkv_real x) { return tanh(x); }
QKV__VECMATH qkv_real qkv__tanh_fma(qkv_real x) { return tanh(x); }

#else

/* e^x for x in [-87.3, 88.3], Cephes' expf: x = k·ln2 + r with |r| <= ln2/2,
 * e^r by a degree-6 polynomial, 2^k put straight into the exponent bits.
 * No clamps: for callers whose x is in range already (tanh's). */
QKV__VECMATH float qkv__exp_in_range(float x)
{
    /* Round x·log2(e) to the nearest integer by the 1.5·2^23 trick: no call, so it vectorizes. */
    const float shift = 12582912.0f;
    float t = x * 1.44269504088896341f + shift;
    float k = t - shift;
    float r = x - k * 0.693359375f + k * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    /* k as an integer, biased, into the exponent field (unsigned: a NaN x
     * makes garbage bits here, and the NaN in p carries through anyway). */
    uint32_t e = (bits - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &e, sizeof scale);
    return p * scale;
}

/* e^x: inputs are clamped to the finite range, so it never returns inf or
 * NaN for finite x (NaN stays NaN); below -87.3 (and at -inf) it returns
 * exactly 0, as a softmax wants for a score far below the row's largest. */
QKV__VECMATH float qkv__exp(float x)
{
    const float underflow = x < -87.3f ? 0.0f : 1.0f;
    /* Two selects one after the other, not nested: the same values (NaN
     * passes both), and each compiles to one max or min instruction, where
     * the nested form takes compares, masks and blends. */
    x = x < -87.3f ? -87.3f : x;
    x = x > 88.3f ? 88.3f : x;
    return qkv__exp_in_range(x) * underflow;
}

/* tanh(x) = 1 - 2 / (e^(2x) + 1): exact limits ±1, absolute error ~1e-7.
 * Past ±10 the formula gives exactly ±1, so x is clamped there (two
 * selects, as in qkv__exp), and 2x is within e^x's range. */
QKV__VECMATH float qkv__tanh(float x)
{
    x = x < -10.0f ? -10.0f : x;
    x = x > 10.0f ? 10.0f : x;
    return 1.0f - 2.0f / (qkv__exp_in_range(2.0f * x) + 1.0f);
}

/* tanh(x) as x·P(x²)/Q(x²), degrees 13/6 (Eigen's fast tanh), by fused
 * multiply-adds: about half the instructions of qkv__tanh, absolute error
 * under 3e-7, exactly ±1 from ±7.9988 on. Only for copies of a kernel
 * compiled with FMA (AVX2's: cpu.h): elsewhere fmaf is a library call. */
QKV__VECMATH float qkv__tanh_fma(float x)
{
    const float clamp = 7.99881172180175781f; /* where x·P/Q reaches 1 */
    x = x < -clamp ? -clamp : x;
    x = x > clamp ? clamp : x;
    float x2 = x * x;
    float p = fmaf(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
    p = fmaf(x2, p, -8.60467152213735e-11f);
    p = fmaf(x2, p, 5.12229709037114e-08f);
    p = fmaf(x2, p, 1.48572235717979e-05f);
    p = fmaf(x2, p, 6.37261928875436e-04f);
    p = fmaf(x2, p, 4.89352455891786e-03f);
    float q = fmaf(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
    q = fmaf(x2, q, 2.26843463243900e-03f);
    q = fmaf(x2, q, 4.89352518554385e-03f);
    return x * p / q;
}

#endif
#endif
