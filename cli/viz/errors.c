/* The pictures' messages (see viz_internal.h): worded as the library words
 * its own, through its public qkv_set_error. */
#include <stdio.h>
#include <string.h>

#include "viz_internal.h"

bool viz_null(const char *fn, const char *arg, const void *p)
{
    if (!p)
        qkv_set_error("%s: %s is NULL", fn, arg);
    return !p;
}

int viz_check_weights(const char *fn, const char *arg, const qkv_tensor *t)
{
    if (!t) {
        char cause[1024];
        snprintf(cause, sizeof cause, "%s", qkv_last_error());
        return qkv_set_error("%s: input %s is NULL%s%s", fn, arg,
                             cause[0] ? ": an earlier call failed: " : "", cause);
    }
    if (!t->data)
        return qkv_set_error("%s: input %s has no values", fn, arg);
    return 0;
}

int viz_fail_in(const char *fn)
{
    const char *why = qkv_last_error();
    size_t n = strlen(fn);
    if (strncmp(why, fn, n) == 0 && why[n] == ':')
        return -1;
    return viz_error_prefix(fn);
}

int viz_error_prefix(const char *prefix)
{
    char why[1024]; /* qkv_set_error must not read the message it writes */
    snprintf(why, sizeof why, "%s", qkv_last_error());
    return qkv_set_error("%s: %s", prefix, why);
}
