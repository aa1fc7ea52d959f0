// The reference engine (common/reference/) against the fast one (attn::fast::Model): the same weights for a seed, the
// same loss, logits and gradients up to fp32 rounding, on every variant a program builds; its own backward
// against finite differences; and its multi-head attention against tests/spec.hpp's Definition 9.1, the
// double-precision loops the whole chain of checks starts from (spec → reference → fast).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>

#include "../spec.hpp"
#include "core/rng.hpp"
#include "fast/model.hpp"
#include "math/gradcheck.hpp"
#include "reference/attention.hpp"
#include "reference/matmul.hpp"
#include "reference/model.hpp"
#include "train/engine.hpp"
#include "train/optim.hpp"

using namespace attn;

namespace {
struct Variant {
    std::string name;
    ModelConfig config;
};

// Every kind of model the programs train: the ladder's rungs, post-norm, the position schemes, the ablations.
std::vector<Variant> variants() {
    const std::size_t V = 11, T = 9;
    ModelConfig gpt2 = gpt2_config({.vocab = V, .max_T = T, .d_model = 16, .n_heads = 2, .n_layers = 2});
    return {
        {"no context", {.vocab = V, .max_T = T, .d_model = 8, .mixer = Mixer::none, .positions = Positions::none}},
        {"uniform average", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 1, .mixer = Mixer::uniform, .residual = false, .positions = Positions::none}},
        {"uniform + positions + residual", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 1, .mixer = Mixer::uniform}},
        {"one head replacing, no W_o", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 1, .residual = false, .output_projection = false}},
        {"4 heads with b_o", {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 4, .output_bias = true}},
        {"+ FFN", {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 4, .d_ff = 32, .output_bias = true}},
        {"+ LayerNorm (pre), the chapter's block", {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 4, .d_ff = 32, .norm = Norm::pre, .output_bias = true}},
        {"pre-norm, uniform mixer", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .mixer = Mixer::uniform, .d_ff = 16, .norm = Norm::pre}},
        {"post-norm, 2 blocks, biases, sinusoidal", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .n_layers = 2, .d_ff = 16, .norm = Norm::post, .positions = Positions::sinusoidal, .biases = true}},
        {"post-norm without residual", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .residual = false, .d_ff = 16, .norm = Norm::post}},
        {"RoPE", {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 2, .d_ff = 32, .norm = Norm::pre, .positions = Positions::rope}},
        {"ALiBi", {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 4, .d_ff = 32, .norm = Norm::pre, .positions = Positions::alibi}},
        {"no 1/√d_k, d_k 6, pytorch init", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .d_k = 6, .scale = false, .init = Init::pytorch}},
        {"no causal mask", {.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .d_ff = 16, .norm = Norm::pre, .causal = false}},
        {"GPT-2 shape, 2 blocks, tied readout", gpt2},
    };
}

struct Batch {
    std::vector<int> tokens, targets;
    std::size_t B = 3, T = 7;
};
Batch batch(std::size_t vocab, std::uint64_t seed) {
    Rng rng(seed);
    Batch b;
    for (std::size_t n = 0; n < b.B * b.T; ++n) b.tokens.push_back(static_cast<int>(rng.below(vocab)));
    for (std::size_t n = 0; n < b.B * b.T; ++n) b.targets.push_back(n % 5 == 4 ? -1 : static_cast<int>(rng.below(vocab)));  // some rows not scored
    return b;
}

// The largest |a − b| over a tensor, against the tensor's largest |b|, or against `floor` when that is larger.
template <class Tensor>
double relative_gap(const Tensor& a, const Tensor& b, double floor = 0) {
    double gap = 0, scale = floor;
    for (std::size_t i = 0; i < a.size(); ++i) {
        gap = std::max(gap, std::abs(static_cast<double>(a.data()[i]) - b.data()[i]));
        scale = std::max(scale, std::abs(static_cast<double>(b.data()[i])));
    }
    return scale > 0 ? gap / scale : gap;
}

// The engines add the same fp32 terms in other orders (BLAS blocks against one product per head, LayerNorm's
// sums in double against float): each sum of K terms may round differently by about K · 2⁻²⁴ of its scale, and
// K is at most a few dozen here. Measured over these variants and seeds 0–4, the largest gap is 4.9e-7 for
// logits, 3.0e-7 for attention weights and 6.2e-5 for gradients (a gradient is a difference of nearly equal
// sums); each bound is about 10 times its measured gap. A real mistake is far above: dropping 1/√d_k moves the
// weights by 0.49 (the third test).
constexpr double kLogitsTol = 5e-6, kGradTol = 6e-4;
}  // namespace

TEST_CASE("the reference engine makes the fast engine's parameters: names, shapes and values", "[reference]") {
    for (const Variant& v : variants()) {
        INFO(v.name);
        fast::Model fast(v.config, 3);
        reference::Model plain(v.config, 3);
        const auto &a = fast.params().all(), &b = plain.params().all();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            INFO(a[i].name);
            CHECK(a[i].name == b[i].name);
            CHECK(a[i].decay == b[i].decay);
            REQUIRE(a[i].value.shape() == b[i].value.shape());
            CHECK(a[i].value == b[i].value);
        }
    }
}

TEST_CASE("a model of shapes only has the drawn model's parameters, names and shapes, and refuses to run", "[reference]") {
    for (const Variant& v : variants()) {
        INFO(v.name);
        reference::Model drawn(v.config, 3), counted(v.config, 3, reference::Weights::shapes_only);
        const auto &a = drawn.params().all(), &b = counted.params().all();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            INFO(a[i].name);
            CHECK(a[i].name == b[i].name);
            CHECK(a[i].decay == b[i].decay);
            CHECK(a[i].value.shape() == b[i].value.shape());
            CHECK(a[i].grad.shape() == b[i].grad.shape());
        }
        CHECK(counted.params().count() == drawn.params().count());
        CHECK(counted.params().is_shapes_only());
        CHECK_FALSE(drawn.params().is_shapes_only());
        const Batch b2 = batch(v.config.vocab, 5);
        CHECK_THROWS_WITH(counted.forward(b2.tokens, b2.targets, b2.B, b2.T),
                          "reference::Model::forward: this model was built with Weights::shapes_only, to be counted: it has no weights to run");
        CHECK_THROWS_WITH(counted.backward(), Catch::Contains("reference::Model::backward: this model was built with Weights::shapes_only"));
        CHECK_THROWS_WITH(counted.block_grad_norm(0), Catch::Contains("built with Weights::shapes_only"));
        CHECK_THROWS_WITH(AdamW(counted.params(), {}), Catch::Contains("AdamW: these parameters were made by Parameters::shapes_only"));
        CHECK_THROWS_WITH(copy_weights(counted, drawn), Catch::Contains("copy_weights: the model to copy from was built with shapes only"));
    }
}

TEST_CASE("the reference engine computes the fast engine's loss, logits and gradients up to fp32 rounding", "[reference]") {
    for (std::uint64_t seed = 0; seed < 5; ++seed)
        for (const Variant& v : variants()) {
            INFO(v.name << ", seed " << seed);
            fast::Model fast(v.config, seed);
            reference::Model plain(v.config, seed);
            const Batch data = batch(v.config.vocab, seed + 100);
            const double loss_fast = fast.forward(data.tokens, data.targets, data.B, data.T);
            const double loss_plain = plain.forward(data.tokens, data.targets, data.B, data.T);
            CHECK(std::abs(loss_fast - loss_plain) <= kLogitsTol * std::abs(loss_fast));
            CHECK(relative_gap(plain.logits(), fast.logits()) <= kLogitsTol);
            if (v.config.mixer != Mixer::none) CHECK(relative_gap(plain.attention_weights(0), fast.attention_weights(0)) <= kLogitsTol);
            fast.zero_grad(), plain.zero_grad();
            fast.backward(), plain.backward();
            const auto &a = fast.params().all(), &b = plain.params().all();
            // b_k's true gradient is 0 (softmax ignores what adds the same to a whole row of scores): both engines
            // leave rounding noise there, so a tensor's gap is measured against at least 1e-3 of the largest gradient
            double largest = 0;
            for (const Param& p : a) largest = std::max(largest, static_cast<double>(xt::amax(xt::abs(p.grad))()));
            for (std::size_t i = 0; i < a.size(); ++i) {
                INFO(a[i].name << ": gap " << relative_gap(b[i].grad, a[i].grad, 1e-3 * largest));
                CHECK(relative_gap(b[i].grad, a[i].grad, 1e-3 * largest) <= kGradTol);
            }
        }
}

TEST_CASE("the comparison catches a real difference: the engines disagree when one drops 1/√d_k", "[reference]") {
    ModelConfig c{.vocab = 11, .max_T = 9, .d_model = 16, .n_heads = 1, .d_ff = 32, .norm = Norm::pre};
    fast::Model fast(c, 1);
    c.scale = false;
    reference::Model plain(c, 1);
    const Batch data = batch(c.vocab, 7);
    fast.forward(data.tokens, data.targets, data.B, data.T);
    plain.forward(data.tokens, data.targets, data.B, data.T);
    CHECK(relative_gap(plain.attention_weights(0), fast.attention_weights(0)) > 100 * kLogitsTol);
}

TEST_CASE("the reference engine's backward passes the gradient check on every variant", "[reference][gradcheck]") {
    // the whole model under its mean cross-entropy: test_gradcheck.cpp's model bound (5e-2), for the same reason
    for (const Variant& v : variants()) {
        INFO(v.name);
        reference::Model plain(v.config, 2);
        const Batch data = batch(v.config.vocab, 5);
        plain.zero_grad();
        plain.forward(data.tokens, data.targets, data.B, data.T);
        plain.backward();
        const GradCheck g = gradcheck(plain.params(), [&] { return plain.forward(data.tokens, data.targets, data.B, data.T); }, 1e-2, 16);
        INFO(g.worst);
        CHECK(g.max_rel_error < 5e-2);
    }
}

TEST_CASE("30 AdamW steps on either engine give the same losses up to fp32 rounding", "[reference][train]") {
    const ModelConfig c{.vocab = 11, .max_T = 9, .d_model = 16, .n_heads = 4, .d_ff = 32, .norm = Norm::pre, .output_bias = true};
    fast::Model fast(c, 4);
    reference::Model plain(c, 4);
    AdamW opt_fast(fast.params(), {.lr = 3e-3f}), opt_plain(plain.params(), {.lr = 3e-3f});
    const Batch data = batch(c.vocab, 9);
    for (int step = 0; step < 30; ++step) {
        fast.zero_grad(), plain.zero_grad();
        const double a = fast.forward(data.tokens, data.targets, data.B, data.T);
        const double b = plain.forward(data.tokens, data.targets, data.B, data.T);
        INFO("step " << step << ": fast " << a << ", reference " << b);
        CHECK(std::abs(a - b) <= 1e-6 * std::abs(a));  // the rounding gaps compound over the steps: measured 7.8e-8
        fast.backward(), plain.backward();
        fast.update(opt_fast, 1.0), plain.update(opt_plain, 1.0);
    }
}

TEST_CASE("make_cpu_model builds the engine it is asked for, and as_reference_model carries a fast model's weights over",
          "[reference][engine]") {
    const ModelConfig c{.vocab = 11, .max_T = 9, .d_model = 16, .n_heads = 2, .d_ff = 32, .norm = Norm::pre};
    std::unique_ptr<LanguageModel> plain = make_cpu_model(c, 5, Engine::reference);
    CHECK(dynamic_cast<reference::Model*>(plain.get()) != nullptr);
    CHECK(dynamic_cast<fast::Model*>(make_cpu_model(c, 5, Engine::fast).get()) != nullptr);
    CHECK(engine_for("reference") == Engine::reference);
    CHECK(engine_for("fast") == Engine::fast);
    CHECK_THROWS_WITH(engine_for("turbo"), Catch::Contains("'turbo' is neither reference nor fast"));
    std::unique_ptr<LanguageModel> fast = make_cpu_model(c, 5, Engine::fast);
    for (Param& p : fast->params().all()) p.value += 0.25f;  // as if trained
    const Batch data = batch(c.vocab, 3);
    const double loss = fast->forward(data.tokens, data.targets, data.B, data.T);
    const std::unique_ptr<reference::Model> read = as_reference_model(std::move(fast), c);
    CHECK(std::abs(read->forward(data.tokens, data.targets, data.B, data.T) - loss) <= kLogitsTol * loss);
    const reference::Model* same = dynamic_cast<reference::Model*>(plain.get());
    CHECK(as_reference_model(std::move(plain), c).get() == same);  // a reference model is itself: nothing copied
}

TEST_CASE("SelfAttention takes d_k = 0 as d_model / n_heads, and refuses heads that do not divide the width", "[reference]") {
    Parameters params;
    Rng rng(1);
    reference::SelfAttention attention(params, "", {.d_model = 8, .n_heads = 2}, Init::fan_in, rng);
    CHECK(params["W_q"].value.shape(1) == 8u);  // 2 heads of d_k = 4
    const Mat y = attention.forward(rng.normal_mat(6, 8), 3);
    CHECK(xt::all(xt::isfinite(y)));
    Parameters other;
    CHECK_THROWS_WITH(reference::SelfAttention(other, "", {.d_model = 8, .n_heads = 3}, Init::fan_in, rng),
                      Catch::Contains("d_model = 8 is not divisible by n_heads = 3"));
}

TEST_CASE("the reference SelfAttention is Definition 9.1 head by head: spec::attention on each head's slice, then W_o",
          "[reference][spec]") {
    // The chain of checks starts here: spec.hpp's plain loops in double (one query at a time) hold the reference
    // engine, which holds the fast one (the tests above). 2 sequences of 6 tokens, 3 heads of 4, biases on.
    const std::size_t B = 2, T = 6, h = 3, d = 12, d_head = d / h;
    Parameters params;
    Rng rng(17);
    const AttentionConfig config{.d_model = d, .n_heads = h, .biases = true};
    reference::SelfAttention attention(params, "attn.", config, Init::fan_in, rng);
    for (Param& p : params.all()) p.value += rng.normal_mat(p.value.shape(0), p.value.shape(1)) * 0.1f;  // biases non-zero
    const Mat x = rng.normal_mat(B * T, d);
    const Mat y = attention.forward(x, T);  // (B·T, d)

    auto with_bias = [&](const std::string& w, const std::string& b) {
        Mat out = spec::matmul(x, params[w].value);
        for (std::size_t r = 0; r < out.shape(0); ++r)
            for (std::size_t c = 0; c < out.shape(1); ++c) out(r, c) += params[b].value(0, c);
        return out;
    };
    const Mat q = with_bias("attn.W_q", "attn.b_q"), k = with_bias("attn.W_k", "attn.b_k"), v = with_bias("attn.W_v", "attn.b_v");
    Mat merged = xt::zeros<float>({B * T, d});  // (B·T, d): each sequence's heads side by side
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t head = 0; head < h; ++head) {
            auto slice = [&](const Mat& m) {  // (T, d_head): sequence b, head `head`
                return Mat(xt::view(m, xt::range(b * T, (b + 1) * T), xt::range(head * d_head, (head + 1) * d_head)));
            };
            const Mat out = spec::attention(slice(q), slice(k), slice(v), /*causal=*/true);
            xt::view(merged, xt::range(b * T, (b + 1) * T), xt::range(head * d_head, (head + 1) * d_head)) = out;
        }
    Mat expect = spec::matmul(merged, params["attn.W_o"].value);
    for (std::size_t r = 0; r < expect.shape(0); ++r)
        for (std::size_t c = 0; c < d; ++c) expect(r, c) += params["attn.b_o"].value(0, c);
    // fp32 against double in sums of at most 12 terms: a few ulps of values of order 1.
    const double gap = relative_gap(y, expect);
    INFO("largest gap " << gap << " of the largest |y|");
    CHECK(gap < 1e-5);
    // and the weights it keeps are Definition 9.1's: rows sum to 1, the future is exactly 0
    const Tensor3& w = attention.weights();  // (B·h, T, T)
    REQUIRE(w.shape(0) == B * h);
    for (std::size_t bh = 0; bh < B * h; ++bh)
        for (std::size_t t = 0; t < T; ++t) {
            double sum = 0;
            for (std::size_t j = 0; j < T; ++j) sum += w(bh, t, j);
            CHECK(sum == Approx(1.0).margin(1e-6));
            for (std::size_t j = t + 1; j < T; ++j) CHECK(w(bh, t, j) == 0.0f);
        }
}

TEST_CASE("reference matmul: a transposed factor read in place gives xt::linalg::dot's bits, and a shape mismatch names both",
          "[reference][bits]") {
    Rng rng(7, 1);
    const Mat a = rng.normal_mat(37, 19), b = rng.normal_mat(37, 23), c = rng.normal_mat(23, 19), d = rng.normal_mat(29, 23);
    // xt::linalg::dot on a transposed view copies it before the product; matmul passes SGEMM a transpose flag on the
    // stored matrix instead: the same bits
    const Mat atb = xt::linalg::dot(xt::transpose(a), b), bdt = xt::linalg::dot(b, xt::transpose(d));
    const Mat ab = xt::linalg::dot(b, c);
    CHECK(bool(reference::matmul(reference::transposed(a), b) == atb));
    CHECK(bool(reference::matmul(b, reference::transposed(d)) == bdt));
    CHECK(bool(reference::matmul(b, c) == ab));
    CHECK(bool(reference::matmul(reference::transposed(c), reference::transposed(b)) == Mat(xt::linalg::dot(xt::transpose(c), xt::transpose(b)))));
    CHECK_THROWS_WITH(reference::matmul(a, b), "matmul: a (37, 19) times b (37, 23): a's columns must be b's rows");
    CHECK_THROWS_WITH(reference::matmul(a, reference::transposed(b)),
                      "matmul: a (37, 19) times b transposed (37, 23): a's columns must be b's rows");
}
