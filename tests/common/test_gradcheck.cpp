// Every backward in the library against central finite differences, on random shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/rng.hpp"
#include "fast/layers.hpp"
#include "fast/matmul.hpp"
#include "fast/model.hpp"
#include "fast/multi_head.hpp"
#include "math/gradcheck.hpp"
#include "math/positions.hpp"

using namespace attn;

namespace {
// A fixed random projection of the output makes a scalar loss with O(1) gradients everywhere:
// L = Σ y ⊙ R, so dL/dy = R.
double project(const Mat& y, const Mat& R) {
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y.data()[i]) * R.data()[i];
    return s;
}
// fp32 forward passes, h = 1e-2: a correct backward lands at ≤ 1e-3; a 1 % error in one gradient
// tensor lands near 1e-2 (the last test shows it caught).
// Layers are checked under a random projection, which gives O(1) gradients: 5e-3 resolves a 1 % error
// in a formula. The whole model is checked under its mean cross-entropy, whose gradients (~1e-4 to 1e-3
// for W_q, W_k) sit only ~100x above fp32's noise: 5e-2 there guards the wiring (a dropped residual or
// LayerNorm branch is off by 30 % or more), while the formulas are held to 5e-3 layer by layer.
constexpr double kTol = 5e-3;
constexpr double kModelTol = 5e-2;
}  // namespace

TEST_CASE("linear_backward (with and without bias) passes the gradient check", "[gradcheck][linear]") {
    Rng rng(1);
    for (int trial = 0; trial < 4; ++trial) {
        const std::size_t N = 1 + rng.below(6), in = 1 + rng.below(7), out = 1 + rng.below(5);
        for (bool bias : {true, false}) {
            Parameters p;
            Param& x = p.normal("x", N, in, 1.0f, rng);
            Param& W = p.normal("W", in, out, 1.0f, rng);
            Param* b = bias ? &p.normal("b", 1, out, 1.0f, rng) : nullptr;
            const Mat R = rng.normal_mat(N, out);
            auto loss = [&] { return project(fast::linear_forward(x.value, W, b), R); };
            p.zero_grad();
            x.grad = fast::linear_backward(x.value, R, W, b);
            const GradCheck g = gradcheck(p, loss);
            INFO(g.worst);
            CHECK(g.max_rel_error < kTol);
        }
    }
}

TEST_CASE("embedding_backward passes the gradient check", "[gradcheck][embedding]") {
    Rng rng(2);
    for (int trial = 0; trial < 3; ++trial) {
        const std::size_t V = 2 + rng.below(8), B = 1 + rng.below(3), T = 1 + rng.below(5), d = 1 + rng.below(6);
        Parameters p;
        Param& wte = p.normal("wte", V, d, 1.0f, rng);
        Param& wpe = p.normal("wpe", T, d, 1.0f, rng);
        std::vector<int> tokens(B * T);  // with few tokens in the vocabulary, some repeat
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        const Mat R = rng.normal_mat(B * T, d);
        auto loss = [&] { return project(fast::embedding_forward(tokens, T, wte, &wpe), R); };
        p.zero_grad();
        fast::embedding_backward(tokens, T, R, wte, &wpe);
        const GradCheck g = gradcheck(p, loss);
        INFO(g.worst);
        CHECK(g.max_rel_error < kTol);
    }
}

TEST_CASE("gelu_backward passes the gradient check", "[gradcheck][gelu]") {
    Rng rng(3);
    Parameters p;
    Param& x = p.normal("x", 1 + rng.below(6), 1 + rng.below(8), 2.0f, rng);
    const Mat R = rng.normal_mat(x.value.shape(0), x.value.shape(1));
    p.zero_grad();
    x.grad = fast::gelu_backward(x.value, R);
    const GradCheck g = gradcheck(p, [&] { return project(fast::gelu_forward(x.value), R); }, 1e-3, 30);
    INFO(g.worst);
    CHECK(g.max_rel_error < kTol);
}

TEST_CASE("layernorm_backward passes the gradient check", "[gradcheck][layernorm]") {
    Rng rng(9);
    for (int trial = 0; trial < 3; ++trial) {
        const std::size_t N = 1 + rng.below(5), d = 2 + rng.below(7);
        Parameters p;
        Param& x = p.normal("x", N, d, 2.0f, rng);
        Param& gain = p.normal("gain", 1, d, 1.0f, rng);
        Param& bias = p.normal("bias", 1, d, 1.0f, rng);
        const Mat R = rng.normal_mat(N, d);
        fast::LayerNormCache cache;
        p.zero_grad();
        fast::layernorm_forward(x.value, gain, bias, cache);
        x.grad = fast::layernorm_backward(R, cache, gain, bias);
        const GradCheck g = gradcheck(p, [&] {
            fast::LayerNormCache c;
            return project(fast::layernorm_forward(x.value, gain, bias, c), R);
        });
        INFO(g.worst);
        CHECK(g.max_rel_error < kTol);
    }
}

TEST_CASE("cross_entropy_backward passes the gradient check, ignoring rows with target -1", "[gradcheck][loss]") {
    Rng rng(4);
    Parameters p;
    Param& logits = p.normal("logits", 6, 5, 2.0f, rng);
    const std::vector<int> targets = {0, 4, -1, 2, 2, -1};
    p.zero_grad();
    logits.grad = fast::cross_entropy_backward(fast::cross_entropy_forward(logits.value, targets), targets);
    const GradCheck g = gradcheck(p, [&] { return fast::cross_entropy_forward(logits.value, targets).loss; }, 1e-2, 30);
    INFO(g.worst);
    CHECK(g.max_rel_error < kTol);
    for (std::size_t j = 0; j < 5; ++j) CHECK(logits.grad(2, j) == 0.0f);  // an ignored row gets no gradient
}

TEST_CASE("causal_attention_backward passes the gradient check for 1, 2 and 4 heads", "[gradcheck][attention]") {
    Rng rng(5);
    for (std::size_t heads : {1u, 2u, 4u}) {
        const std::size_t B = 2, T = 2 + rng.below(4), d = 4 * (1 + rng.below(2));
        Parameters p;
        Param& q = p.normal("q", B * T, d, 1.0f, rng);
        Param& k = p.normal("k", B * T, d, 1.0f, rng);
        Param& v = p.normal("v", B * T, d, 1.0f, rng);
        const Mat R = rng.normal_mat(B * T, d);
        fast::AttentionCache cache;
        auto loss = [&] {
            fast::AttentionCache c;
            return project(fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, c), R);
        };
        fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, cache);
        fast::causal_attention_backward(R, cache, B, T, heads, q.grad, k.grad, v.grad);
        const GradCheck g = gradcheck(p, loss, 1e-2, 40);
        INFO("heads " << heads << ": " << g.worst);
        CHECK(g.max_rel_error < kTol);
    }
}

TEST_CASE("causal_attention_backward passes the gradient check without the mask (causal = false)", "[gradcheck][attention]") {
    Rng rng(12);
    for (std::size_t heads : {1u, 2u, 4u}) {
        const std::size_t B = 2, T = 3 + rng.below(3), d = 4 * (1 + rng.below(2));
        Parameters p;
        Param& q = p.normal("q", B * T, d, 1.0f, rng);
        Param& k = p.normal("k", B * T, d, 1.0f, rng);
        Param& v = p.normal("v", B * T, d, 1.0f, rng);
        const Mat R = rng.normal_mat(B * T, d);
        // The forward really drops the mask: weights above the diagonal are nonzero, and every row
        // but each sequence's last differs from the causal forward (the last sees all T either way).
        fast::AttentionCache cache, causal_cache;
        const Mat out = fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, cache, {.causal = false});
        const Mat causal_out = fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, causal_cache);
        REQUIRE(cache.weights(0, 0, T - 1) > 0.0f);
        for (std::size_t b = 0; b < B; ++b) {
            const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(b * T), last = static_cast<std::ptrdiff_t>(b * T + T - 1);
            CHECK(xt::amax(xt::abs(xt::row(out, first) - xt::row(causal_out, first)))() > 1e-4f);
            CHECK(xt::amax(xt::abs(xt::row(out, last) - xt::row(causal_out, last)))() < 1e-5f);
        }
        auto loss = [&] {
            fast::AttentionCache c;
            return project(fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, c, {.causal = false}), R);
        };
        fast::causal_attention_backward(R, cache, B, T, heads, q.grad, k.grad, v.grad);
        const GradCheck g = gradcheck(p, loss, 1e-2, 40);
        INFO("heads " << heads << ": " << g.worst);
        CHECK(g.max_rel_error < kTol);
    }
    // Uniform and unmasked: every weight is 1/T.
    Rng r2(13);
    const Mat x = r2.normal_mat(2 * 4, 4);
    fast::AttentionCache cache;
    fast::causal_attention_forward(x, x, x, 2, 4, 2, cache, {.weights = fast::Weights::uniform, .causal = false});
    CHECK(xt::amax(xt::abs(cache.weights - 0.25f))() < 1e-7f);
}

// Far from uniform attention, so that W_q and W_k have gradients to check.
void sharpen(fast::Model& model) {
    for (auto& p : model.params().all())
        if (p.name.ends_with("W_q") || p.name.ends_with("W_k")) p.value *= 2.0f;
}

TEST_CASE("the model's backward passes the gradient check in every configuration", "[gradcheck][model]") {
    // Every rung of the ladder, both heads, every norm, biases, no W_o, no mask, no residual, two blocks.
    const ModelConfig cases[] = {
        {.n_heads = 1, .mixer = Mixer::none},
        {.n_heads = 1, .mixer = Mixer::uniform, .head = Head::tied},
        {.n_heads = 1, .mixer = Mixer::uniform, .residual = false, .d_ff = 8, .norm = Norm::pre, .positions = Positions::none},
        {.n_heads = 1, .residual = false},
        {.n_heads = 2, .d_ff = 8, .norm = Norm::pre, .head = Head::tied},
        {.n_heads = 4, .d_ff = 12, .positions = Positions::none},
        {.n_heads = 2, .d_ff = 12, .norm = Norm::pre},
        {.n_heads = 2, .n_layers = 2, .d_ff = 8, .norm = Norm::post, .biases = true, .init = Init::pytorch},
        {.n_heads = 2, .residual = false, .d_ff = 8, .norm = Norm::post, .causal = false},
        {.n_heads = 1, .d_ff = 8, .norm = Norm::pre, .output_projection = false},
        {.n_heads = 2, .n_layers = 2, .mixer = Mixer::uniform, .d_ff = 8, .norm = Norm::pre, .biases = true},
    };
    Rng rng(6);
    for (ModelConfig c : cases) {
        const std::size_t V = 5 + rng.below(8), B = 1 + rng.below(3), T = 3 + rng.below(4), d = 4 * (1 + rng.below(3));
        c.vocab = V, c.max_T = T, c.d_model = d;
        fast::Model model(c, 7);
        sharpen(model);
        std::vector<int> tokens(B * T), targets(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
        targets[1] = -1;
        model.params().zero_grad();
        model.forward(tokens, targets, B, T);
        model.backward();
        const GradCheck g = gradcheck(model.params(), [&] { return model.forward(tokens, targets, B, T); }, 1e-2, 24);
        INFO("mixer " << static_cast<int>(c.mixer) << ", heads " << c.n_heads << ", blocks " << c.n_layers << ", d_ff " << c.d_ff
                      << ", norm " << static_cast<int>(c.norm) << ", V " << V << ", B " << B << ", T " << T << ", d " << d << ": "
                      << g.worst);
        CHECK(g.max_rel_error < kModelTol);
        CHECK(g.checked >= 40);
        CHECK(g.unresolved.size() <= c.n_layers);  // at most one tensor a block (W_q or W_k of a sharp head) too flat to check
    }
}

TEST_CASE("causal_attention_backward passes the gradient check without the division, with narrower q and k, and with a score bias",
          "[gradcheck][attention][sec12]") {
    Rng rng(14);
    for (std::size_t heads : {1u, 2u}) {
        const std::size_t B = 2, T = 3 + rng.below(3), dk = 2 + 2 * rng.below(3), dv = 4;
        for (int variant = 0; variant < 2; ++variant) {
            const bool scaled = variant == 1;  // 0: scores = q kᵀ; 1: scaled, plus a bias
            Parameters p;
            Param& q = p.normal("q", B * T, heads * dk, scaled ? 1.0f : 0.5f, rng);  // (B·T, h·d_k)
            Param& k = p.normal("k", B * T, heads * dk, scaled ? 1.0f : 0.5f, rng);
            Param& v = p.normal("v", B * T, heads * dv, 1.0f, rng);                  // (B·T, h·d_v)
            Tensor3 bias = Tensor3::from_shape({heads, T, T});
            for (float& b : bias) b = static_cast<float>(rng.normal());
            const fast::AttentionOptions options{.scale = scaled, .bias = scaled ? &bias : nullptr};
            const Mat R = rng.normal_mat(B * T, heads * dv);
            fast::AttentionCache cache;
            fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, cache, options);
            CHECK(cache.scale == (scaled ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f));
            fast::causal_attention_backward(R, cache, B, T, heads, q.grad, k.grad, v.grad);
            auto loss = [&] {
                fast::AttentionCache c;
                return project(fast::causal_attention_forward(q.value, k.value, v.value, B, T, heads, c, options), R);
            };
            const GradCheck g = gradcheck(p, loss, 1e-2, 40);
            INFO("heads " << heads << ", d_k " << dk << (scaled ? ", scaled with a bias: " : ", unscaled: ") << g.worst);
            CHECK(g.max_rel_error < kTol);
        }
    }
    // Without the division the scores are those of q·√d_k with it: the same weights, to rounding.
    const std::size_t B = 1, T = 5, dk = 8;
    const Mat q = rng.normal_mat(B * T, dk), k = rng.normal_mat(B * T, dk), v = rng.normal_mat(B * T, dk);
    fast::AttentionCache unscaled, scaled;
    fast::causal_attention_forward(q, k, v, B, T, 1, unscaled, {.scale = false});
    fast::causal_attention_forward(Mat(q * std::sqrt(static_cast<float>(dk))), k, v, B, T, 1, scaled);
    CHECK(xt::amax(xt::abs(unscaled.weights - scaled.weights))() < 1e-5f);
    // A bias of the wrong shape is refused, naming the shapes.
    const Tensor3 wrong = xt::zeros<float>({std::size_t{2}, T, T});
    fast::AttentionCache c;
    CHECK_THROWS_WITH(fast::causal_attention_forward(q, k, v, B, T, 1, c, {.bias = &wrong}),
                      Catch::Matchers::Contains("score bias (2, 5, 5) is not (n_heads, T, T) = (1, 5, 5)"));
}

TEST_CASE("the model's backward passes the gradient check with sinusoidal, RoPE and ALiBi positions, unscaled, and another d_k",
          "[gradcheck][model][sec12]") {
    const ModelConfig cases[] = {
        {.n_heads = 2, .d_ff = 8, .norm = Norm::pre, .positions = Positions::sinusoidal},
        {.n_heads = 2, .positions = Positions::rope},
        {.n_heads = 1, .d_k = 6, .d_ff = 8, .norm = Norm::pre, .positions = Positions::rope, .scale = false},
        {.n_heads = 4, .positions = Positions::alibi},
        {.n_heads = 2, .d_k = 6, .d_ff = 8, .norm = Norm::pre, .positions = Positions::alibi, .scale = false},
        {.n_heads = 1, .d_k = 10, .positions = Positions::learned, .scale = false},
        {.n_heads = 2, .n_layers = 2, .d_ff = 8, .norm = Norm::post, .positions = Positions::rope, .biases = true},
    };
    Rng rng(15);
    for (ModelConfig c : cases) {
        const std::size_t V = 5 + rng.below(8), B = 1 + rng.below(3), T = 3 + rng.below(4), d = 4 * (1 + rng.below(3));
        c.vocab = V, c.max_T = T, c.d_model = d;
        fast::Model model(c, 7);
        if (c.scale) sharpen(model);  // unscaled scores are sharp already
        std::vector<int> tokens(B * T), targets(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
        model.params().zero_grad();
        model.forward(tokens, targets, B, T);
        model.backward();
        const GradCheck g = gradcheck(model.params(), [&] { return model.forward(tokens, targets, B, T); }, 1e-2, 24);
        INFO(positions_name(c.positions) << ", heads " << c.n_heads << ", d_k " << c.d_k << (c.scale ? "" : ", unscaled") << ", V " << V
                                       << ", B " << B << ", T " << T << ", d " << d << ": " << g.worst);
        CHECK(g.max_rel_error < kModelTol);
        CHECK(g.checked >= 40);
        CHECK(g.unresolved.size() <= c.n_layers);
        const bool has_table = c.positions == Positions::learned;
        CHECK(model.params().count({"wpe"}) == (has_table ? T * d : 0));  // only learned positions are parameters
    }
}

TEST_CASE("RoPE makes a score depend on t - i only — ALiBi adds -m (t - i) to it", "[model][positions][sec12]") {
    // One repeated token and no table: every q row and every k row is the same before the position enters.
    const std::size_t T = 6, d = 8;
    const std::vector<int> tokens(T, 2), targets(T, 1);
    for (Positions kind : {Positions::rope, Positions::alibi}) {
        fast::Model model({.vocab = 4, .max_T = T, .d_model = d, .n_heads = 2, .positions = kind}, 3);
        model.forward(tokens, targets, 1, T);
        const fast::AttentionCache& att = model.attention_cache();
        const Tensor3 scores = fast::bmm_nt(split_heads(att.q, 1, T, 2), split_heads(att.k, 1, T, 2));  // (h, T, T), before the scale
        const std::vector<double> slopes = alibi_slopes(2);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t t = 1; t < T; ++t)
                for (std::size_t i = 1; i <= t; ++i) {
                    INFO(positions_name(kind) << ", head " << h << ", query " << t << ", key " << i);
                    if (kind == Positions::rope) {  // same offset, same score
                        CHECK(scores(h, t, i) == Approx(scores(h, t - i, 0)).margin(1e-4));
                    } else {  // equal scores before the bias: w(t, i) / w(t, i − 1) = exp(m)
                        CHECK(att.weights(h, t, i) / att.weights(h, t, i - 1) == Approx(std::exp(slopes[h])).epsilon(1e-4));
                    }
                }
        if (kind == Positions::rope) {
            // ... and another offset, another score: a model that never rotated would pass the check above.
            for (std::size_t h = 0; h < 2; ++h) {
                double range = 0;
                for (std::size_t off = 1; off < T; ++off) range = std::max(range, std::fabs(static_cast<double>(scores(h, off, 0) - scores(h, 0, 0))));
                INFO("head " << h);
                CHECK(range > 1e-2);
            }
        }
    }
    CHECK_THROWS_WITH(fast::Model({.vocab = 4, .max_T = T, .d_model = d, .n_heads = 2, .mixer = Mixer::uniform, .positions = Positions::alibi}, 0), Catch::Matchers::Contains("ALiBi positions act on learned scores"));
}

TEST_CASE("a GPT-2-shaped stack's backward passes the gradient check, pre-norm and post-norm", "[gradcheck][transformer]") {
    Rng rng(10);
    for (Norm norm : {Norm::pre, Norm::post}) {
        const std::size_t V = 6 + rng.below(6), B = 1 + rng.below(2), T = 3 + rng.below(3);
        // N(0, 1/fan_in), larger than GPT-2's N(0, 0.02²): gradients to check
        fast::Model model({.vocab = V, .max_T = T, .d_model = 8, .n_heads = 2, .n_layers = 2, .d_ff = 32, .norm = norm, .biases = true,
                     .head = Head::tied},
                    11);
        std::vector<int> tokens(B * T), targets(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
        model.params().zero_grad();
        model.forward(tokens, targets, B, T);
        model.backward();
        const GradCheck g = gradcheck(model.params(), [&] { return model.forward(tokens, targets, B, T); }, 1e-2, 24);
        INFO((norm == Norm::pre ? "pre-norm: " : "post-norm: ") << g.worst);
        CHECK(g.max_rel_error < kModelTol);
        CHECK(g.checked >= 200);
        REQUIRE(model.output_grad_norms().size() == 2);
        CHECK(model.output_grad_norms()[1] > 0);
    }
}

TEST_CASE("a pre-norm Transformer block holds 12 d^2 + 13 d parameters, counted from its tensors", "[transformer]") {
    for (std::size_t d : {8u, 64u}) {
        fast::Model model(gpt2_config({.vocab = 10, .max_T = 4, .d_model = d, .n_heads = 2, .n_layers = 3}), 0);
        for (std::size_t l = 0; l < 3; ++l) CHECK(model.block(l).param_count() == 12 * d * d + 13 * d);
        // the whole model: token and position tables, the blocks, the final LayerNorm; the output is tied
        CHECK(model.params().count() == 10 * d + 4 * d + 3 * (12 * d * d + 13 * d) + 2 * d);
    }
    CHECK_THROWS_WITH(fast::Model({.vocab = 10, .max_T = 4, .d_model = 6, .n_heads = 4}, 0), Catch::Matchers::Contains("not divisible by n_heads = 4"));
}

TEST_CASE("the gradient check catches a wrong backward (it can fail), and a NaN one", "[gradcheck]") {
    Rng rng(8);
    Parameters p;
    Param& x = p.normal("x", 4, 3, 1.0f, rng);
    Param& W = p.normal("W", 3, 2, 1.0f, rng);
    const Mat R = rng.normal_mat(4, 2);
    p.zero_grad();
    x.grad = fast::linear_backward(x.value, R, W, nullptr);
    auto check = [&] { return gradcheck(p, [&] { return project(fast::linear_forward(x.value, W, nullptr), R); }); };
    SECTION("a 1 % error in dW") {
        W.grad *= 1.01f;
        const GradCheck g = check();
        CHECK(g.max_rel_error > kTol);
        CHECK_THAT(g.worst, Catch::Matchers::StartsWith("W["));
    }
    SECTION("a NaN dW, which would drop out of every comparison") {
        W.grad.fill(std::numeric_limits<float>::quiet_NaN());  // e.g. 0 · (−inf) from a masked score
        const GradCheck g = check();
        CHECK_FALSE(g.max_rel_error < kTol);
        CHECK_THAT(g.worst, Catch::Matchers::Contains("not finite"));
    }
}
