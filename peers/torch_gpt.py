#!/usr/bin/env python3
"""The PyTorch reference for qkv's character GPT, for side-by-side figures.

The same model as `qkv train --config NAME` (baby, small, fast): a byte-level
vocabulary (the distinct bytes of the text, sorted), the first 90% of the text
to train and the last 10% to validate, random windows of --block bytes, a
nanoGPT-layout GPT with the lm head tied to the token embedding, AdamW
(betas 0.9/0.99, eps 1e-8, weight decay on tensors of 2 or more dimensions
only), linear warmup then cosine (or warmup-stable-decay) from --lr to
--min-lr, gradient clipping. The model options of qkv's `fast` recipe are
here too (RoPE, RMSNorm, ReLU², QK-norm, untied head, no biases), so the
shapes and the step match; the random draws are torch's, not qkv's, so the
losses agree in distribution, not bit for bit.

    python3 peers/torch_gpt.py --data input.txt --config baby --iters 300
    python3 peers/torch_gpt.py --data input.txt --config fast --bench 5   # ms/step only

It prints a line per --log-every steps (loss, lr, ms/step, tokens/s), the
train and validation loss every --eval-every steps and at the end, and, with
--bench N, the median ms/step of N steps after 3 warm-up steps and the
process's peak RSS.
"""
import argparse
import math
import resource
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# name: iters, batch, block, layers, heads, embd, dropout, lr, min_lr, wsd, options
PRESETS = {
    "baby": (2000, 12, 64, 4, 4, 128, 0.0, 1e-3, 1e-4, 0.0, ()),
    "small": (5000, 64, 256, 6, 6, 384, 0.2, 1e-3, 1e-4, 0.0, ()),
    "fast": (10000, 6, 128, 4, 4, 128, 0.0, 2e-3, 2e-4, 0.3, ("rope", "rmsnorm", "relu2", "qk_norm")),
}
OPTIONS = ("no_bias", "rope", "rmsnorm", "relu2", "qk_norm", "untied")


class Norm(nn.Module):
    """LayerNorm, or RMSNorm (x / rms(x) · w: no mean, no shift); eps 1e-5 as in qkv."""

    def __init__(self, dim, rms, bias):
        super().__init__()
        self.rms = rms
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias and not rms else None

    def forward(self, x):
        if self.rms:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, 1e-5)


def rope(x, cos, sin):
    """Turns each pair of coordinates (2i, 2i+1) of x (B, H, T, d) by the angle t·θ_i."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def attend(q, k, v, dropout):
    """softmax(QKᵀ/√d + causal mask)·V: torch's fused kernel where there is one (2.0 on), else
    the plain steps, which keep the B·H·T² weights as torch 1.13 does."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout)
    T = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    weights = F.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return F.dropout(weights, dropout) @ v


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        C, bias = a.embd, not a.no_bias
        self.a = a
        self.ln_1, self.ln_2 = Norm(C, a.rmsnorm, bias), Norm(C, a.rmsnorm, bias)
        self.c_attn = nn.Linear(C, 3 * C, bias=bias)
        self.attn_proj = nn.Linear(C, C, bias=bias)
        self.c_fc = nn.Linear(C, 4 * C, bias=bias)
        self.mlp_proj = nn.Linear(4 * C, C, bias=bias)
        d = C // a.heads
        if a.qk_norm:  # each head's query and key RMS-normalised, a learned scale of size d
            self.q_norm, self.k_norm = Norm(d, True, False), Norm(d, True, False)
        self.drop = nn.Dropout(a.dropout)

    def attention(self, x, rot):
        B, T, C = x.shape
        H = self.a.heads
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        if self.a.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        if rot is not None:
            q, k = rope(q, *rot), rope(k, *rot)
        y = attend(q, k, v, self.a.dropout if self.training else 0.0)
        return self.drop(self.attn_proj(y.transpose(1, 2).contiguous().view(B, T, C)))

    def forward(self, x, rot):
        x = x + self.attention(self.ln_1(x), rot)
        h = self.c_fc(self.ln_2(x))
        h = F.relu(h).square() if self.a.relu2 else F.gelu(h, approximate="tanh")
        return x + self.drop(self.mlp_proj(h))


class GPT(nn.Module):
    def __init__(self, a, vocab_size):
        super().__init__()
        self.a = a
        self.wte = nn.Embedding(vocab_size, a.embd)
        self.wpe = None if a.rope else nn.Embedding(a.block, a.embd)
        self.drop = nn.Dropout(a.dropout)
        self.h = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.ln_f = Norm(a.embd, a.rmsnorm, not a.no_bias)
        self.lm_head = nn.Linear(a.embd, vocab_size, bias=False) if a.untied else None
        for name, p in self.named_parameters():  # nanoGPT's init: N(0, 0.02), residual projections / √(2L)
            if name.endswith("proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * a.layers))
            elif p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        if a.rope:
            d = a.embd // a.heads
            theta = 10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / (d // 2))
            angle = torch.arange(a.block, dtype=torch.float64)[:, None] * theta
            self.register_buffer("cos", angle.cos().float(), persistent=False)
            self.register_buffer("sin", angle.sin().float(), persistent=False)

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.wte(idx)
        if self.wpe is not None:
            x = x + self.wpe(torch.arange(T))
        rot = (self.cos[:T], self.sin[:T]) if self.a.rope else None
        x = self.drop(x)
        for block in self.h:
            x = block(x, rot)
        x = self.ln_f(x)
        logits = self.lm_head(x) if self.lm_head is not None else x @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def lr_at(a, it):
    """qkv_lr_at: warmup lr·(it+1)/(warmup+1), then cosine to --min-lr over the run, or with --wsd
    the rate held and the last FRAC of the run decayed linearly."""
    if it < a.warmup:
        return a.lr * (it + 1) / (a.warmup + 1)
    if it >= a.iters:
        return a.min_lr
    if a.wsd > 0:
        s = max(a.iters - math.floor(a.wsd * a.iters + 0.5), a.warmup)
        return a.lr if it < s else a.lr + (a.min_lr - a.lr) * (it - s) / (a.iters - s)
    ratio = (it - a.warmup) / max(1, a.iters - a.warmup)
    return a.min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (a.lr - a.min_lr)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="training text (bytes)")
    p.add_argument("--config", default="baby", choices=PRESETS, help="qkv's preset (default baby)")
    for flag, kind in (("iters", int), ("batch", int), ("block", int), ("layers", int), ("heads", int),
                       ("embd", int), ("dropout", float), ("lr", float), ("min_lr", float), ("wsd", float)):
        p.add_argument("--" + flag.replace("_", "-"), type=kind, help="override the preset")
    for opt in OPTIONS:
        p.add_argument("--" + opt.replace("_", "-"), action="store_true", help="qkv's model option")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--eval-iters", type=int, default=200)
    p.add_argument("--log-every", type=int, default=100)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--bench", type=int, default=0, help="time N steps after 3 warm-up steps, then exit")
    p.add_argument("--autocast-bf16", action="store_true", help="run the forward under bfloat16 autocast")
    a = p.parse_args()
    preset = PRESETS[a.config]
    names = ("iters", "batch", "block", "layers", "heads", "embd", "dropout", "lr", "min_lr", "wsd")
    for name, value in zip(names, preset):
        if getattr(a, name) is None:
            setattr(a, name, value)
    for opt in preset[-1]:
        setattr(a, opt, True)
    if a.embd % a.heads:
        p.error("--heads must divide --embd")
    return a


def main():
    a = parse()
    torch.manual_seed(a.seed)
    if a.threads:
        torch.set_num_threads(a.threads)
    with open(a.data, "rb") as f:
        text = f.read()
    vocab = sorted(set(text))
    lookup = torch.zeros(256, dtype=torch.long)
    lookup[torch.tensor(vocab)] = torch.arange(len(vocab))
    ids = lookup[torch.frombuffer(bytearray(text), dtype=torch.uint8).long()]
    n_train = len(ids) * 9 // 10
    splits = {"train": ids[:n_train], "val": ids[n_train:]}
    for name, part in splits.items():
        if len(part) <= a.block:
            raise SystemExit(f"torch_gpt: the {name} split ({len(part)} bytes) is not longer than --block {a.block}")

    def batch(split):
        data = splits[split]
        start = torch.randint(len(data) - a.block, (a.batch,))
        x = torch.stack([data[i:i + a.block] for i in start])
        y = torch.stack([data[i + 1:i + 1 + a.block] for i in start])
        return x, y

    model = GPT(a, len(vocab))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.99), eps=1e-8)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast_bf16)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {a.config}: {a.layers} layers, "
          f"{a.heads} heads, width {a.embd}, block {a.block}, batch {a.batch}, {n_params:,} parameters, "
          f"vocab {len(vocab)}, {len(ids):,} tokens"
          + "".join(f", {o}" for o in OPTIONS if getattr(a, o)) + (", bf16 autocast" if a.autocast_bf16 else ""))

    @torch.no_grad()
    def evaluate():
        model.eval()
        out = []
        for split in ("train", "val"):
            losses = []
            for _ in range(a.eval_iters):
                with autocast:
                    losses.append(model(*batch(split)).item())
            out.append(sum(losses) / len(losses))
        model.train()
        return out

    def step(it):
        lr = lr_at(a, it)
        for group in opt.param_groups:
            group["lr"] = lr
        with autocast:
            loss = model(*batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        return loss.item(), lr

    if a.bench:
        for it in range(3):
            step(it)
        times = []
        for it in range(3, 3 + a.bench):
            t0 = time.perf_counter()
            step(it)
            times.append((time.perf_counter() - t0) * 1e3)
        ms = statistics.median(times)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"bench: {ms:.1f} ms/step (median of {a.bench}), {a.batch * a.block / ms * 1e3:,.0f} tokens/s, "
              f"peak RSS {rss:.1f} MB")
        return

    start = last = time.perf_counter()
    for it in range(a.iters):
        loss, lr = step(it)
        if (it + 1) % a.log_every == 0:
            now = time.perf_counter()
            ms = (now - last) * 1e3 / a.log_every
            last = now
            print(f"step {it + 1:5d}  loss {loss:.4f}  lr {lr:.2e}  {ms:.1f} ms/step  "
                  f"{a.batch * a.block / ms * 1e3:,.0f} tok/s", flush=True)
        if (it + 1) % a.eval_every == 0 and it + 1 < a.iters:
            train_loss, val_loss = evaluate()
            print(f"eval at step {it + 1}: train loss {train_loss:.4f}, val loss {val_loss:.4f}", flush=True)
            last = time.perf_counter()
    train_loss, val_loss = evaluate()
    print(f"done: {a.iters} steps in {time.perf_counter() - start:.1f}s; "
          f"final train loss {train_loss:.4f}, val loss {val_loss:.4f}")


if __name__ == "__main__":
    main()
