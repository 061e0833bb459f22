/* Size checks shared by the model configs (see sizes.h). */
#include "sizes.h"

#include "qkv/nn.h"

int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout)
{
    if (n_layer < 1 || n_layer > 256)
        return qkv_set_error("%s config: n_layer %d is not in [1, 256]", who, n_layer);
    if (n_embd < 1 || n_embd > 65536)
        return qkv_set_error("%s config: n_embd %d is not in [1, 65536]", who, n_embd);
    if (n_head < 1 || n_embd % n_head)
        return qkv_set_error("%s config: n_embd %d is not a multiple of n_head %d", who, n_embd,
                             n_head);
    if (!(dropout >= 0 && dropout <= QKV_DROPOUT_MAX))
        return qkv_set_error("%s config: dropout %g is not in [0, %g]", who, dropout,
                             QKV_DROPOUT_MAX);
    return 0;
}
