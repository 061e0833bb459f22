/* qkv/file.h — how qkv reads and writes files, so that nothing it does destroys one.
 *
 * Every file qkv writes (checkpoints, SVG pictures, the program's loss log) goes
 * through qkv_output. It refuses a target that exists but is not a regular file
 * (a device, a FIFO, a directory) and a target that is the same file as a
 * protected input (same device and inode, whatever the name); it writes a fresh
 * temporary beside the target, syncs it and renames it into place, so a crash,
 * a kill or a full disk leaves the old file whole. A checkpoint is also locked
 * while it is saved (PATH.lock, an advisory flock), so a second process writing
 * the same path fails at once instead of mixing its bytes in; a program can hold
 * that lock for a whole run with qkv_output_lock.
 *
 *     qkv_protect_input("corpus.txt");             // never write over the text we read
 *     if (qkv_output_check("run.ckpt") < 0)        // before any work: can it be written?
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *     qkv_output *o = qkv_output_open("notes.txt");
 *     if (o)
 *         fprintf(qkv_output_file(o), "hello\n");
 *     if (!o || qkv_output_commit(o) < 0)           // checks every write, then renames
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *
 * Inputs: qkv_input_open opens a file for reading without blocking on a FIFO or
 * a device, and refuses anything that is not a regular file; qkv_input_read
 * reads a whole one into memory.
 *
 * The registries (protected inputs, held locks) are per process; call these
 * from one thread at a time.
 */
#ifndef QKV_FILE_H
#define QKV_FILE_H

#include <stdio.h>

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* From now on refuse to write any output onto the file at path (an input such as the
 * corpus), whatever name the output is given. 0, or -1 when path cannot be stat'ed. */
int qkv_protect_input(const char *path);

/* 0 when an output at path could be written now (its directory exists and takes a new
 * file, and path is not a non-regular file or a protected input); else -1 saying why.
 * Run it before long work, so that an unusable path is found before the work is done. */
int qkv_output_check(const char *path);

/* Take the advisory lock of the output path (the file PATH.lock) until qkv_output_unlock
 * or the process ends; 0, or -1 at once when another process holds it. Taking a lock
 * this process already holds is a no-op returning 0. */
int qkv_output_lock(const char *path);

/* Give back the lock qkv_output_lock took on path and remove PATH.lock (no-op if not held). */
void qkv_output_unlock(const char *path);

/* An output being written: a temporary beside its target until committed. */
typedef struct qkv_output qkv_output;

/* Start writing path: refuses a non-regular target or a protected input, then opens a
 * new temporary in path's directory. NULL with a message naming the path on failure. */
qkv_output *qkv_output_open(const char *path);

/* The stream to write to (NULL for a NULL o). Errors in it are caught by commit. */
FILE *qkv_output_file(qkv_output *o);

/* Put what was written so far in place now (flush, sync, rename onto the target) and keep
 * the stream open: later writes are appended to the target itself, so a kill loses only
 * what was not yet flushed. 0, or -1 naming the file (then only abort is valid). */
int qkv_output_publish(qkv_output *o);

/* Finish: flush, check for any write error, sync, close and rename onto the target (once
 * only, if published). Frees o. 0, or -1 naming the file; the old target is then as it was. */
int qkv_output_commit(qkv_output *o);

/* Abandon o: close and remove the temporary (unless published), leave the target as it was. */
void qkv_output_abort(qkv_output *o);

/* Open the regular file at path for reading ("rb") without blocking, whatever it is:
 * a FIFO, a device or a directory is refused. NULL with a message naming path. */
FILE *qkv_input_open(const char *path);

/* The whole regular file at path (qkv_input_open's rules) in one block, freed
 * with qkv_free, with its length in *len and a NUL after its last byte, so a
 * text file is a string. NULL with a message naming the path and the reason;
 * an empty file is returned with *len = 0. */
unsigned char *qkv_input_read(const char *path, size_t *len);

QKV_END_DECLS

#endif
