/* The vector path as the program's users choose it (qkv/cpu.h): QKV_CPU for
 * every command, --cpu for qkv bench. The library alone would run its widest
 * path for a name it does not know; the program says so and stops. */
#ifndef QKV_CLI_CPU_PATH_H
#define QKV_CLI_CPU_PATH_H

/* Make every kernel use the path called name; name NULL or "" keeps the
 * default. -1 with a message (qkv_last_error) naming what this CPU runs
 * when name is no path's or this CPU lacks it; `what` starts the message
 * ("QKV_CPU=", "--cpu "). */
int cli_cpu_use(const char *what, const char *name);

#endif
