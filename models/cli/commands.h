/* The subcommands of the qkv program; each returns the process exit status. */
#ifndef QKV_CLI_COMMANDS_H
#define QKV_CLI_COMMANDS_H

/* qkv lab example|scaling|mask: attention worked through step by step. */
int cmd_lab(int argc, char **argv);

#endif
