/* Claiming the outputs of a run, checking stdout (see output.h). */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "qkv/qkv.h"

/* True when a and b name the same existing file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int cli_claim_outputs(const char *cmd, const char *out, bool replace, const char *resumed)
{
    char path[4096];
    const char *suffixes[] = {"", ".csv", ".svg"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s%s", out, suffixes[i]);
        if (qkv_output_check(path) < 0) {
            fprintf(stderr, "qkv %s: --out: %s\n", cmd, qkv_last_error());
            return -1;
        }
    }
    struct stat st;
    bool continued = resumed && same_file(out, resumed);
    if (!replace && !continued && stat(out, &st) == 0) {
        fprintf(stderr, "qkv %s: --out: '%s' exists already (a trained model?); a new run never "
                "replaces it: continue it with --resume %s, write elsewhere with --out, or pass "
                "--force to replace it\n", cmd, out, out);
        return -1;
    }
    if (qkv_output_lock(out) < 0) {
        fprintf(stderr, "qkv %s: --out: %s\n", cmd, qkv_last_error());
        return -1;
    }
    return 0;
}

int cli_check_stdout(const char *cmd)
{
    errno = 0;
    int failed = fflush(stdout) != 0 || ferror(stdout);
    if (!failed)
        return 0;
    fprintf(stderr, "qkv %s: cannot write to standard output: %s\n", cmd,
            errno ? strerror(errno) : "a write failed");
    return -1;
}
