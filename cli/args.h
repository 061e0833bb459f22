/* A small declarative flag parser shared by every subcommand: each command
 * lists its flags once (name, kind, where to store, range, help) and gets
 * --help, usage errors that name the flag, and range checks for free. */
#ifndef QKV_CLI_ARGS_H
#define QKV_CLI_ARGS_H

#include <stdbool.h>

/* ARG_THREADS is ARG_INT that also takes "auto", stored as ARG_AUTO. */
typedef enum { ARG_INT, ARG_REAL, ARG_STR, ARG_FLAG, ARG_THREADS } arg_kind;

/* What an ARG_THREADS flag stores for "auto" (its range starts at 1). */
#define ARG_AUTO 0

typedef struct arg_spec {
    const char *name;  /* "--lr" */
    arg_kind kind;     /* how the value is parsed */
    void *dest;        /* int* (ARG_INT, ARG_THREADS), double*, const char**, or bool* */
    double min, max;   /* inclusive range for ARG_INT / ARG_THREADS / ARG_REAL */
    const char *meta;  /* placeholder in usage ("LR"), NULL for flags */
    const char *help;  /* one line */
} arg_spec;

typedef struct arg_cmd {
    const char *name;     /* "train" */
    const char *summary;  /* one line */
    const char *usage;    /* positional part of the synopsis, or "" */
    const arg_spec *specs;
    int n_specs;
    int max_positional;   /* how many bare words the command takes */
} arg_cmd;

/* Exit status of a usage error (a bad flag or value). */
#define ARG_USAGE_EXIT 2

/* Parse argv (argv[0] is the subcommand name) into the specs' destinations;
 * positional words go to pos (up to cmd->max_positional, count in *n_pos).
 * Returns -1 to continue, or an exit status: 0 after printing --help,
 * ARG_USAGE_EXIT after printing a usage error that names the flag. */
int args_parse(const arg_cmd *cmd, int argc, char **argv, const char **pos, int *n_pos);

/* Print the command's usage and flag table to f (stdout for --help, stderr for errors). */
void args_usage(const arg_cmd *cmd, void *f);

/* Print "qkv CMD: MESSAGE" and a hint to use --help to stderr; returns ARG_USAGE_EXIT. */
int args_error(const arg_cmd *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* True when the flag was given on the command line (after args_parse). */
bool args_given(const arg_cmd *cmd, const char *name);

/* One entry of a command menu: `qkv NAME`, `qkv s2s NAME`, `qkv lab NAME`. */
typedef struct cli_command {
    const char *name;                  /* "train" */
    int (*run)(int argc, char **argv); /* gets argv from the name on; returns the exit status */
    const char *summary;               /* one line */
} cli_command;

/* A menu of commands under one program name. */
typedef struct cli_menu {
    const char *prog;        /* "qkv", "qkv s2s": starts the usage line and error messages */
    const char *noun;        /* "command": gives COMMAND, "commands:" and "unknown command" */
    const char *summary;     /* a line under the usage line, or NULL */
    const cli_command *cmds; /* the menu, in the order --help lists it */
    int n_cmds;
} cli_menu;

/* Run the command argv[1] names. No argument: the menu to stderr, ARG_USAGE_EXIT;
 * --help, -h or help: the menu to stdout, 0; an unknown name: a message and
 * the menu to stderr, ARG_USAGE_EXIT. */
int cli_dispatch(const cli_menu *menu, int argc, char **argv);

#endif
