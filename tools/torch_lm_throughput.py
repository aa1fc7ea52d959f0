#!/usr/bin/python3
"""Training throughput of the ladder's full one-block model in PyTorch on the CPU: the reference that
`12_language_model bench` measures the C++ library against, in the same run and with the same threads.

The model is attn::fast::Model with every rung of the ladder switched on (common/fast/model.hpp):

    x = wte[token] + wpe[position]                       (B, T, d)
    h = x + MHA(LN_1(x)) W_o                              4 heads, no biases, causal, scaled by sqrt(d_head)
    o = h + W_2 gelu(LN_2(h) W_1 + b_1) + b_2             d_ff = 4 d, exact GELU
    logits = LN_f(o) W_out + b_out                        untied readout
    loss = cross-entropy of the next byte

trained with AdamW (lr 1e-3, weight decay 0.01 on matrices), gradient clipping at 1.0, on random windows of
random tokens (the data do not change the cost). Prints one line:

    torch <version> threads <n> d <d> T <T> batch <B> tokens/s <rate>

Run with Debian's interpreter (/usr/bin/python3, which has python3-torch), e.g.
    /usr/bin/python3 tools/torch_lm_throughput.py --threads 1 --d 128 --T 128 --batch 64 --steps 20
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, vocab, d, T, heads):
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(T, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.ff1 = nn.Linear(d, 4 * d)
        self.ff2 = nn.Linear(4 * d, d)
        self.out = nn.Linear(d, vocab)
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).bool())

    def forward(self, tokens):
        B, T = tokens.shape
        x = self.wte(tokens) + self.wpe(torch.arange(T))
        n = self.ln1(x)
        dh = n.shape[-1] // self.heads
        q, k, v = (p(n).view(B, T, self.heads, dh).transpose(1, 2) for p in (self.q, self.k, self.v))
        s = q @ k.transpose(-2, -1) / math.sqrt(dh)
        s = s.masked_fill(~self.mask[:T, :T], float("-inf"))
        w = F.softmax(s, dim=-1)
        h = x + self.o((w @ v).transpose(1, 2).reshape(B, T, -1))
        o = h + self.ff2(F.gelu(self.ff1(self.ln2(h))))
        return self.out(self.lnf(o))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--T", type=int, default=128)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Model(a.vocab, a.d, a.T, a.heads)
    decay = [p for name, p in model.named_parameters() if p.dim() == 2 and "ln" not in name]
    rest = [p for name, p in model.named_parameters() if not (p.dim() == 2 and "ln" not in name)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=1e-3)
    data = torch.randint(0, a.vocab, (a.steps + a.warmup, a.batch, a.T + 1))

    def step(i):
        batch = data[i]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, a.vocab), batch[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for i in range(a.warmup):
        step(i)
    start = time.perf_counter()
    for i in range(a.warmup, a.warmup + a.steps):
        step(i)
    seconds = time.perf_counter() - start
    rate = a.steps * a.batch * a.T / seconds
    print(f"torch {torch.__version__} threads {torch.get_num_threads()} d {a.d} T {a.T} batch {a.batch} tokens/s {rate:.0f}")


if __name__ == "__main__":
    main()
