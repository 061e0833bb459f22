/* Reading qkv attn's page back (see attn_page_read.h). */
#include "attn_page_read.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

/* The data block of the page at path, parsed. */
jval attn_page_data(const char *path)
{
    char *text = qkv_test_read_file(path, NULL);
    const char *marker = "<script type=\"application/json\" id=\"qkv-data\">";
    char *start = strstr(text, marker);
    ck_assert_msg(start != NULL, "no data block in %s", path);
    start += strlen(marker);
    char *end = strstr(start, "</script>");
    ck_assert_ptr_nonnull(end);
    *end = '\0';
    jreader r = {.p = start};
    jval v;
    json_read_value(&r, &v);
    json_skip_space(&r);
    ck_assert_msg(!r.bad && *r.p == '\0', "the data block is not one JSON value (near \"%.20s\")",
                  r.p);
    free(text);
    return v;
}

/* What one view must be: its sizes, labels, and for every layer, head and
 * query a row of weights that sums to 1 with exact zeros on the keys the
 * query may not see (the future when causal, the padding always). Returns
 * the number of masked weights checked. */
int attn_check_view(const jval *v, int L, int H, int Tq, int Tk, int C, bool causal,
                    const char *cols, int n_valid)
{
    ck_assert_int_eq(json_get_int(v, "layers"), L);
    ck_assert_int_eq(json_get_int(v, "heads"), H);
    ck_assert_int_eq(json_get_int(v, "Tq"), Tq);
    ck_assert_int_eq(json_get_int(v, "Tk"), Tk);
    ck_assert_int_eq(json_get_int(v, "C"), C);
    ck_assert_int_eq(json_get_int(v, "d"), C / H);
    ck_assert_int_eq(json_get(v, "causal")->kind, J_BOOL);
    ck_assert_int_eq((bool)json_get(v, "causal")->num, causal);
    const jval *labels = json_get(v, "cols"), *valid = json_get_numbers(v, "valid", Tk);
    ck_assert_int_eq(labels->n, Tk);
    ck_assert_int_eq(json_get(v, "rows")->n, Tq);
    for (int j = 0; j < Tk; j++) {
        ck_assert_int_eq(valid->items[j].num, j < n_valid);
        if (cols && j < n_valid && cols[j] != ' ') /* a space shows as '␣' */
            ck_assert_msg(labels->items[j].str[0] == cols[j] && !labels->items[j].str[1],
                          "key %d is labelled '%s', not '%c'", j, labels->items[j].str, cols[j]);
    }
    const jval *data = json_get(v, "data");
    ck_assert_int_eq(data->n, L);
    int masked = 0;
    for (int l = 0; l < L; l++) {
        const jval *layer = &data->items[l];
        const jval *w = json_get_numbers(layer, "w", H * Tq * Tk);
        json_get_numbers(layer, "q", Tq * C), json_get_numbers(layer, "out", Tq * C);
        json_get_numbers(layer, "k", Tk * C), json_get_numbers(layer, "v", Tk * C);
        for (int h = 0; h < H; h++)
            for (int i = 0; i < Tq; i++) {
                double sum = 0;
                for (int j = 0; j < Tk; j++) {
                    double x = w->items[(h * Tq + i) * Tk + j].num;
                    sum += x;
                    ck_assert(x >= 0 && x <= 1);
                    if (j >= n_valid || (causal && j > i)) {
                        ck_assert_msg(x == 0, "layer %d head %d: masked weight (%d,%d) is %g", l,
                                      h, i, j, x);
                        masked++;
                    }
                }
                ck_assert_msg(fabs(sum - 1) < 1e-4, "layer %d head %d row %d sums to %.7f", l, h,
                              i, sum);
            }
    }
    return masked;
}
