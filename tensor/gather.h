/* Internal: picking values along one axis by index, the node behind
 * qkv_index_select, qkv_gather, qkv_topk and qkv_sort (op_gather.c). Not installed. */
#ifndef QKV_GATHER_H
#define QKV_GATHER_H

#include "qkv/tensor.h"

/* x's values picked along axis (counted from the front): the result is x's
 * shape with that axis's extent n, and its value (o, j, i) in the
 * (outer, n, inner) view is x's (o, k, i) for k = ids[j] when per_value is
 * false (the same picks in every row), else k = ids[(o·n + j)·inner + i].
 * Every id in [0, x's extent) is checked; ids are copied. The backward
 * scatter-adds, so an index picked twice gets both gradients. */
qkv_tensor *qkv__take(qkv_arena *a, const char *fn, qkv_tensor *x, int axis, int n,
                      const int32_t *ids, bool per_value);

#endif
