#!/usr/bin/python3
"""The fuzzer's seed: a one-layer GPT-2 of width 4 (vocab 5, context 3) in
GPT2LMHeadModel's safetensors layout, with its mask and metadata n_head.

    make_gpt2_seed.py OUT
"""
import json
import struct
import sys

V, T, C = 5, 3, 4
shapes = {"wte.weight": [V, C], "wpe.weight": [T, C],
          "h.0.ln_1.weight": [C], "h.0.ln_1.bias": [C],
          "h.0.attn.c_attn.weight": [C, 3 * C], "h.0.attn.c_attn.bias": [3 * C],
          "h.0.attn.c_proj.weight": [C, C], "h.0.attn.c_proj.bias": [C],
          "h.0.ln_2.weight": [C], "h.0.ln_2.bias": [C],
          "h.0.mlp.c_fc.weight": [C, 4 * C], "h.0.mlp.c_fc.bias": [4 * C],
          "h.0.mlp.c_proj.weight": [4 * C, C], "h.0.mlp.c_proj.bias": [C],
          "ln_f.weight": [C], "ln_f.bias": [C], "h.0.attn.bias": [1, 1, T, T]}
header, data = {"__metadata__": {"format": "pt", "n_head": "2"}}, b""
for i, (name, shape) in enumerate(shapes.items()):
    n = 1
    for d in shape:
        n *= d
    header["transformer." + name] = {"dtype": "F32", "shape": shape,
                                     "data_offsets": [len(data), len(data) + 4 * n]}
    data += struct.pack("<%df" % n, *[((i * 7 + k) % 11 - 5) / 10 for k in range(n)])
text = json.dumps(header, separators=(",", ":")).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
