/* Reading qkv attn's page back (tests/cli/test_attn_html.c): its data block
 * parsed as JSON, and what one view and the five steps from q, k, v must be. */
#ifndef QKV_TEST_ATTN_PAGE_READ_H
#define QKV_TEST_ATTN_PAGE_READ_H

#include <stdbool.h>

#include "json_read.h"

/* The data block of the page at path, parsed. */
jval attn_page_data(const char *path);

/* What one view must be: its sizes, labels, and for every layer, head and
 * query a row of weights that sums to 1 with exact zeros on the keys the
 * query may not see (the future when causal, the padding always). Returns
 * the number of masked weights checked. */
int attn_check_view(const jval *v, int L, int H, int Tq, int Tk, int C, bool causal,
                    const char *cols, int n_valid);

#endif
