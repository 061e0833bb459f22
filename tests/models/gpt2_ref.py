#!/usr/bin/python3
"""A small GPT-2-shaped model in plain PyTorch, saved as safetensors, with
the references qkv's GPT-2 loader is checked against (tests/models/test_gpt2_torch.c).

    gpt2_ref.py OUTDIR [--vocab V]

writes OUTDIR/model.safetensors (Hugging Face's GPT2LMHeadModel layout: the
"transformer." prefix, Conv1D weights stored (in, out), the attn.bias causal
masks, metadata n_head), OUTDIR/ref.safetensors (F64: the input ids "idx" and
"targets" (B, T), the "logits" (B, T, V) and the "losses" before each of 3
AdamW steps and after them) and OUTDIR/after.safetensors (the weights after
the 3 steps, in model.safetensors' layout). Everything is computed in float64
from the float32 weights the file holds. Exits 77 when torch is missing.

The modules are written here from GPT-2's definition (no `transformers`):
pre-LayerNorm blocks, LayerNorm eps 1e-5, GELU in its tanh form, the head
tied to wte. AdamW takes qkv's settings: betas (0.9, 0.99), eps 1e-8, weight
decay 0.1 on the parameters of two or more dimensions only, lr 1e-3, no
clipping.
"""
import json
import math
import struct
import sys

try:
    import torch
except ImportError:
    sys.exit(77)

N_LAYER, N_HEAD, N_EMBD, N_CTX = 2, 4, 32, 16
B, T, STEPS, LR = 2, 8, 3, 1e-3


def conv1d(x, w, b):
    """Hugging Face's Conv1D: w is (in, out)."""
    return x @ w + b


def layernorm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def forward(p, idx, n_layer):
    _, t = idx.shape
    x = p["wte.weight"][idx] + p["wpe.weight"][:t]
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    for l in range(n_layer):
        h = lambda name: p[f"h.{l}.{name}"]
        a = layernorm(x, h("ln_1.weight"), h("ln_1.bias"))
        q, k, v = conv1d(a, h("attn.c_attn.weight"), h("attn.c_attn.bias")).split(N_EMBD, -1)
        heads = lambda z: z.view(z.shape[0], t, N_HEAD, N_EMBD // N_HEAD).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        s = q @ k.transpose(-1, -2) / math.sqrt(N_EMBD // N_HEAD)
        s = s.masked_fill(~mask, float("-inf"))
        y = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(x.shape)
        x = x + conv1d(y, h("attn.c_proj.weight"), h("attn.c_proj.bias"))
        a = layernorm(x, h("ln_2.weight"), h("ln_2.bias"))
        a = gelu_tanh(conv1d(a, h("mlp.c_fc.weight"), h("mlp.c_fc.bias")))
        x = x + conv1d(a, h("mlp.c_proj.weight"), h("mlp.c_proj.bias"))
    x = layernorm(x, p["ln_f.weight"], p["ln_f.bias"])
    return x @ p["wte.weight"].T  # the tied head


def init_params(vocab, gen):
    """GPT-2's shapes; random values (biases and norms too, so a swap shows)."""
    c = N_EMBD
    shapes = {"wte.weight": (vocab, c), "wpe.weight": (N_CTX, c)}
    for l in range(N_LAYER):
        shapes.update({
            f"h.{l}.ln_1.weight": (c,), f"h.{l}.ln_1.bias": (c,),
            f"h.{l}.attn.c_attn.weight": (c, 3 * c), f"h.{l}.attn.c_attn.bias": (3 * c,),
            f"h.{l}.attn.c_proj.weight": (c, c), f"h.{l}.attn.c_proj.bias": (c,),
            f"h.{l}.ln_2.weight": (c,), f"h.{l}.ln_2.bias": (c,),
            f"h.{l}.mlp.c_fc.weight": (c, 4 * c), f"h.{l}.mlp.c_fc.bias": (4 * c,),
            f"h.{l}.mlp.c_proj.weight": (4 * c, c), f"h.{l}.mlp.c_proj.bias": (c,),
        })
    shapes.update({"ln_f.weight": (c,), "ln_f.bias": (c,)})
    p = {}
    for name, shape in shapes.items():
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            v = 1 + 0.1 * torch.randn(shape, generator=gen, dtype=torch.float64)
        else:
            v = 0.2 * torch.randn(shape, generator=gen, dtype=torch.float64)
        # The file holds float32: the reference starts from exactly those values.
        p[name] = v.float().double().requires_grad_(True)
    return p


def save_safetensors(path, tensors, metadata):
    """The format by hand: 8-byte length, JSON header, raw little-endian bytes."""
    header, blobs, at = {"__metadata__": metadata}, [], 0
    for name, (dtype, t) in tensors.items():
        t = t.detach().contiguous()
        raw = (t.float() if dtype == "F32" else t.double()).numpy().astype("<f4" if dtype == "F32" else "<f8").tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def save_model(path, p):
    tensors = {"transformer." + k: ("F32", v) for k, v in p.items()}
    for l in range(N_LAYER):  # GPT2LMHeadModel's saved causal mask, which the loader ignores
        tensors[f"transformer.h.{l}.attn.bias"] = ("F32", torch.tril(torch.ones(1, 1, N_CTX, N_CTX)))
    save_safetensors(path, tensors, {"format": "pt", "n_head": str(N_HEAD)})


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: gpt2_ref.py OUTDIR [--vocab V]")
    out, vocab = args[0], int(args[2]) if len(args) > 2 and args[1] == "--vocab" else 50
    gen = torch.Generator().manual_seed(36)
    p = init_params(vocab, gen)
    save_model(f"{out}/model.safetensors", p)
    idx = torch.randint(0, vocab, (B, T), generator=gen)
    targets = torch.randint(0, vocab, (B, T), generator=gen)
    with torch.no_grad():
        logits = forward(p, idx, N_LAYER)
    decay = [v for v in p.values() if v.dim() >= 2]
    rest = [v for v in p.values() if v.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": rest, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.99), eps=1e-8)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(forward(p, idx, N_LAYER).view(-1, vocab), targets.view(-1))
        losses.append(loss.item())
        loss.backward()
        opt.step()
    with torch.no_grad():
        losses.append(torch.nn.functional.cross_entropy(forward(p, idx, N_LAYER).view(-1, vocab),
                                                        targets.view(-1)).item())
    save_safetensors(f"{out}/ref.safetensors",
                     {"idx": ("F64", idx.double()), "targets": ("F64", targets.double()),
                      "logits": ("F64", logits), "losses": ("F64", torch.tensor(losses, dtype=torch.float64))},
                     {"lr": repr(LR), "steps": str(STEPS)})
    save_safetensors(f"{out}/after.safetensors", {k: ("F64", v) for k, v in p.items()},
                     {"n_head": str(N_HEAD)})


if __name__ == "__main__":
    main()
