// Every backward in the library against central finite differences, on random shapes.
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/gradcheck.hpp"
#include "attn/layers.hpp"
#include "attn/model.hpp"
#include "attn/multi_head.hpp"
#include "attn/rng.hpp"

using namespace attn;

namespace {
// A fixed random projection of the output makes a scalar loss with O(1) gradients everywhere:
// L = Σ y ⊙ R, so dL/dy = R.
double project(const Mat& y, const Mat& R) {
    double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y.data()[i]) * R.data()[i];
    return s;
}
// fp32 forward passes, h = 1e-2: a correct backward lands near 1e-3; a wrong one near 1e-1 or more.
constexpr double kTol = 1e-2;
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
            auto loss = [&] { return project(linear_forward(x.value, W, b), R); };
            p.zero_grad();
            x.grad = linear_backward(x.value, R, W, b);
            const GradCheck g = gradcheck(p, loss);
            INFO(g.worst);
            CHECK(g.max_rel_error < kTol);
        }
    }
}

TEST_CASE("embedding_backward passes the gradient check", "[gradcheck][embedding]") {
    Rng rng(2);
    Parameters p;
    Param& wte = p.normal("wte", 7, 4, 1.0f, rng);
    Param& wpe = p.normal("wpe", 5, 4, 1.0f, rng);
    const std::vector<int> tokens = {1, 3, 3, 0, 6, 2, 1, 1};  // B = 2, T = 4; token 3 and 1 repeat
    const Mat R = rng.normal_mat(8, 4);
    auto loss = [&] { return project(embedding_forward(tokens, 4, wte, &wpe), R); };
    p.zero_grad();
    embedding_backward(tokens, 4, R, wte, &wpe);
    const GradCheck g = gradcheck(p, loss, 1e-2, 64);
    INFO(g.worst);
    CHECK(g.max_rel_error < kTol);
}

TEST_CASE("gelu_backward passes the gradient check", "[gradcheck][gelu]") {
    Rng rng(3);
    Parameters p;
    Param& x = p.normal("x", 5, 6, 2.0f, rng);
    const Mat R = rng.normal_mat(5, 6);
    p.zero_grad();
    x.grad = gelu_backward(x.value, R);
    const GradCheck g = gradcheck(p, [&] { return project(gelu_forward(x.value), R); }, 1e-3, 30);
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
        LayerNormCache cache;
        p.zero_grad();
        layernorm_forward(x.value, gain, bias, cache);
        x.grad = layernorm_backward(R, cache, gain, bias);
        const GradCheck g = gradcheck(p, [&] {
            LayerNormCache c;
            return project(layernorm_forward(x.value, gain, bias, c), R);
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
    logits.grad = cross_entropy_backward(cross_entropy_forward(logits.value, targets), targets);
    const GradCheck g = gradcheck(p, [&] { return cross_entropy_forward(logits.value, targets).loss; }, 1e-2, 30);
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
        AttentionCache cache;
        auto loss = [&] {
            AttentionCache c;
            return project(causal_attention_forward(q.value, k.value, v.value, B, T, heads, c), R);
        };
        causal_attention_forward(q.value, k.value, v.value, B, T, heads, cache);
        causal_attention_backward(R, cache, B, T, heads, false, q.grad, k.grad, v.grad);
        const GradCheck g = gradcheck(p, loss, 1e-2, 40);
        INFO("heads " << heads << ": " << g.worst);
        CHECK(g.max_rel_error < kTol);
    }
}

TEST_CASE("the model's backward passes the gradient check in every configuration", "[gradcheck][model]") {
    struct Case { Mixer mixer; std::size_t heads, d_ff; bool positions, residual, tied, layernorm; };
    const Case cases[] = {{Mixer::none, 1, 0, true, true, false, false},     {Mixer::uniform, 1, 0, true, true, true, false},
                          {Mixer::uniform, 1, 8, false, false, false, true}, {Mixer::learned, 1, 0, true, false, false, false},
                          {Mixer::learned, 2, 8, true, true, true, true},    {Mixer::learned, 4, 12, false, true, false, false},
                          {Mixer::learned, 2, 12, true, true, false, true}};
    Rng rng(6);
    for (const Case& c : cases) {
        ModelConfig cfg{9, 5, 8, c.heads, c.mixer, c.positions, c.residual, c.d_ff, c.tied, c.layernorm};
        Model model(cfg, 7);
        // Check where attention is far from uniform, so that W_q and W_k have gradients to check.
        for (auto& p : model.params().all())
            if (p.name == "W_q" || p.name == "W_k") p.value *= 3.0f;
        const std::size_t B = 2, T = 5;
        std::vector<int> tokens(B * T), targets(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(9));
        for (auto& t : targets) t = static_cast<int>(rng.below(9));
        targets[3] = -1;
        model.params().zero_grad();
        model.forward(tokens, targets, B, T);
        model.backward();
        const GradCheck g = gradcheck(model.params(), [&] { return model.forward(tokens, targets, B, T); }, 1e-2, 12);
        INFO("mixer " << static_cast<int>(c.mixer) << ", heads " << c.heads << ", d_ff " << c.d_ff << ": " << g.worst);
        CHECK(g.max_rel_error < kTol);
        CHECK(g.checked >= 40);
    }
}

TEST_CASE("the gradient check catches a wrong backward (it can fail)", "[gradcheck]") {
    Rng rng(8);
    Parameters p;
    Param& x = p.normal("x", 4, 3, 1.0f, rng);
    Param& W = p.normal("W", 3, 2, 1.0f, rng);
    const Mat R = rng.normal_mat(4, 2);
    p.zero_grad();
    x.grad = linear_backward(x.value, R, W, nullptr);
    W.grad *= 1.1f;  // a 10 % error in dW
    const GradCheck g = gradcheck(p, [&] { return project(linear_forward(x.value, W, nullptr), R); });
    CHECK(g.max_rel_error > 0.05);
    CHECK_THAT(g.worst, Catch::Matchers::StartsWith("W["));
}
