/* The corpus of a suite that runs the qkv program (cli_run.h): a short
 * English line, repeated, in a file beside the program's working directory. */
#ifndef QKV_TEST_CLI_TEXT_H
#define QKV_TEST_CLI_TEXT_H

#include <stddef.h>

#include "cli_run.h"

/* Write the line `lines` times to cli->root/text.txt; its path into path (cap bytes). */
void qkv_cli_write_text(const qkv_cli *cli, char *path, size_t cap, int lines);

#endif
