/* Reading the labels of qkv attn's pictures of a BPE model back
 * (tests/cli/test_attn_bpe.c, test_token_labels.c): a label's escapes taken
 * back to the token's bytes, and the labels of an SVG. */
#ifndef QKV_TEST_TOKEN_LABELS_H
#define QKV_TEST_TOKEN_LABELS_H

#include <stddef.h>

#include "json_read.h"
#include "qkv/bpe.h"

/* What the pictures' tests have the model read: words of the test text, a
 * tab, a backslash, a line break, a whole UTF-8 character and a byte that is
 * none. */
extern const char token_labels_text[];

/* The label of token id of bpe stands for its bytes: its escapes taken back
 * ('␣' a space, '⏎' a newline, '⇥' a tab, "\\" a backslash, "\xHH" a byte,
 * anything else itself) give them, and it has no control byte. */
void check_label(const qkv_bpe *bpe, int32_t id, const char *label);

/* The texts of svg's <text> elements whose opening tag holds attrs, in
 * order, into labels (at most cap); how many. */
int svg_labels(const char *svg, const char *attrs, char labels[][64], int cap);

/* The page at path is of a GPT of bpe's tokens reading token_labels_text: a
 * query and a key a token, named by its text, and the next token's
 * distribution by token, in id order. */
void check_bpe_page(const char *path, const qkv_bpe *bpe);

#endif
