/* Internal: reading a whole file and the output lock, for the library's
 * readers and writers (data/, train/checkpoint.c). Not installed. */
#ifndef QKV_IO_INTERNAL_H
#define QKV_IO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* The whole regular file at path in one qkv_alloc'd block (freed with
 * qkv_free), with its length in *len and a NUL after the last byte. NULL on
 * failure, with a message naming the path and the reason (strerror).
 * An empty file is returned with *len = 0; callers decide if that is wrong. (io/file.c) */
unsigned char *qkv__read_file(const char *path, size_t *len);

/* Hold the lock of the output path (see qkv/file.h): *taken is true when this
 * call took it (give it back with qkv__lock_give), false when this process
 * held it already. 0, or -1 at once when another process holds it. (io/file_lock.c) */
int qkv__lock_take(const char *path, bool *taken);

/* Give back the lock on path and remove PATH.lock. (io/file_lock.c) */
void qkv__lock_give(const char *path);

#endif
