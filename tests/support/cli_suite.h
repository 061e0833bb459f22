/* What the suites of the program's behaviour (tests/cli/test_cli_*.c) share:
 * one qkv_cli whose root also holds data/ with the corpora, fixtures that
 * make and remove them and empty the working directory before each test,
 * and the tiny model they train. */
#ifndef QKV_TEST_CLI_SUITE_H
#define QKV_TEST_CLI_SUITE_H

#include <check.h>

#include "cli_run.h"

extern qkv_cli suite_cli;      /* the program; suite_cli.work must stay empty on errors */
extern char suite_data[160];   /* suite_cli.root/data: where the corpora live */
extern char suite_text[200];   /* suite_data/text.txt: a short English text, repeated */

/* Make the folders and the corpora (text.txt, empty.txt, short.txt). */
void cli_suite_setup(void);

/* Remove them. */
void cli_suite_teardown(void);

/* Each test starts with an empty working directory. */
void cli_suite_clean_work(void);

/* A test case of the suite: its fixtures and a timeout of 240 s. */
TCase *cli_suite_tcase(const char *name);

/* Run `qkv args...` in the working directory to its end (RUN_WITH: with the
 * options of qkv_cli_opts given as designated initializers). */
#define RUN(...) QKV_CLI_RUN(&suite_cli, NULL, __VA_ARGS__)
#define RUN_ARGS(args) qkv_cli_run(&suite_cli, NULL, (args))
#define EXPECT QKV_CLI_EXPECT

/* A small, fast model on one thread. */
#define TINY "--layers", "1", "--heads", "2", "--embd", "16", "--block", "16", "--batch", "4", \
             "--eval-iters", "2", "--threads", "1"

/* A tiny model trained on suite_text for a few steps, saved as work/name. */
void train_tiny(const char *name);

/* A tiny encoder-decoder trained for two steps, saved as work/name. */
void train_tiny_s2s(const char *name);

/* The bytes of work/name (malloc'd) and their number. */
char *work_bytes(const char *name, size_t *n);

/* work/name (qkv_test_path's slots). */
const char *work_file(const char *name);

#endif
