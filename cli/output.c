/* Claiming the outputs of a command, checking stdout (see output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qkv/qkv.h"

/* An output claimed by this process. */
typedef struct claim {
    const char *flag; /* the option that names it: "--out" */
    char *path;       /* its name, as given */
    char *lock;       /* PATH.lock, which the claim holds */
    bool replaces;    /* a file of another run stood there when it was claimed */
} claim;

/* A command writes a handful of files: a checkpoint and its log and plot, a picture and a page. */
enum { MAX_CLAIMS = 8 };

static claim claims[MAX_CLAIMS];
static int n_claims;

/* The last name of path: what follows its last '/'. */
static const char *last_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether the folders that hold a and b are the same one (both must exist). */
static bool same_folder(const char *a, const char *b)
{
    char dirs[2][4096];
    const char *paths[2] = {a, b};
    struct stat st[2];
    for (int i = 0; i < 2; i++) {
        size_t n = (size_t)(last_name(paths[i]) - paths[i]);
        if (n == 0)
            snprintf(dirs[i], sizeof dirs[i], ".");
        else /* "/x" is in "/", "d/x" in "d/" */
            snprintf(dirs[i], sizeof dirs[i], "%.*s", (int)n, paths[i]);
        if (stat(dirs[i], &st[i]) != 0)
            return false;
    }
    return st[0].st_dev == st[1].st_dev && st[0].st_ino == st[1].st_ino;
}

/* Whether writing a and writing b would write the same file: when either
 * exists, whether both do and are one file (device and inode: another path,
 * a hard link); when neither does, whether they are one name in one folder. */
static bool same_target(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea || eb)
        return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(last_name(a), last_name(b)) == 0 && same_folder(a, b);
}

/* Whether the regular file at path is flock'ed by another process: the
 * PATH.lock of a run that is writing PATH now. Replacing it would take that
 * run's lock away (and its end would then remove what replaced it). */
static bool locked_by_another(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return false;
    struct stat st;
    bool held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) != 0 &&
                (errno == EWOULDBLOCK || errno == EAGAIN);
    close(fd); /* and with it the shared lock, if it was taken */
    return held;
}

/* Print "qkv CMD: FLAG: <why>" and return -1. */
static int refuse(const char *cmd, const char *flag, const char *why)
{
    fprintf(stderr, "qkv %s: %s: %s\n", cmd, flag, why);
    return -1;
}

/* Why path (whose lock file is lock) may not be claimed beside the claims
 * made already, into why; false when it may. */
static bool collides(const char *path, const char *lock, char *why, size_t n)
{
    for (int i = 0; i < n_claims; i++) {
        const claim *c = &claims[i];
        if (same_target(path, c->path))
            snprintf(why, n, "'%s' is the same file as %s '%s': give each output its own name",
                     path, c->flag, c->path);
        else if (same_target(path, c->lock) || same_target(lock, c->path))
            snprintf(why, n, "'%s' and %s '%s' cannot both be written: one of them is the "
                     "other's lock file; give each output its own name", path, c->flag, c->path);
        else
            continue;
        return true;
    }
    return false;
}

/* Why path (whose lock file is lock) may not be claimed, into why; false when
 * it may. exists: a file is there; replace: it may be replaced; resume_hint:
 * see claim_one. */
static bool refused(const char *path, const char *lock, const char *flag, bool exists,
                    bool replace, const char *resume_hint, char *why, size_t n)
{
    if (collides(path, lock, why, n))
        return true;
    if (exists && locked_by_another(path))
        snprintf(why, n, "'%s' is a lock file another process holds (a run writing the file it "
                 "locks?); qkv never replaces it: write elsewhere", path);
    else if (exists && !replace && resume_hint)
        snprintf(why, n, "'%s' exists already (a trained model?); a new run never replaces it: "
                 "continue it with --resume %s, write elsewhere with %s, or pass --force to "
                 "replace it", path, resume_hint, flag);
    else if (exists && !replace)
        snprintf(why, n, "'%s' exists already, and qkv never replaces a file it did not write "
                 "in this run: write elsewhere with %s, or pass --force to replace it", path,
                 flag);
    else
        return false;
    return true;
}

/* cli_claim, where continued says that the file at path is the run's own
 * (a resume continues it) and resume_hint, when not NULL, is the checkpoint
 * the refusal of an existing file suggests resuming. */
static int claim_one(const char *cmd, const char *flag, const char *path, bool force,
                     bool continued, const char *resume_hint)
{
    if (n_claims == MAX_CLAIMS)
        return refuse(cmd, flag, "too many outputs for one command");
    if (qkv_output_check(path) < 0)
        return refuse(cmd, flag, qkv_last_error());
    size_t len = strlen(path);
    char why[8400], *copy = strdup(path), *lock = malloc(len + sizeof ".lock");
    if (!copy || !lock) {
        free(copy);
        free(lock);
        return refuse(cmd, flag, "out of memory");
    }
    memcpy(lock, path, len);
    memcpy(lock + len, ".lock", sizeof ".lock");
    struct stat st;
    bool exists = lstat(path, &st) == 0; /* a symbolic link is a file of the user's too */
    if (!refused(path, lock, flag, exists, force || continued, resume_hint, why, sizeof why)) {
        if (qkv_output_lock(path) == 0) {
            claims[n_claims++] = (claim){.flag = flag, .path = copy, .lock = lock,
                                         .replaces = exists && !continued};
            return 0;
        }
        snprintf(why, sizeof why, "%s", qkv_last_error());
    }
    free(copy);
    free(lock);
    return refuse(cmd, flag, why);
}

int cli_claim(const char *cmd, const char *flag, const char *path, bool force)
{
    return claim_one(cmd, flag, path, force, false, NULL);
}

const char *const cli_log_suffixes[2] = {".csv", ".svg"};

int cli_claim_outputs(const char *cmd, const char *out, bool replace, const char *resumed)
{
    bool continued = resumed && same_target(out, resumed);
    int rc = claim_one(cmd, "--out", out, replace, continued, out);
    char path[4096];
    for (int i = 0; rc == 0 && i < 2; i++) {
        snprintf(path, sizeof path, "%s%s", out, cli_log_suffixes[i]);
        rc = claim_one(cmd, "--out", path, replace, continued, NULL);
    }
    if (rc < 0)
        cli_release_outputs();
    return rc;
}

bool cli_replaces(const char *path)
{
    for (int i = 0; i < n_claims; i++)
        if (strcmp(claims[i].path, path) == 0)
            return claims[i].replaces;
    return false;
}

void cli_release_outputs(void)
{
    for (int i = 0; i < n_claims; i++) {
        qkv_output_unlock(claims[i].path);
        free(claims[i].path);
        free(claims[i].lock);
    }
    n_claims = 0;
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
