/* qkv/rng.h — the project's own deterministic random numbers.
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same
 * numbers on every machine and at every thread count (qkv never draws from
 * an RNG inside a parallel loop). The state is four words, so it can be
 * saved in a checkpoint and a run resumed exactly.
 *
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1337);
 *     double u = qkv_rng_uniform(&rng);
 */
#ifndef QKV_RNG_H
#define QKV_RNG_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

typedef struct qkv_rng {
    uint64_t s[4]; /* xoshiro256** state; never all zero */
} qkv_rng;

/* Start the generator from a 64-bit seed. */
void qkv_rng_seed(qkv_rng *r, uint64_t seed);

/* The next 64 random bits. */
uint64_t qkv_rng_u64(qkv_rng *r);

/* Uniform in [0, 1), 53 random bits. */
double qkv_rng_uniform(qkv_rng *r);

/* Standard normal N(0, 1) by Box-Muller (two uniforms per call, nothing cached). */
double qkv_rng_normal(qkv_rng *r);

/* Uniform integer in [0, n), unbiased; n must be > 0 (n == 0 is a failure
 * that returns 0). With r NULL these functions return 0 (NAN for the
 * floating ones) and leave a message. */
uint64_t qkv_rng_below(qkv_rng *r, uint64_t n);

QKV_END_DECLS
#endif
