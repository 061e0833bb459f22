/* The flag parser (see args.h). */
#include "args.h"

#include "qkv/base.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which specs the last args_parse saw, for args_given. */
static const arg_cmd *given_cmd;
static bool given[64];

void args_usage(const arg_cmd *cmd, void *out)
{
    FILE *f = out;
    fprintf(f, "usage: qkv %s [options]%s%s\n%s\n\noptions:\n", cmd->name,
            cmd->usage[0] ? " " : "", cmd->usage, cmd->summary);
    for (int i = 0; i < cmd->n_specs; i++) {
        const arg_spec *s = &cmd->specs[i];
        char left[48];
        snprintf(left, sizeof left, "%s%s%s", s->name, s->meta ? " " : "", s->meta ? s->meta : "");
        fprintf(f, "  %-24s %s", left, s->help);
        if (s->kind == ARG_THREADS && *(int *)s->dest == ARG_AUTO)
            fputs(" (default auto)", f);
        else if (s->kind == ARG_INT || s->kind == ARG_THREADS)
            fprintf(f, " (default %d)", *(int *)s->dest);
        else if (s->kind == ARG_REAL)
            fprintf(f, " (default %g)", *(double *)s->dest);
        else if (s->kind == ARG_STR && *(const char **)s->dest) {
            fputs(" (default ", f);
            for (const char *c = *(const char **)s->dest; *c; c++)
                fputs(*c == '\n' ? "\\n" : (char[2]){*c, 0}, f);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    fprintf(f, "  %-24s %s\n", "--help", "show this help and exit");
}

int args_error(const arg_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "qkv %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* Also the last error: with several ranks, the one that speaks for them repeats it. */
    char why[1024];
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    qkv_set_error("%s", why);
    fprintf(stderr, "\nTry 'qkv %s --help'.\n", cmd->name);
    return ARG_USAGE_EXIT;
}

/* Parse one value into s->dest; returns an exit status or -1. */
static int parse_value(const arg_cmd *cmd, const arg_spec *s, const char *v)
{
    char *end;
    errno = 0;
    if (s->kind == ARG_STR) {
        *(const char **)s->dest = v;
        return -1;
    }
    if (s->kind == ARG_THREADS && strcmp(v, "auto") == 0) {
        *(int *)s->dest = ARG_AUTO;
        return -1;
    }
    bool whole = s->kind == ARG_INT || s->kind == ARG_THREADS;
    double x = whole ? (double)strtoll(v, &end, 10) : strtod(v, &end);
    /* strtod's ERANGE also flags a tiny number that underflows to a subnormal
     * or 0: that is a number, which the range check below judges. */
    bool overflow = errno == ERANGE && (whole || fabs(x) > 1);
    if (end == v || *end || overflow || !isfinite(x))
        return args_error(cmd, "%s: '%s' is not %s", s->name, v,
                          s->kind == ARG_THREADS ? "a whole number or auto"
                          : whole                ? "a whole number"
                                                 : "a number");
    if (x < s->min || x > s->max) /* whole-number flags show whole-number bounds */
        return args_error(cmd, whole ? "%s: %s is out of range [%.0f, %.0f]"
                                     : "%s: %s is out of range [%g, %g]",
                          s->name, v, s->min, s->max);
    if (whole)
        *(int *)s->dest = (int)x;
    else
        *(double *)s->dest = x;
    return -1;
}

int args_parse(const arg_cmd *cmd, int argc, char **argv, const char **pos, int *n_pos)
{
    given_cmd = cmd;
    memset(given, 0, sizeof given);
    *n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
            args_usage(cmd, stdout);
            return 0;
        }
        if (strncmp(w, "--", 2) != 0 || w[2] == '\0') {
            if (*n_pos >= cmd->max_positional)
                return args_error(cmd, "unexpected argument '%s'", w);
            pos[(*n_pos)++] = w;
            continue;
        }
        /* --name=value or --name value */
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        const arg_spec *s = NULL;
        int k;
        for (k = 0; k < cmd->n_specs; k++)
            if (strlen(cmd->specs[k].name) == len && strncmp(cmd->specs[k].name, w, len) == 0) {
                s = &cmd->specs[k];
                break;
            }
        if (!s)
            return args_error(cmd, "unknown option '%.*s'", (int)len, w);
        if (k < (int)(sizeof given / sizeof given[0]))
            given[k] = true;
        if (s->kind == ARG_FLAG) {
            if (eq)
                return args_error(cmd, "%s takes no value", s->name);
            *(bool *)s->dest = true;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v)
            return args_error(cmd, "%s needs a value (%s)", s->name, s->meta ? s->meta : "");
        int rc = parse_value(cmd, s, v);
        if (rc >= 0)
            return rc;
    }
    return -1;
}

bool args_given(const arg_cmd *cmd, const char *name)
{
    if (cmd != given_cmd)
        return false;
    for (int k = 0; k < cmd->n_specs && k < (int)(sizeof given / sizeof given[0]); k++)
        if (strcmp(cmd->specs[k].name, name) == 0)
            return given[k];
    return false;
}

/* Print the menu's usage line and its commands to f. */
static void menu_usage(const cli_menu *menu, FILE *f)
{
    char upper[32]; /* the noun in capitals: the placeholder in the usage line */
    size_t n = 0;
    for (; menu->noun[n] && n + 1 < sizeof upper; n++)
        upper[n] = (char)toupper((unsigned char)menu->noun[n]);
    upper[n] = '\0';
    fprintf(f, "usage: %s %s [options]   ('%s %s --help' for its options)\n", menu->prog, upper,
            menu->prog, upper);
    if (menu->summary)
        fprintf(f, "%s\n", menu->summary);
    fprintf(f, "\n%ss:\n", menu->noun);
    for (int i = 0; i < menu->n_cmds; i++)
        fprintf(f, "  %-8s %s\n", menu->cmds[i].name, menu->cmds[i].summary);
}

int cli_dispatch(const cli_menu *menu, int argc, char **argv)
{
    if (argc < 2) {
        qkv_set_error("no %s given", menu->noun);
        menu_usage(menu, stderr);
        return ARG_USAGE_EXIT;
    }
    const char *w = argv[1];
    if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0 || strcmp(w, "help") == 0) {
        menu_usage(menu, stdout);
        return 0;
    }
    for (int i = 0; i < menu->n_cmds; i++)
        if (strcmp(w, menu->cmds[i].name) == 0)
            return menu->cmds[i].run(argc - 1, argv + 1);
    qkv_set_error("unknown %s '%s'", menu->noun, w);
    fprintf(stderr, "%s: %s\n", menu->prog, qkv_last_error());
    menu_usage(menu, stderr);
    return ARG_USAGE_EXIT;
}
