#!/usr/bin/env python3
"""Recompute a block dumped by `10_block --dump DIR` in NumPy and compare.

    build/bin/10_block --dump /tmp/block --no-timing --steps 1
    /usr/bin/python3 tools/check_dump.py /tmp/block            # needs python3-numpy

The dump holds x (B*T, d), every weight of the first block as the library keeps it (y = x W + b with W of
shape (in, out), LayerNorm eps 1e-5, exact-erf GELU, causal attention with 4 heads), and the block's
output y. This script is an independent implementation of the same pre-norm block; it prints max|diff|.
"""
import math
import os
import sys

import numpy as np

B, T, HEADS = 2, 8, 4  # as 10_block writes them (it prints the shapes)


def load(d, name):
    return np.load(os.path.join(d, name + ".npy")).astype(np.float64)


def layernorm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def attention(q, k, v):  # (B*T, d) each -> (B*T, d), causal, HEADS heads
    d = q.shape[1]
    dh = d // HEADS
    split = lambda a: a.reshape(B, T, HEADS, dh).transpose(0, 2, 1, 3)  # (B, h, T, dh)
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)  # (B, h, T, T)
    scores = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return (w @ v).transpose(0, 2, 1, 3).reshape(B * T, d)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    p = lambda n: load(d, "block0." + n)
    x, y = load(d, "x"), load(d, "y")
    n1 = layernorm(x, p("ln1.gain"), p("ln1.bias"))
    heads = attention(n1 @ p("W_q") + p("b_q"), n1 @ p("W_k") + p("b_k"), n1 @ p("W_v") + p("b_v"))
    a = x + heads @ p("W_o") + p("b_o")
    n2 = layernorm(a, p("ln2.gain"), p("ln2.bias"))
    ours = a + gelu(n2 @ p("W_1") + p("b_1")) @ p("W_2") + p("b_2")
    diff = np.abs(ours - y).max()
    print(f"NumPy (float64) vs 10_block (fp32): max |diff| = {diff:.2e} over y {y.shape}")
    ok = diff < 1e-5
    print("agree" if ok else "DIFFER")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
