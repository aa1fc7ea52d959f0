// Each layer of the fast engine (attn::, common/fast/) against its twin of the same name in the reference engine
// (attn::reference::, common/reference/): the same parameters, the same input and output gradient; the same
// output, input gradient and parameter gradients up to fp32 rounding. The whole models are compared in
// test_reference.cpp; here a difference points at one layer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "fast/block.hpp"
#include "fast/layers.hpp"
#include "reference/attention.hpp"
#include "reference/layers.hpp"

using namespace attn;

namespace {
// The largest |a − b|, in units of the largest |b| (or of 1 when every |b| is smaller).
double gap(const Mat& a, const Mat& b) {
    REQUIRE(a.shape() == b.shape());
    double worst = 0, scale = 1e-30;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::fabs(static_cast<double>(a.data()[i]) - b.data()[i]));
        scale = std::max(scale, std::fabs(static_cast<double>(b.data()[i])));
    }
    return worst / std::max(scale, 1.0);
}

// Both engines add the same fp32 terms in other orders (blocked products and fused row passes against plain
// loops): a sum of K terms rounds differently by about K · 2⁻²⁴ of its scale, K ≤ 64 here, so 1e-5 of the
// largest entry; a wrong index, scale or mask is off by order 1.
constexpr double kTol = 1e-5;

// Every parameter of `from` copied into the same-named one of `to`, and a nudge so that no bias is 0 and no gain 1.
void same_values(Parameters& from, Parameters& to, Rng& rng) {
    for (Param& p : from.all()) p.value += rng.normal_mat(p.value.shape(0), p.value.shape(1)) * 0.1f;
    for (Param& p : from.all()) to[p.name].value = p.value;
}

void same_gradients(Parameters& fast, Parameters& ref) {
    REQUIRE(fast.all().size() == ref.all().size());
    for (Param& p : fast.all()) {
        INFO(p.name);
        CHECK(gap(p.grad, ref[p.name].grad) < kTol);
    }
}
}  // namespace

TEST_CASE("twins: linear_forward / _backward and reference::Linear", "[twins]") {
    Rng rng(1);
    Parameters ref_params, fast_params;
    reference::Linear ref(ref_params, "W", "b", 24, 10, 0.3f, rng);
    fast_params.normal("W", 24, 10, 0.3f, rng);
    fast_params.zeros("b", 1, 10);
    same_values(ref_params, fast_params, rng);
    const Mat x = rng.normal_mat(15, 24), dy = rng.normal_mat(15, 10);
    CHECK(gap(fast::linear_forward(x, fast_params["W"], &fast_params["b"]), ref.forward(x, 5)) < kTol);
    CHECK(gap(fast::linear_backward(x, dy, fast_params["W"], &fast_params["b"]), ref.backward(dy)) < kTol);
    same_gradients(fast_params, ref_params);
}

TEST_CASE("twins: gelu_forward / gelu_backward and reference::Gelu", "[twins]") {
    Rng rng(2);
    reference::Gelu ref;
    const Mat x = rng.normal_mat(9, 33) * 3.0f, dy = rng.normal_mat(9, 33);
    CHECK(gap(fast::gelu_forward(x), ref.forward(x, 3)) < kTol);
    CHECK(gap(fast::gelu_backward(x, dy), ref.backward(dy)) < kTol);
}

TEST_CASE("twins: LayerNorm and reference::LayerNorm", "[twins]") {
    Rng rng(3);
    Parameters ref_params, fast_params;
    reference::LayerNorm ref(ref_params, "ln", 40);
    fast::LayerNorm fast(fast_params, "ln", 40);
    same_values(ref_params, fast_params, rng);
    const Mat x = rng.normal_mat(14, 40) * 2.0f + 1.0f, dy = rng.normal_mat(14, 40);
    CHECK(gap(fast.forward(x), ref.forward(x, 7)) < kTol);
    CHECK(gap(fast.backward(dy), ref.backward(dy)) < kTol);
    same_gradients(fast_params, ref_params);
}

TEST_CASE("twins: FeedForward and reference::FeedForward", "[twins]") {
    Rng fast_rng(4), ref_rng(4), rng(5);
    Parameters ref_params, fast_params;
    reference::FeedForward ref(ref_params, "ffn.", 16, 64, Init::fan_in, ref_rng);
    fast::FeedForward fast(fast_params, "ffn.", 16, 64, Init::fan_in, fast_rng);
    same_values(ref_params, fast_params, rng);
    const Mat x = rng.normal_mat(12, 16), dy = rng.normal_mat(12, 16);
    CHECK(gap(fast.forward(x), ref.forward(x, 6)) < kTol);
    CHECK(gap(fast.backward(dy), ref.backward(dy)) < kTol);
    same_gradients(fast_params, ref_params);
}

TEST_CASE("twins: MultiHeadAttention and reference::SelfAttention, every option the programs use", "[twins]") {
    const std::size_t B = 2, T = 9, d = 16;
    const std::vector<std::pair<std::string, AttentionConfig>> configs = {
        {"4 heads, W_o", {.d_model = d, .n_heads = 4}},
        {"biases", {.d_model = d, .n_heads = 2, .biases = true}},
        {"no 1/sqrt(d_k), d_k 6", {.d_model = d, .n_heads = 2, .d_k = 6, .scale = false}},
        {"no mask", {.d_model = d, .n_heads = 4, .causal = false}},
        {"RoPE", {.d_model = d, .n_heads = 2, .positions = Positions::rope}},
        {"ALiBi", {.d_model = d, .n_heads = 4, .positions = Positions::alibi}},
        {"one head, no W_o", {.d_model = d, .n_heads = 1, .output_projection = false}},
    };
    for (const auto& [name, config] : configs) {
        INFO(name);
        Rng fast_rng(6), ref_rng(6), rng(7);
        Parameters ref_params, fast_params;
        reference::SelfAttention ref(ref_params, "attn.", config, Init::fan_in, ref_rng);
        fast::MultiHeadAttention fast(fast_params, "attn.", config, Init::fan_in, fast_rng);
        same_values(ref_params, fast_params, rng);
        const Mat x = rng.normal_mat(B * T, d), dy = rng.normal_mat(B * T, d);
        CHECK(gap(fast.forward(x, B, T), ref.forward(x, T)) < kTol);
        for (std::size_t i = 0; i < ref.weights().size(); ++i)
            REQUIRE(std::fabs(fast.cache().weights.data()[i] - ref.weights().data()[i]) < kTol);
        CHECK(gap(fast.backward(dy), ref.backward(dy)) < kTol);
        same_gradients(fast_params, ref_params);
    }
}

TEST_CASE("twins: cross_entropy_forward / _backward and reference::CrossEntropy", "[twins]") {
    Rng rng(8);
    const Mat logits = rng.normal_mat(11, 29) * 4.0f;
    std::vector<int> targets;
    for (std::size_t n = 0; n < 11; ++n) targets.push_back(n % 4 == 3 ? -1 : static_cast<int>(rng.below(29)));
    reference::CrossEntropy ref;
    const double ref_loss = ref.forward(logits, targets);
    const fast::CrossEntropy fast = fast::cross_entropy_forward(logits, targets);
    CHECK(fast.loss == Approx(ref_loss).epsilon(1e-6));
    CHECK(gap(fast::cross_entropy_backward(fast, targets), ref.backward()) < kTol);
}
