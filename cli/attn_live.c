/* The live page's parts: the module `make wasm` built, found beside the
 * program, and the model's weights as checkpoint bytes (see attn_live.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn_live.h"
#include "cli/viz/viz_internal.h"
#include "qkv/checkpoint.h"
#include "qkv/file.h"

/* The module's folder: $QKV_WASM, else PROGRAM_DIR/wasm, into dir. */
static int module_dir(char *dir, size_t size)
{
    const char *env = getenv("QKV_WASM");
    if (env && *env)
        return snprintf(dir, size, "%s", env) < (int)size ? 0 : -1;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return qkv_set_error("--live: cannot find this program's folder (/proc/self/exe); "
                             "set QKV_WASM to the folder of qkv_live.js");
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    *slash = 0;
    return snprintf(dir, size, "%s/wasm", exe) < (int)size ? 0 : -1;
}

/* The module's two files, or a message naming `make wasm`. */
static int read_module(attn_live *live)
{
    char dir[PATH_MAX], js[PATH_MAX + 16], wasm[PATH_MAX + 16];
    if (module_dir(dir, sizeof dir) < 0)
        return -1;
    snprintf(js, sizeof js, "%s/qkv_live.js", dir);
    snprintf(wasm, sizeof wasm, "%s/qkv_live.wasm", dir);
    if (access(js, R_OK) != 0 || access(wasm, R_OK) != 0)
        return qkv_set_error("--live needs the WebAssembly module %s and %s, which this build "
                             "lacks: run `make wasm` (it needs emscripten: apt-get install "
                             "emscripten), or set QKV_WASM to the folder that holds them",
                             js, wasm);
    size_t len;
    live->module_js = (const char *)qkv_input_read(js, &len);
    live->wasm = live->module_js ? qkv_input_read(wasm, &live->wasm_len) : NULL;
    return live->wasm ? 0 : viz_error_prefix("--live");
}

/* The weights saved with the library's own writer into a fresh temporary
 * folder, read back and removed: a checkpoint without optimizer state. */
static int weights_bytes(attn_live *live, const qkv_gpt *m, const qkv_tokenizer *vocab,
                         const qkv_seq2seq *s2s)
{
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], path[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/qkv_live_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return qkv_set_error("--live: cannot make a temporary folder in %s",
                             tmp && *tmp ? tmp : "/tmp");
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    int rc;
    if (m) {
        uint8_t blob[QKV_GPT_CONFIG_BYTES];
        qkv_gpt_config_pack(&m->cfg, blob);
        qkv_ckpt_model model = {.kind = "gpt", .config = blob, .config_len = sizeof blob,
                                .vocab = vocab};
        rc = qkv_checkpoint_save(path, &model, m->params, NULL, NULL);
    } else {
        rc = qkv_seq2seq_save(s2s, path, 0);
    }
    if (rc == 0 && !(live->ckpt = qkv_input_read(path, &live->ckpt_len)))
        rc = -1;
    remove(path);
    rmdir(dir);
    return rc < 0 ? viz_error_prefix("--live: the weights") : 0;
}

int attn_live_make(attn_live *live, const qkv_gpt *m, const qkv_tokenizer *gpt_vocab,
                   const qkv_seq2seq *s2s)
{
    *live = (attn_live){0};
    if (read_module(live) < 0 || weights_bytes(live, m, gpt_vocab, s2s) < 0) {
        attn_live_free(live);
        return -1;
    }
    return 0;
}

void attn_live_free(attn_live *live)
{
    qkv_free((void *)live->module_js);
    qkv_free((void *)live->wasm);
    qkv_free((void *)live->ckpt);
    *live = (attn_live){0};
}
