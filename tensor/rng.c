/* xoshiro256** (Blackman & Vigna), seeded with splitmix64 (see qkv/rng.h). */
#include "qkv/rng.h"

#include <math.h>

#include "graph.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void qkv_rng_seed(qkv_rng *r, uint64_t seed)
{
    if (qkv__null("qkv_rng_seed", "r", r))
        return;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* The generator itself; the public functions check r once, then draw here. */
static uint64_t next(uint64_t *s)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t qkv_rng_u64(qkv_rng *r) { return qkv__null("qkv_rng_u64", "r", r) ? 0 : next(r->s); }

double qkv__rng_uniform(qkv_rng *r) { return (double)(next(r->s) >> 11) * 0x1.0p-53; }

double qkv__rng_normal(qkv_rng *r)
{
    double u1 = 1.0 - qkv__rng_uniform(r); /* (0, 1]: log stays finite */
    double u2 = qkv__rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double qkv_rng_uniform(qkv_rng *r)
{
    return qkv__null("qkv_rng_uniform", "r", r) ? NAN : qkv__rng_uniform(r);
}

double qkv_rng_normal(qkv_rng *r)
{
    return qkv__null("qkv_rng_normal", "r", r) ? NAN : qkv__rng_normal(r);
}

uint64_t qkv_rng_below(qkv_rng *r, uint64_t n)
{
    if (qkv__null("qkv_rng_below", "r", r))
        return 0;
    if (n == 0) {
        qkv_set_error("qkv_rng_below: n is 0; the range [0, n) must not be empty");
        return 0;
    }
    /* Reject the top sliver of 2^64 that would favour small values. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = next(r->s);
    while (x >= limit);
    return x % n;
}
