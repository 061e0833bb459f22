/* One graph through every op, to compare the float and double builds.
 *
 * tests/dump_tour (double) prints what the tour reports; tests/test_precision
 * (float) runs the tour itself and checks every value against that print:
 *
 *     static void print(void *ud, const char *name, const qkv_real *v, size_t n)
 *     { (void)ud; (void)v; printf("%s: %zu values\n", name, n); }
 *     if (ops_tour(1, print, NULL) < 0) fprintf(stderr, "%s\n", qkv_last_error());
 */
#ifndef QKV_OPS_TOUR_H
#define QKV_OPS_TOUR_H

#include <stdbool.h>
#include <stddef.h>

#include "qkv/qkv.h"

/* Receives one named block of n values: an op's result or an input's gradient. */
typedef void (*tour_report_fn)(void *ud, const char *name, const qkv_real *values, size_t n);

/* From fixed seeds, build one graph that uses every op, run backward passes
 * times (gradients accumulate), and report each op's result (in graph order)
 * and then each input's gradient. Every input and random weight is a float
 * value, so both builds start from the same numbers. 0, or -1 with
 * qkv_last_error() set. */
int ops_tour(int passes, tour_report_fn report, void *ud);

/* ---- keeping a tour's blocks, to compare two tours ---- */

enum { TOUR_MAX_BLOCKS = 96 };

typedef struct tour_block {
    char name[64];     /* "gelu", "grad x", ... */
    size_t n;          /* number of values */
    qkv_real *values;  /* a copy (malloc) */
} tour_block;

typedef struct tour_blocks {
    tour_block items[TOUR_MAX_BLOCKS]; /* in report order */
    int count;                         /* blocks kept */
    bool overflow;                     /* the tour reported more than TOUR_MAX_BLOCKS */
} tour_blocks;

/* Run ops_tour(passes, ...) and keep a copy of every block in out (which
 * tour_blocks_free releases, also after a failure). 0 or -1. */
int ops_tour_keep(int passes, tour_blocks *out);

/* Free the values kept by ops_tour_keep. */
void tour_blocks_free(tour_blocks *b);

#endif
