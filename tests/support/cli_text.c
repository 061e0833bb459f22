/* The corpus of a suite that runs the qkv program (see cli_text.h). */
#include "cli_text.h"

#include <stdio.h>

#include "testing.h"

void qkv_cli_write_text(const qkv_cli *cli, char *path, size_t cap, int lines)
{
    snprintf(path, cap, "%s/text.txt", cli->root);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < lines; i++)
        fputs("the quick brown fox jumps over the lazy dog; attention is all you need.\n", f);
    ck_assert_int_eq(fclose(f), 0);
}
