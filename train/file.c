/* Reading a whole file into memory; prefixing error messages (see internal.h). */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

unsigned char *qkv__read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        qkv_set_error("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    /* The size comes from the file system, so nothing larger than the file
     * itself is ever allocated, whatever its contents claim. */
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fileno(f), &st) != 0) {
        qkv_set_error("cannot read '%s': %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        qkv_set_error("cannot read '%s': %s", path,
                      S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
    } else if ((unsigned long long)st.st_size >= SIZE_MAX) {
        qkv_set_error("cannot read '%s': %lld bytes do not fit in memory", path,
                      (long long)st.st_size);
    } else if ((buf = qkv_alloc((size_t)st.st_size + 1))) {
        size_t want = (size_t)st.st_size, got = fread(buf, 1, want, f);
        if (got != want) {
            if (ferror(f))
                qkv_set_error("cannot read '%s': %s", path, strerror(errno));
            else
                qkv_set_error("cannot read '%s': it shrank from %zu to %zu bytes while being read",
                              path, want, got);
            qkv_free(buf);
            buf = NULL;
        } else {
            buf[want] = 0;
            *len = want;
        }
    }
    fclose(f);
    return buf;
}

int qkv__error_prefix(const char *fmt, ...)
{
    char prefix[512], why[512];
    snprintf(why, sizeof why, "%s", qkv_last_error());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return qkv_set_error("%s: %s", prefix, why);
}
