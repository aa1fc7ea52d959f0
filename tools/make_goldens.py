#!/usr/bin/python3
"""Writes tests/golden/: PyTorch's outputs for claim C32, as small fp32 .npy files.

Claim C32: our multi-head attention and Transformer block, given the same weights as a reference
implementation, agree with it to ~1e-7 in fp32. The reference is PyTorch:

  (a) nn.MultiheadAttention(batch_first, bias), self-attention without a mask and with the causal mask;
  (b) a pre-norm nn.TransformerEncoderLayer (norm_first, exact GELU, d_ff = 4d, dropout 0, batch_first)
      under the causal mask: GPT-2's block, the shape of attn::Transformer's blocks;
  (c) nn.LayerNorm on random rows with large offsets and scales.

Every weight is drawn at random (biases and LayerNorm gains included, which PyTorch would initialise to
0 and 1), so that a weight wired to the wrong place cannot go unnoticed. The tests read these files and
never need torch; run this script only to regenerate them, with Debian's python3-torch and python3-numpy
(`apt-get install -y python3-torch python3-numpy`), from the repository root:

    /usr/bin/python3 tools/make_goldens.py

Same torch version, same seed → the same files. Shapes are PyTorch's: weights are (out, in) and a
linear layer is y = x Wᵀ + b (the C++ side transposes); batches are (B, T, d).
"""

import datetime
import os
import sys

import numpy as np
import torch
from torch import nn

SEED = 32          # the claim's number
B, T, D, H = 2, 5, 16, 4
D_FF = 4 * D
LN_ROWS = 6

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "golden")

written = []  # (file name, shape, meaning) for VERSION.txt


def save(name, tensor, meaning):
    a = tensor.detach().cpu().numpy() if isinstance(tensor, torch.Tensor) else tensor
    a = np.ascontiguousarray(a, dtype="<f4")
    np.save(os.path.join(OUT, name + ".npy"), a)
    written.append((name + ".npy", a.shape, meaning))


def randomise(module, std):
    """Every parameter N(0, std²), LayerNorm gains 1 + N(0, 0.1²)."""
    with torch.no_grad():
        for pname, p in module.named_parameters():
            if "norm" in pname and pname.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(std * torch.randn_like(p))


def causal_mask(t):
    """PyTorch's boolean attention mask: True = may NOT attend (the opposite of attn::Mask's keep)."""
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)


def main():
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # one summation order
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))

    # (a) nn.MultiheadAttention, self-attention q = k = v = x
    mha = nn.MultiheadAttention(D, H, bias=True, batch_first=True, dtype=torch.float32)
    randomise(mha, 0.3)  # a larger scale than nn's default: attention far from uniform
    mha.eval()
    x = torch.randn(B, T, D)
    save("mha_x", x, "(B, T, d) input; query = key = value = x")
    save("mha_in_proj_weight", mha.in_proj_weight, "(3d, d) rows [0,d) W_q, [d,2d) W_k, [2d,3d) W_v; q = x W_qᵀ + b_q")
    save("mha_in_proj_bias", mha.in_proj_bias, "(3d,) b_q, b_k, b_v")
    save("mha_out_proj_weight", mha.out_proj.weight, "(d, d) W_o; out = heads W_oᵀ + b_o")
    save("mha_out_proj_bias", mha.out_proj.bias, "(d,) b_o")
    with torch.no_grad():
        for tag, mask in (("full", None), ("causal", causal_mask(T))):
            out, w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
            what = "no mask" if mask is None else "causal boolean attn_mask"
            save(f"mha_{tag}_out", out, f"(B, T, d) output, {what}")
            save(f"mha_{tag}_weights", w.reshape(B * H, T, T),
                 f"(B·h, T, T) each head's attention weights, {what} (torch's (B, h, T, T) reshaped)")

    # (b) a pre-norm Transformer block, GPT-2's shape, causal
    layer = nn.TransformerEncoderLayer(D, H, dim_feedforward=D_FF, dropout=0.0, activation="gelu",
                                       layer_norm_eps=1e-5, batch_first=True, norm_first=True,
                                       dtype=torch.float32)
    randomise(layer, 0.2)
    layer.eval()
    x = torch.randn(B, T, D)
    with torch.no_grad():
        y = layer(x, src_mask=causal_mask(T))
        # The same block written out, to be sure of what the layer computes before it becomes a golden.
        n1 = layer.norm1(x)
        a = x + layer.self_attn(n1, n1, n1, attn_mask=causal_mask(T), need_weights=False)[0]
        y_by_hand = a + layer.linear2(nn.functional.gelu(layer.linear1(layer.norm2(a))))
        gap = (y - y_by_hand).abs().max().item()
        assert gap < 1e-5, f"TransformerEncoderLayer is not the pre-norm block written out: {gap}"
    save("block_x", x, "(B, T, d) input of the block")
    save("block_ln1_weight", layer.norm1.weight, "(d,) norm1 gain (LN_1, before attention)")
    save("block_ln1_bias", layer.norm1.bias, "(d,) norm1 bias")
    save("block_in_proj_weight", layer.self_attn.in_proj_weight, "(3d, d) W_q, W_k, W_v stacked, (out, in)")
    save("block_in_proj_bias", layer.self_attn.in_proj_bias, "(3d,) b_q, b_k, b_v")
    save("block_out_proj_weight", layer.self_attn.out_proj.weight, "(d, d) W_o, (out, in)")
    save("block_out_proj_bias", layer.self_attn.out_proj.bias, "(d,) b_o")
    save("block_ln2_weight", layer.norm2.weight, "(d,) norm2 gain (LN_2, before the FFN)")
    save("block_ln2_bias", layer.norm2.bias, "(d,) norm2 bias")
    save("block_linear1_weight", layer.linear1.weight, "(d_ff, d) W_1, (out, in)")
    save("block_linear1_bias", layer.linear1.bias, "(d_ff,) b_1")
    save("block_linear2_weight", layer.linear2.weight, "(d, d_ff) W_2, (out, in)")
    save("block_linear2_bias", layer.linear2.bias, "(d,) b_2")
    save("block_y", y, "(B, T, d) output: a = x + MHA(LN_1(x)) causal, y = a + W_2 gelu(LN_2(a) W_1 + b_1) + b_2")

    # (c) nn.LayerNorm on rows far from mean 0 and variance 1
    ln = nn.LayerNorm(D, eps=1e-5, dtype=torch.float32)
    randomise(ln, 0.5)
    with torch.no_grad():
        ln.weight.copy_(1.0 + 0.5 * torch.randn(D))
    offsets = torch.tensor([0.0, 3.0, -100.0, 0.0, 1000.0, 0.5]).unsqueeze(1)
    scales = torch.tensor([1.0, 5.0, 0.01, 100.0, 1.0, 1e-3]).unsqueeze(1)
    x = offsets + scales * torch.randn(LN_ROWS, D)
    with torch.no_grad():
        y = ln(x)
    save("ln_x", x, "(N, d) rows with offsets (0, 3, -100, 0, 1000, 0.5) and scales (1, 5, 0.01, 100, 1, 1e-3)")
    save("ln_weight", ln.weight, "(d,) gain")
    save("ln_bias", ln.bias, "(d,) bias")
    save("ln_y", y, "(N, d) nn.LayerNorm(d, eps=1e-5) output (its statistics in fp32)")
    # The same LayerNorm in float64 from the same fp32 inputs, rounded once to fp32. On rows whose mean is
    # far from 0 in units of their spread, torch's fp32 mean and variance lose digits (|y − exact| up to
    # ~u·|mean|/σ·|gain|, u = 2^-24) and this is the reference that our double-precision statistics meet.
    x64, w64, b64 = (t.detach().numpy().astype(np.float64) for t in (x, ln.weight, ln.bias))
    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    save("ln_y_exact", (x64 - mean) / np.sqrt(var + 1e-5) * w64 + b64,
         "(N, d) the same LayerNorm computed in float64 by NumPy, rounded to fp32")

    # Files the .npy reader's tests read: written by NumPy itself, not by our writer.
    a = np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1.0
    np.save(os.path.join(OUT, "npy_c_order_f4.npy"), a)
    written.append(("npy_c_order_f4.npy", a.shape, "(2, 3) arange(6)·0.5 − 1, C order, '<f4' (reader test)"))
    np.save(os.path.join(OUT, "npy_f8.npy"), a.astype("<f8"))
    written.append(("npy_f8.npy", a.shape, "(2, 3) the same values as '<f8' (reader must refuse the dtype)"))
    np.save(os.path.join(OUT, "npy_fortran_f4.npy"), np.asfortranarray(a))
    written.append(("npy_fortran_f4.npy", a.shape, "(2, 3) the same values, fortran_order True (reader must refuse)"))

    total = sum(os.path.getsize(os.path.join(OUT, f)) for f, _, _ in written)
    with open(os.path.join(OUT, "VERSION.txt"), "w", encoding="utf-8") as f:
        f.write("Golden files for claim C32 (tests/chapters/test_c32_pytorch.cpp) and the .npy reader's tests.\n")
        f.write("script: tools/make_goldens.py (run: /usr/bin/python3 tools/make_goldens.py)\n")
        f.write(f"torch: {torch.__version__}\n")
        f.write(f"numpy: {np.__version__}\n")
        f.write(f"python: {sys.version.split()[0]}\n")
        f.write(f"seed: torch.manual_seed({SEED})\n")
        f.write(f"date: {datetime.date.today().isoformat()}\n")
        f.write(f"sizes: B = {B}, T = {T}, d = {D}, h = {H}, d_head = {D // H}, d_ff = {D_FF}\n")
        f.write("dtype: every file is '<f4' (little-endian float32), C order, unless said otherwise\n")
        f.write("conventions: PyTorch's. A weight is (out, in) and y = x Wᵀ + b; masks are causal booleans,\n"
                "True = may not attend; LayerNorm eps = 1e-5; GELU exact (erf); modules in eval() mode,\n"
                "computed under torch.no_grad() on one CPU thread.\n")
        f.write(f"total: {len(written)} files, {total} bytes\n\n")
        width = max(len(n) for n, _, _ in written)
        for name, shape, meaning in written:
            f.write(f"{name:<{width}}  {str(tuple(shape)):<10}  {meaning}\n")
    print(f"wrote {len(written)} files ({total} bytes) and VERSION.txt to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
