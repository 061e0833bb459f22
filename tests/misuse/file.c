/* Misuse cases for qkv/file.h: safe input and output files. */
#include "misuse.h"

MISUSE(qkv_protect_input, null_path) { FAILS_INT(qkv_protect_input(NULL), "path is NULL"); }
MISUSE(qkv_output_check, null_path) { FAILS_INT(qkv_output_check(NULL), "path is NULL"); }
MISUSE(qkv_output_lock, null_path) { FAILS_INT(qkv_output_lock(NULL), "path is NULL"); }
MISUSE(qkv_output_lock, empty_path) { FAILS_INT(qkv_output_lock(""), "path is empty"); }
MISUSE(qkv_output_unlock, null_path) { HARMLESS((qkv_output_unlock(NULL), 0)); }
MISUSE(qkv_output_unlock, not_held) { HARMLESS((qkv_output_unlock(tmp_path("never.ckpt")), 0)); }
MISUSE(qkv_output_open, null_path) { FAILS_NULL(qkv_output_open(NULL), "path is NULL"); }
MISUSE(qkv_output_file, null_output) { MISUSE_ASSERT(qkv_output_file(NULL) == NULL); }
MISUSE(qkv_output_publish, null_output) { FAILS_INT(qkv_output_publish(NULL), "o is NULL"); }
MISUSE(qkv_output_commit, null_output) { FAILS_INT(qkv_output_commit(NULL), "o is NULL"); }
MISUSE(qkv_output_abort, null_output) { HARMLESS((qkv_output_abort(NULL), 0)); }
MISUSE(qkv_input_open, null_path) { FAILS_NULL(qkv_input_open(NULL), "path is NULL"); }
MISUSE(qkv_input_read, null_path)
{
    size_t len;
    FAILS_NULL(qkv_input_read(NULL, &len), "path is NULL");
}
MISUSE(qkv_input_read, null_len) { FAILS_NULL(qkv_input_read(text_path(), NULL), "len is NULL"); }
