#include "reference/compose.hpp"

#include "reference/attention.hpp"
#include "reference/model.hpp"

namespace attn::reference {

namespace {
// One sub-layer f with its LayerNorm and its residual sum, placed as compose.hpp draws them.
std::unique_ptr<Layer> sublayer(std::unique_ptr<Layer> norm, std::unique_ptr<Layer> f, Norm where, bool residual) {
    auto inner = std::make_unique<Sequence>();
    if (norm && where == Norm::pre) inner->add(std::move(norm));
    inner->add(std::move(f));
    std::unique_ptr<Layer> body = std::move(inner);
    if (residual) body = std::make_unique<Residual>(std::move(body));
    if (!norm) return body;
    auto outer = std::make_unique<Sequence>();  // post-norm: the norm after the sum
    outer->add(std::move(body));
    outer->add(std::move(norm));
    return outer;
}
}  // namespace

std::string not_the_chapters_block(const ModelConfig& c) {
    std::string why;
    auto add = [&why](bool lacks, const std::string& what) { if (lacks) why += (why.empty() ? "" : ", ") + what; };
    add(c.mixer != Mixer::learned, c.mixer == Mixer::none ? "no attention (mixer = none)" : "a uniform average, not learned attention");
    add(c.d_ff == 0, "no FFN (d_ff = 0)");
    add(c.norm != Norm::pre, c.norm == Norm::post ? "post-norm" : "no LayerNorm (norm = none)");
    add(!c.residual, "no residual sums");
    return why;
}

std::unique_ptr<Layer> make_block(Parameters& params, const std::string& prefix, const ModelConfig& c, const AttentionConfig& a,
                                  Rng& rng, std::function<const Tensor3&()>& weights) {
    if (not_the_chapters_block(c).empty()) {
        auto block = std::make_unique<Block>(params, prefix, a, c.d_ff, c.init, rng);
        weights = [b = block.get()]() -> const Tensor3& { return b->attention().weights(); };
        return block;
    }
    auto block = std::make_unique<Sequence>();
    if (c.mixer != Mixer::none) {
        // pre-norm normalises only what learned attention reads: a per-token LayerNorm before the uniform
        // average would let word order leak into it
        std::unique_ptr<Layer> ln1;
        if (c.norm == Norm::post || (c.norm == Norm::pre && c.mixer == Mixer::learned)) ln1 = std::make_unique<LayerNorm>(params, prefix + "ln1", c.d_model);
        std::unique_ptr<Layer> mixer;
        if (c.mixer == Mixer::learned) {
            auto attention = std::make_unique<SelfAttention>(params, prefix, a, c.init, rng);
            weights = [m = attention.get()]() -> const Tensor3& { return m->weights(); };
            mixer = std::move(attention);
        } else {
            auto average = std::make_unique<UniformAverage>(params, prefix, a, c.init, rng);
            weights = [m = average.get()]() -> const Tensor3& { return m->weights(); };
            mixer = std::move(average);
        }
        block->add(sublayer(std::move(ln1), std::move(mixer), c.norm, c.residual));
    }
    if (c.d_ff > 0) {
        std::unique_ptr<Layer> ln2;
        if (c.norm != Norm::none) ln2 = std::make_unique<LayerNorm>(params, prefix + "ln2", c.d_model);
        auto ffn = std::make_unique<FeedForward>(params, prefix, c.d_model, c.d_ff, c.init, rng);
        block->add(sublayer(std::move(ln2), std::move(ffn), c.norm, c.residual));
    }
    return block;
}

}  // namespace attn::reference
