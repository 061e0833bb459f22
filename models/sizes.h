/* Internal to models/: the size checks every model config shares. Not installed. */
#ifndef QKV_SIZES_H
#define QKV_SIZES_H

/* 1..256 layers, a width of 1..65536 that n_head divides, dropout in [0, 1):
 * 0, or -1 with "<who> config: ..." naming the first bad field. The upper
 * bounds keep a corrupt or hostile config from asking for a giant model. */
int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout);

#endif
