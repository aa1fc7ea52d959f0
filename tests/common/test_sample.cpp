// The seeded sampler (text/sample.hpp): draws follow softmax(logits / temperature); temperature 0 is the
// argmax; the same seed gives the same tokens; the context is cropped to the model's max_T; errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "fast/model.hpp"
#include "text/sample.hpp"

using namespace attn;

namespace {

// A language model whose logits are the same row at every position, whatever the tokens: the sampler
// then draws every token from one known distribution. It remembers the last context it was given.
class FixedLogits : public LanguageModel {
public:
    explicit FixedLogits(std::vector<float> row) : row_(std::move(row)) {}
    double forward(const std::vector<int>& tokens, const std::vector<int>&, std::size_t B, std::size_t T) override {
        context = tokens;
        logits_ = Mat::from_shape({B * T, row_.size()});
        for (std::size_t n = 0; n < B * T; ++n)
            for (std::size_t v = 0; v < row_.size(); ++v) logits_(n, v) = row_[v];
        return 0;
    }
    void backward() override {}
    Parameters& params() override { return params_; }
    const Mat& logits() const override { return logits_; }
    std::vector<int> context;

private:
    std::vector<float> row_;
    Parameters params_;
    Mat logits_;
};

std::vector<double> softmax_at(const std::vector<float>& logits, double temperature) {
    std::vector<double> p;
    double total = 0;
    for (float l : logits) total += p.emplace_back(std::exp(l / temperature));
    for (double& x : p) x /= total;
    return p;
}

}  // namespace

TEST_CASE("sampled tokens follow softmax(logits / temperature)", "[sample]") {
    const std::vector<float> logits = {1.0f, 0.0f, -1.0f, 2.0f, 0.5f};
    const std::size_t N = 40000;
    for (const double temperature : {1.0, 0.5, 2.0}) {
        FixedLogits model(logits);
        Rng rng(17);
        const std::vector<int> ids = sample(model, {0}, N, temperature, 8, rng);
        std::vector<double> freq(logits.size());
        for (int id : ids) freq[static_cast<std::size_t>(id)] += 1.0 / N;
        const std::vector<double> p = softmax_at(logits, temperature), p1 = softmax_at(logits, 1.0);
        for (std::size_t i = 0; i < p.size(); ++i) {
            // A frequency of N draws has standard deviation sqrt(p (1 − p) / N) (binomial): 5 of them
            // fails a correct sampler with probability below 1e-6 per token.
            const double tolerance = 5 * std::sqrt(p[i] * (1 - p[i]) / N);
            INFO("temperature " << temperature << ", token " << i << ": frequency " << freq[i] << ", softmax " << p[i]);
            CHECK(std::fabs(freq[i] - p[i]) < tolerance);
        }
        // The check can tell temperatures apart: at 0.5 and 2, token 3's probability is far outside the
        // tolerance from its value at temperature 1 (a sampler that ignored the temperature would fail).
        if (temperature != 1.0) CHECK(std::fabs(p[3] - p1[3]) > 10 * std::sqrt(p[3] * (1 - p[3]) / N));
    }
}

TEST_CASE("each token is the first whose cumulative probability, in id order, exceeds one uniform draw", "[sample]") {
    const std::vector<float> logits = {0.5f, -1.0f, 1.5f, 0.0f};
    const std::vector<double> p = softmax_at(logits, 0.8);
    FixedLogits model(logits);
    Rng rng(9), same(9);
    for (int id : sample(model, {0}, 50, 0.8, 4, rng)) {
        const double u = same.uniform();
        int expected = 0;
        for (double cumulative = p[0]; u >= cumulative && expected < 3;)
            cumulative += p[static_cast<std::size_t>(++expected)];
        CHECK(id == expected);
    }
}

TEST_CASE("temperature 0 is the argmax, with ties to the smallest id, and a tiny temperature agrees", "[sample]") {
    FixedLogits tie({0.0f, 3.0f, 3.0f, 1.0f});
    Rng rng(1);
    CHECK(sample(tie, {0}, 5, 0.0, 4, rng) == std::vector<int>(5, 1));
    FixedLogits clear({0.0f, 3.0f, 2.0f, 1.0f});
    CHECK(sample(clear, {0}, 20, 1e-3, 4, rng) == std::vector<int>(20, 1));  // e^(−1000) of a chance otherwise

    // A real model: each greedy token is the argmax of the model's logits at the last position of the
    // context, cropped to max_T = 16 once the text grows past it (Model::forward refuses T > max_T).
    fast::Model model({.vocab = 20, .max_T = 16, .d_model = 16, .n_heads = 2}, 0);
    const std::vector<int> prompt = {1, 2, 3};
    Rng unused(0);
    const std::vector<int> ids = sample(model, prompt, 30, 0.0, 16, unused);
    REQUIRE(ids.size() == 30);
    std::vector<int> text = prompt;
    for (int id : ids) {
        const std::size_t T = std::min<std::size_t>(text.size(), 16);
        model.forward(std::vector<int>(text.end() - static_cast<std::ptrdiff_t>(T), text.end()), std::vector<int>(T, 0), 1, T);
        const float* last = &model.logits()(T - 1, 0);  // the row that predicts the next token
        CHECK(id == std::max_element(last, last + 20) - last);
        text.push_back(id);
    }
}

TEST_CASE("top-k draws from the k largest logits only, renormalised, equal logits kept by the smaller id", "[sample]") {
    // Logits 2, 1, 1, 0, 3: the two largest are tokens 4 and 0; with k = 3, of the equal 1s token 1 is kept, not 2.
    const std::vector<float> logits = {2.0f, 1.0f, 1.0f, 0.0f, 3.0f};
    FixedLogits model(logits);
    const std::size_t N = 20000;
    for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
        Rng rng(23);
        const std::vector<int> ids = sample(model, {0}, N, 1.0, 8, rng, k);
        const std::vector<int> kept = k == 1 ? std::vector<int>{4} : k == 2 ? std::vector<int>{4, 0} : std::vector<int>{4, 0, 1};
        double total = 0;
        for (int t : kept) total += std::exp(logits[static_cast<std::size_t>(t)]);
        for (int t = 0; t < 5; ++t) {
            const bool in = std::find(kept.begin(), kept.end(), t) != kept.end();
            const double p = in ? std::exp(logits[static_cast<std::size_t>(t)]) / total : 0.0;
            const double freq = static_cast<double>(std::count(ids.begin(), ids.end(), t)) / N;
            INFO("k = " << k << ", token " << t << ": frequency " << freq << ", renormalised softmax " << p);
            CHECK(std::fabs(freq - p) <= 5 * std::sqrt(p * (1 - p) / N));  // a token left out: never drawn
        }
    }
    // k = 0 and k >= V keep every token: the same draws as no top-k at all; at temperature 0 it is the argmax.
    Rng a(3), b(3), c(3);
    const std::vector<int> all = sample(model, {0}, 200, 1.0, 8, a);
    CHECK(sample(model, {0}, 200, 1.0, 8, b, 0) == all);
    CHECK(sample(model, {0}, 200, 1.0, 8, c, 5) == all);
    Rng d(3);
    CHECK(sample(model, {0}, 200, 1.0, 8, d, 50) == all);  // k past V
    // At another temperature the kept tokens share softmax(logits / T) among themselves: k = 2 at T = 0.5.
    Rng e(29);
    const std::vector<int> sharp = sample(model, {0}, N, 0.5, 8, e, 2);
    const double p4 = std::exp(3.0 / 0.5) / (std::exp(3.0 / 0.5) + std::exp(2.0 / 0.5));
    const double f4 = static_cast<double>(std::count(sharp.begin(), sharp.end(), 4)) / N;
    CHECK(std::fabs(f4 - p4) <= 5 * std::sqrt(p4 * (1 - p4) / N));
    CHECK(std::count(sharp.begin(), sharp.end(), 4) + std::count(sharp.begin(), sharp.end(), 0) == static_cast<std::ptrdiff_t>(N));
    CHECK(sample(model, {0}, 5, 0.0, 8, a, 2) == std::vector<int>(5, 4));
}

TEST_CASE("the same seed gives the same tokens, another seed others", "[sample]") {
    fast::Model model({.vocab = 20, .max_T = 16, .d_model = 16, .n_heads = 2}, 0);
    Rng a(5), b(5), c(6);
    const std::vector<int> x = sample(model, {1, 2, 3}, 40, 1.0, 16, a);
    CHECK(x == sample(model, {1, 2, 3}, 40, 1.0, 16, b));
    CHECK(x != sample(model, {1, 2, 3}, 40, 1.0, 16, c));
    CHECK(sample(model, {1}, 0, 1.0, 16, a).empty());
}

TEST_CASE("printable: newlines, control bytes and broken UTF-8 are escaped visibly, valid characters pass", "[sample]") {
    CHECK(printable("Once there was a fox.") == "Once there was a fox.");
    CHECK(printable("a\nb\tc\\d") == "a\\nb\\tc\\\\d");
    CHECK(printable(std::string("\x01\x1f\x7f", 3)) == "\\x01\\x1f\\x7f");
    CHECK(printable(std::string("\0", 1)) == "\\x00");
    CHECK(printable("ph\xc3\xa9p chia \xe2\x88\x9a") == "ph\xc3\xa9p chia \xe2\x88\x9a");  // é, √: two and three bytes
    CHECK(printable("\xc3") == "\\xc3");            // a lead byte cut off at the end
    CHECK(printable("\xa9x") == "\\xa9x");          // a continuation byte with no lead
    CHECK(printable("\xe2\x88x") == "\\xe2\\x88x");  // a three-byte character missing its last byte
    const std::string out = printable(std::string("\x00\x01\n\x7f\xff", 5));
    for (const char ch : out) CHECK(static_cast<unsigned char>(ch) >= 0x20);
}

TEST_CASE("the model sees the last max_T tokens of the prompt and what was generated", "[sample]") {
    FixedLogits model({0.0f, 0.0f, 0.0f, 0.0f});
    Rng rng(2);
    const std::vector<int> prompt(6, 9);  // an id the model never produces (its vocabulary is 0 … 3)
    // The second token is predicted from the prompt's last 3 tokens and the first generated one …
    std::vector<int> ids = sample(model, prompt, 2, 1.0, 4, rng);
    CHECK(model.context == std::vector<int>{9, 9, 9, ids[0]});
    // … and the fifth from the 4 generated before it.
    ids = sample(model, prompt, 5, 1.0, 4, rng);
    CHECK(model.context == std::vector<int>{ids[0], ids[1], ids[2], ids[3]});
}

TEST_CASE("an empty prompt, a bad temperature or max_T, and non-finite logits are refused", "[sample]") {
    FixedLogits model({0.0f, 1.0f, std::numeric_limits<float>::quiet_NaN()});
    FixedLogits fine({0.0f, 1.0f});
    Rng rng(0);
    CHECK_THROWS_WITH(sample(fine, {}, 3, 1.0, 4, rng), Catch::Contains("the prompt is empty"));
    CHECK_THROWS_WITH(sample(fine, {0}, 3, -0.5, 4, rng),
                      Catch::Contains("temperature -0.5 must be finite and ≥ 0"));
    CHECK_THROWS_WITH(sample(fine, {0}, 3, std::nan(""), 4, rng), Catch::Contains("must be finite"));
    CHECK_THROWS_WITH(sample(fine, {0}, 3, 1.0, 0, rng), Catch::Contains("max_T must be positive"));
    CHECK_THROWS_WITH(sample(model, {0}, 3, 1.0, 4, rng),
                      Catch::Contains("step 0: the logit of token 2 is nan"));
    FixedLogits infinite({0.0f, std::numeric_limits<float>::infinity()});
    CHECK_THROWS_WITH(sample(infinite, {0}, 3, 0.0, 4, rng), Catch::Contains("token 1 is inf"));
}
