// The pre-norm block forward on the GPU, composed from ops.hpp (see block.hpp for the steps).
#include "block.hpp"

#include <string>

#include "core/error.hpp"
#include "ops.hpp"

namespace attn::gpu {

namespace {
// (Re)allocate buf to n floats unless it already has that size, and fill it with NaN: whatever a kernel
// leaves unwritten then reads NaN, never the previous forward's numbers (another version's, say).
void ensure(DeviceBuffer& buf, std::size_t n, const std::string& what) {
    if (buf.size() != n) buf = DeviceBuffer(n, what);
    buf.poison();
}

void check_size(const DeviceBuffer& buf, std::size_t rows, std::size_t cols, const char* name) {
    require(buf.size() == rows * cols, "gpu::block_forward",
            std::string(name) + " holds " + std::to_string(buf.size()) + " floats, not (" + std::to_string(rows) + ", " +
                std::to_string(cols) + ")");
}
}  // namespace

void check_block_dims(const BlockDims& dims, AttentionVersion version) {
    require(dims.d_model > 0 && dims.n_heads > 0 && dims.d_ff > 0, "gpu::block_forward",
            "d_model, n_heads, d_ff = " + std::to_string(dims.d_model) + ", " + std::to_string(dims.n_heads) + ", " +
                std::to_string(dims.d_ff) + " must be positive");
    require(dims.d_model % dims.n_heads == 0, "gpu::block_forward",
            "d_model = " + std::to_string(dims.d_model) + " is not divisible by n_heads = " + std::to_string(dims.n_heads));
    if (version != AttentionVersion::v2)
        require(dims.d_head() <= kMaxDHead, "gpu::block_forward",
                "d_head = " + std::to_string(dims.d_head()) + " exceeds " + std::to_string(kMaxDHead) + " for attention " +
                    version_name(version) + " (v2 takes any d_head)");
}

void block_forward(const BlockWeights& w, const BlockDims& dims, const float* x, int B, int T, AttentionVersion version,
                   BlockActivations& act) {
    check_block_dims(dims, version);
    require(B > 0 && T > 0, "gpu::block_forward", "B = " + std::to_string(B) + ", T = " + std::to_string(T) + " must be positive");
    const int d = dims.d_model, h = dims.n_heads, dh = dims.d_head(), ff = dims.d_ff;
    const int N = B * T;
    const std::size_t Nd = static_cast<std::size_t>(N) * d, Nff = static_cast<std::size_t>(N) * ff;
    const std::size_t dd = static_cast<std::size_t>(d);
    check_size(w.ln1_gain, 1, dd, "ln1.gain"), check_size(w.ln1_bias, 1, dd, "ln1.bias");
    check_size(w.W_q, dd, dd, "W_q"), check_size(w.W_k, dd, dd, "W_k"), check_size(w.W_v, dd, dd, "W_v"), check_size(w.W_o, dd, dd, "W_o");
    check_size(w.b_q, 1, dd, "b_q"), check_size(w.b_k, 1, dd, "b_k"), check_size(w.b_v, 1, dd, "b_v"), check_size(w.b_o, 1, dd, "b_o");
    check_size(w.ln2_gain, 1, dd, "ln2.gain"), check_size(w.ln2_bias, 1, dd, "ln2.bias");
    check_size(w.W_1, dd, ff, "W_1"), check_size(w.b_1, 1, ff, "b_1"), check_size(w.W_2, ff, dd, "W_2"), check_size(w.b_2, 1, dd, "b_2");

    ensure(act.n1, Nd, "LN_1(x) (N, d)");
    ensure(act.q, Nd, "q (N, d)"), ensure(act.k, Nd, "k (N, d)"), ensure(act.v, Nd, "v (N, d)");
    ensure(act.q_heads, Nd, "q (B·h, T, d_head)"), ensure(act.k_heads, Nd, "k (B·h, T, d_head)");
    ensure(act.v_heads, Nd, "v (B·h, T, d_head)"), ensure(act.out_heads, Nd, "attention out (B·h, T, d_head)");
    ensure(act.mixed, Nd, "merged heads (N, d)"), ensure(act.a, Nd, "a (N, d)"), ensure(act.n2, Nd, "LN_2(a) (N, d)");
    ensure(act.pre_ff, Nff, "n2 W_1 + b_1 (N, d_ff)"), ensure(act.hidden, Nff, "gelu (N, d_ff)"), ensure(act.y, Nd, "y (N, d)");

    // --- attention sub-layer: a = x + MHA(LN_1(x)) ---------------------------------------------------------
    layernorm(x, w.ln1_gain.data(), w.ln1_bias.data(), act.n1.data(), N, d);
    linear(act.n1.data(), w.W_q.data(), w.b_q.data(), act.q.data(), N, d, d);
    linear(act.n1.data(), w.W_k.data(), w.b_k.data(), act.k.data(), N, d, d);
    linear(act.n1.data(), w.W_v.data(), w.b_v.data(), act.v.data(), N, d, d);
    split_heads(act.q.data(), act.q_heads.data(), B, T, h, dh);  // (N, d) → (B·h, T, d_head)
    split_heads(act.k.data(), act.k_heads.data(), B, T, h, dh);
    split_heads(act.v.data(), act.v_heads.data(), B, T, h, dh);
    attention(version, act.q_heads.data(), act.k_heads.data(), act.v_heads.data(), act.out_heads.data(), B * h, T, dh);
    merge_heads(act.out_heads.data(), act.mixed.data(), B, T, h, dh);  // (B·h, T, d_head) → (N, d)
    linear(act.mixed.data(), w.W_o.data(), w.b_o.data(), act.a.data(), N, d, d);
    residual_add(x, act.a.data(), act.a.data(), Nd);

    // --- FFN sub-layer: y = a + FFN(LN_2(a)) -----------------------------------------------------------------
    layernorm(act.a.data(), w.ln2_gain.data(), w.ln2_bias.data(), act.n2.data(), N, d);
    linear(act.n2.data(), w.W_1.data(), w.b_1.data(), act.pre_ff.data(), N, d, ff);
    gelu(act.pre_ff.data(), act.hidden.data(), Nff);
    linear(act.hidden.data(), w.W_2.data(), w.b_2.data(), act.y.data(), N, ff, d);
    residual_add(act.a.data(), act.y.data(), act.y.data(), Nd);
}

}  // namespace attn::gpu
