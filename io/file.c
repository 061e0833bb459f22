/* Files in and out (see qkv/file.h): inputs opened without blocking, the
 * protected inputs, outputs written to a temporary and renamed into place;
 * reading a whole file into memory and prefixing error messages (internal.h). */
#include "qkv/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/internal.h"
#include "tensor/check.h"

/* What a file that is not a regular one is, for messages. */
static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* ======================================================== inputs */

FILE *qkv_input_open(const char *path)
{
    if (!path) {
        qkv_set_error("qkv_input_open: path is NULL");
        return NULL;
    }
    /* stat first, so a device is never even opened; O_NONBLOCK so that a FIFO
     * swapped in between cannot block the open, and fstat then sees what was
     * really opened. */
    struct stat st;
    if (stat(path, &st) != 0) {
        qkv_set_error("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    int fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK) : -1;
    if (S_ISREG(st.st_mode) && fd < 0) {
        qkv_set_error("cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        if (S_ISDIR(st.st_mode))
            qkv_set_error("cannot read '%s': %s", path, strerror(EISDIR));
        else
            qkv_set_error("cannot read '%s': not a regular file (it is %s)", path,
                          kind_of(st.st_mode));
        return NULL;
    }
    FILE *f = NULL;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "rb"))) {
        qkv_set_error("cannot open '%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

unsigned char *qkv__read_file(const char *path, size_t *len)
{
    FILE *f = qkv_input_open(path);
    if (!f)
        return NULL;
    /* The size comes from the file system, so nothing larger than the file
     * itself is ever allocated, whatever its contents claim. */
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(fileno(f), &st) != 0) {
        qkv_set_error("cannot read '%s': %s", path, strerror(errno));
    } else if ((unsigned long long)st.st_size >= SIZE_MAX) {
        qkv_set_error("cannot read '%s': %lld bytes do not fit in memory", path,
                      (long long)st.st_size);
    } else if ((buf = qkv_alloc((size_t)st.st_size + 1))) {
        size_t want = (size_t)st.st_size, got = fread(buf, 1, want, f);
        char extra;
        if (got != want) {
            if (ferror(f))
                qkv_set_error("cannot read '%s': %s", path, strerror(errno));
            else
                qkv_set_error("cannot read '%s': it shrank from %zu to %zu bytes while being read",
                              path, want, got);
        } else if (want == 0 && fread(&extra, 1, 1, f) == 1) {
            /* /proc and /sys files say they are empty and are not: no size to trust. */
            qkv_set_error("cannot read '%s': it reports a size of 0 but has content (a /proc or "
                          "/sys file?); copy it to an ordinary file first",
                          path);
        } else {
            buf[want] = 0;
            *len = want;
            fclose(f);
            return buf;
        }
        qkv_free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

unsigned char *qkv_input_read(const char *path, size_t *len)
{
    if (qkv__null("qkv_input_read", "path", path) || qkv__null("qkv_input_read", "len", len))
        return NULL;
    return qkv__read_file(path, len);
}

/* ======================================================== protected inputs */

enum { MAX_PROTECTED = 32 };

/* A file no output may replace, known by its device and inode. */
typedef struct protected_input {
    dev_t dev;
    ino_t ino;
    char name[256]; /* the name it was protected under, for messages */
} protected_input;

static protected_input protected[MAX_PROTECTED];
static int n_protected;

int qkv_protect_input(const char *path)
{
    if (!path)
        return qkv_set_error("qkv_protect_input: path is NULL");
    struct stat st;
    if (stat(path, &st) != 0)
        return qkv_set_error("qkv_protect_input: cannot stat '%s': %s", path, strerror(errno));
    for (int i = 0; i < n_protected; i++)
        if (protected[i].dev == st.st_dev && protected[i].ino == st.st_ino)
            return 0;
    if (n_protected == MAX_PROTECTED)
        return qkv_set_error("qkv_protect_input: already %d protected inputs", MAX_PROTECTED);
    protected_input *p = &protected[n_protected++];
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    snprintf(p->name, sizeof p->name, "%s", path);
    return 0;
}

/* ======================================================== outputs */

struct qkv_output {
    FILE *f;        /* the temporary, then (once published) the target itself */
    char *path;     /* the target */
    char *tmp;      /* the temporary's name */
    bool published; /* renamed onto the target already */
};

/* 0 when what is at path now may be replaced: nothing, or a regular file that
 * is not a protected input. *mode gets the mode the new file should have. */
static int check_target(const char *path, mode_t *mode)
{
    if (!path[0])
        return qkv_set_error("cannot write '': the file name is empty");
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return qkv_set_error("cannot write '%s': %s", path, strerror(errno));
        mode_t mask = umask(0);
        umask(mask);
        *mode = 0666 & ~mask;
        return 0;
    }
    if (!S_ISREG(st.st_mode))
        return qkv_set_error("cannot write '%s': it is %s, and qkv only ever replaces regular "
                             "files",
                             path, kind_of(st.st_mode));
    for (int i = 0; i < n_protected; i++)
        if (protected[i].dev == st.st_dev && protected[i].ino == st.st_ino)
            return qkv_set_error("cannot write '%s': it is the same file as the input '%s'; "
                                 "choose another name",
                                 path, protected[i].name);
    *mode = st.st_mode & 07777;
    return 0;
}

/* Create a fresh PATH.tmp-XXXXXX beside path; its descriptor, or -1. */
static int make_temp(const char *path, char **tmp)
{
    static const char suffix[] = ".tmp-XXXXXX";
    size_t n = strlen(path);
    if (!(*tmp = qkv_alloc(n + sizeof suffix)))
        return -1;
    memcpy(*tmp, path, n);
    memcpy(*tmp + n, suffix, sizeof suffix);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        qkv_set_error("cannot write '%s': cannot create a file beside it: %s", path,
                      strerror(errno));
        qkv_free(*tmp);
        *tmp = NULL;
    }
    return fd;
}

int qkv_output_check(const char *path)
{
    if (!path)
        return qkv_set_error("qkv_output_check: path is NULL");
    mode_t mode;
    char *tmp;
    int fd = check_target(path, &mode) < 0 ? -1 : make_temp(path, &tmp);
    if (fd < 0)
        return -1;
    close(fd);
    unlink(tmp);
    qkv_free(tmp);
    return 0;
}

qkv_output *qkv_output_open(const char *path)
{
    if (!path) {
        qkv_set_error("qkv_output_open: path is NULL");
        return NULL;
    }
    mode_t mode;
    qkv_output *o = qkv_calloc(sizeof *o);
    int fd = -1;
    if (!o || !(o->path = qkv_alloc(strlen(path) + 1)) || check_target(path, &mode) < 0 ||
        (fd = make_temp(path, &o->tmp)) < 0)
        goto fail;
    strcpy(o->path, path);
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "wb"))) {
        qkv_set_error("cannot write '%s': %s", o->tmp, strerror(errno));
        close(fd);
        unlink(o->tmp);
        goto fail;
    }
    return o;
fail:
    if (o) {
        qkv_free(o->path);
        qkv_free(o->tmp);
        qkv_free(o);
    }
    return NULL;
}

FILE *qkv_output_file(qkv_output *o) { return o ? o->f : NULL; }

/* fsync the directory holding path, so that a rename survives a crash too.
 * File systems that cannot sync a directory (EINVAL) are let be. */
static int sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *dir = qkv_alloc(n + 1);
    if (!dir)
        return -1;
    memcpy(dir, !slash ? "." : path, n);
    dir[n] = 0;
    int rc = 0, fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
        rc = qkv_set_error("cannot sync directory '%s': %s", dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    qkv_free(dir);
    return rc;
}

/* Everything written so far on disk: the errno of the first failure, or 0.
 * stdio reports a full disk at a write, at fflush or only at fclose, so the
 * error flag and each step are checked. */
static int flush_sync(FILE *f)
{
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    if (ferror(f))
        return EIO; /* an earlier write failed and its data is lost */
    return fsync(fileno(f)) != 0 ? errno : 0;
}

/* Rename the temporary onto the target, checking the target once more (a
 * device may have appeared there since the open). 0 or -1. */
static int put_in_place(qkv_output *o)
{
    mode_t mode;
    if (check_target(o->path, &mode) < 0)
        return -1;
    if (rename(o->tmp, o->path) != 0)
        return qkv_set_error("cannot rename '%s' to '%s': %s", o->tmp, o->path, strerror(errno));
    o->published = true;
    return sync_dir(o->path);
}

/* The message of a failed write of o (errno err); returns -1. */
static int write_error(const qkv_output *o, int err)
{
    if (o->published)
        return qkv_set_error("cannot write '%s': %s", o->path, strerror(err));
    return qkv_set_error("cannot write '%s': %s (the file there, if any, is left as it was)",
                         o->path, strerror(err));
}

int qkv_output_publish(qkv_output *o)
{
    if (!o)
        return qkv_set_error("qkv_output_publish: o is NULL");
    if (o->published)
        return 0;
    int err = flush_sync(o->f);
    return err ? write_error(o, err) : put_in_place(o);
}

/* Free o and what it holds (the stream is closed already). */
static void output_free(qkv_output *o)
{
    qkv_free(o->path);
    qkv_free(o->tmp);
    qkv_free(o);
}

int qkv_output_commit(qkv_output *o)
{
    if (!o)
        return qkv_set_error("qkv_output_commit: o is NULL");
    int err = flush_sync(o->f);
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    int rc = err ? write_error(o, err) : o->published ? 0 : put_in_place(o);
    if (rc < 0 && !o->published)
        unlink(o->tmp);
    output_free(o);
    return rc;
}

void qkv_output_abort(qkv_output *o)
{
    if (!o)
        return;
    fclose(o->f);
    if (!o->published)
        unlink(o->tmp);
    output_free(o);
}
