/* Internal to models/viz/: what the picture writers share. Not installed. */
#ifndef QKV_VIZ_INTERNAL_H
#define QKV_VIZ_INTERNAL_H

#include "qkv/viz.h"

/* ---- shared by every picture (svg.c) ---- */

/* The colour of t in [0, 1] on the viridis-like map, as "#rrggbb". */
const char *qkv__viz_colour(char hex[8], double t);

/* How label i is shown: its character made visible (a space as '␣', a
 * newline as '⏎', ...), or its number when labels is NULL. */
const char *qkv__viz_label(char buf[16], const char *labels, int i);

#endif
