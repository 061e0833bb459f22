/* Misuse cases for qkv/rng.h: the random numbers. */
#include "misuse.h"

MISUSE(qkv_rng_seed, null) { REFUSES(qkv_rng_seed(NULL, 1), "r is NULL"); }
MISUSE(qkv_rng_u64, null) { FAILS_AS(0, qkv_rng_u64(NULL), "r is NULL"); }
MISUSE(qkv_rng_uniform, null) { FAILS_NAN(qkv_rng_uniform(NULL), "r is NULL"); }
MISUSE(qkv_rng_normal, null) { FAILS_NAN(qkv_rng_normal(NULL), "r is NULL"); }
MISUSE(qkv_rng_below, null) { FAILS_AS(0, qkv_rng_below(NULL, 5), "r is NULL"); }
MISUSE(qkv_rng_below, zero) { FAILS_AS(0, qkv_rng_below(rng(), 0), "n is 0"); }
