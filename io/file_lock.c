/* The advisory lock of an output (see qkv/file.h and internal.h).
 *
 * The lock cannot live on the output itself: every save renames a new file
 * onto it, so a lock on the old inode would protect nothing. It lives on a
 * file beside it, PATH.lock, that holds the holder's pid. flock is used
 * rather than fcntl locks, which a process loses when it closes any other
 * descriptor of the file. The holder removes PATH.lock while still holding
 * it, so a taker that opened the old file checks, once it has the lock, that
 * the name still leads to the file it locked, and tries again if not. */
#include "qkv/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/internal.h"

enum { MAX_HELD = 16, PID_BYTES = 24 };

/* A lock this process holds. */
typedef struct held_lock {
    int fd;     /* the open PATH.lock, flock'ed */
    dev_t dev;  /* its device and inode */
    ino_t ino;
    char *name; /* PATH.lock */
} held_lock;

static held_lock held[MAX_HELD];
static int n_held;

/* PATH.lock, qkv_alloc'd. */
static char *lock_name(const char *path)
{
    size_t n = strlen(path);
    char *name = qkv_alloc(n + sizeof ".lock");
    if (name) {
        memcpy(name, path, n);
        memcpy(name + n, ".lock", sizeof ".lock");
    }
    return name;
}

/* The held lock on the file fd has open, or NULL. */
static held_lock *find_held(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    for (int i = 0; i < n_held; i++)
        if (held[i].dev == st.st_dev && held[i].ino == st.st_ino)
            return &held[i];
    return NULL;
}

/* 0 when the n bytes of a lock file are one: empty, or a pid and a newline. */
static bool looks_like_lock(const char *b, ssize_t n)
{
    if (n == 0)
        return true;
    ssize_t i = 0;
    while (i < n && b[i] >= '0' && b[i] <= '9')
        i++;
    return i > 0 && i == n - 1 && b[i] == '\n';
}

/* Open (creating it) the lock file name; its descriptor, or -1. A file of
 * that name that is not a lock file is never used (nor later removed). */
static int open_lock_file(const char *name, const char *path)
{
    int fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0) {
        qkv_set_error("cannot lock '%s': cannot open '%s': %s", path, name, strerror(errno));
        return -1;
    }
    struct stat st;
    char b[PID_BYTES];
    ssize_t n = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size >= PID_BYTES ||
        (n = pread(fd, b, sizeof b, 0)) < 0 || !looks_like_lock(b, n)) {
        qkv_set_error("cannot lock '%s': '%s' exists and is not a qkv lock file (move it away)",
                      path, name);
        close(fd);
        return -1;
    }
    return fd;
}

int qkv__lock_take(const char *path, bool *taken)
{
    *taken = false;
    char *name = lock_name(path);
    if (!name)
        return -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open_lock_file(name, path);
        if (fd < 0)
            break;
        if (find_held(fd)) { /* this process holds it already */
            close(fd);
            qkv_free(name);
            return 0;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            char pid[PID_BYTES] = "";
            ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
            pid[n > 0 ? n - 1 : 0] = 0;
            if (err == EWOULDBLOCK || err == EAGAIN)
                qkv_set_error("'%s' is being written by another process (%s%s holds its lock "
                              "'%s'); wait for it to end or write somewhere else",
                              path, pid[0] ? "pid " : "one that", pid, name);
            else
                qkv_set_error("cannot lock '%s': %s", name, strerror(err));
            close(fd);
            break;
        }
        struct stat at_fd, at_name;
        if (fstat(fd, &at_fd) != 0 || stat(name, &at_name) != 0 || at_fd.st_dev != at_name.st_dev ||
            at_fd.st_ino != at_name.st_ino) {
            close(fd); /* its holder removed it as we took it: take the new one */
            continue;
        }
        char pid[PID_BYTES];
        int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (n_held == MAX_HELD || ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
            qkv_set_error("cannot lock '%s': %s", path,
                          n_held == MAX_HELD ? "too many locks held" : strerror(errno));
            unlink(name);
            close(fd);
            break;
        }
        held[n_held++] = (held_lock){.fd = fd, .dev = at_fd.st_dev, .ino = at_fd.st_ino,
                                     .name = name};
        *taken = true;
        return 0;
    }
    qkv_free(name);
    return -1;
}

void qkv__lock_give(const char *path)
{
    char *name = lock_name(path);
    struct stat st;
    for (int i = 0; name && i < n_held; i++)
        if (strcmp(held[i].name, name) == 0 ||
            (stat(name, &st) == 0 && held[i].dev == st.st_dev && held[i].ino == st.st_ino)) {
            unlink(held[i].name); /* while still holding it: see the top of the file */
            close(held[i].fd);
            qkv_free(held[i].name);
            held[i] = held[--n_held];
            break;
        }
    qkv_free(name);
}

int qkv_output_lock(const char *path)
{
    if (!path)
        return qkv_set_error("qkv_output_lock: path is NULL");
    if (!path[0])
        return qkv_set_error("qkv_output_lock: path is empty");
    bool taken;
    return qkv__lock_take(path, &taken);
}

void qkv_output_unlock(const char *path)
{
    if (path)
        qkv__lock_give(path);
}
