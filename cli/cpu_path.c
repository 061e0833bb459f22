/* QKV_CPU and --cpu (see cpu_path.h). */
#include "cpu_path.h"

#include "qkv/cpu.h"

int cli_cpu_use(const char *what, const char *name)
{
    if (!name || !*name)
        return 0;
    int p = qkv_cpu_find(name);
    if (p >= 0 && qkv_cpu_use(p) == 0)
        return 0;
    char list[64];
    return qkv_set_error("%s%s: %s (this CPU runs: %s)", what, name,
                         p < 0 ? "no such path (avx512, avx2, neon or portable)"
                               : "this CPU does not support it",
                         qkv_cpu_list(list, sizeof list));
}
