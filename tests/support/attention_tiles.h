/* The tiled attention core (tensor/attention_*.c) against the plain loops of
 * tensor/attention_plain.c, run by both builds: tests/tensor/test_attention_backward.c
 * (float) and tests/tensor/grad_attention_tiles.c (double, to 1e-12). Its output,
 * its weights and the gradients of q, k and v, at sizes that cut the tiles
 * of queries and keys unevenly (neither T a multiple of a tile, Tq != Tk, one
 * query, more keys than two tiles), with several heads in both layouts,
 * under no mask, the causal mask, key padding (a run of padded keys across
 * a tile boundary, and queries that see no key at all) and both. */
#ifndef QKV_ATTENTION_TILES_H
#define QKV_ATTENTION_TILES_H

#include "qkv/base.h"

/* Every case above, each value within tol · max(1, |want|) of the plain
 * loops' (a Check assertion fails otherwise). */
void attention_tiles_check(double tol);

/* rows×d values from src, rows pitch apart, packed into dst (one head's
 * rows out of a side-by-side layout). */
void attention_gather(qkv_real *dst, const qkv_real *src, int rows, int d, int pitch);

#endif
