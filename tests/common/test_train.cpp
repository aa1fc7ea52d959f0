// AdamW, the warmup schedule, gradient clipping and the training loop.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/language_model.hpp"
#include "core/memory.hpp"
#include "fast/model.hpp"
#include "tasks/pronoun.hpp"
#include "train/optim.hpp"
#include "train/train.hpp"

using namespace attn;
using Catch::Matchers::Contains;

TEST_CASE("AdamW's first step moves each weight by lr against the sign of its gradient, plus decay", "[optim]") {
    Parameters p;
    Param& w = p.add("w", Mat{{1.0f, -2.0f, 0.5f}});
    Param& b = p.add("b", Mat{{1.0f}}, false);  // no decay
    w.grad = Mat{{0.3f, -4.0f, 0.0f}};
    b.grad = Mat{{2.0f}};
    AdamW opt(p, {0.1f, 0.9f, 0.999f, 1e-8f, 0.5f, 0});
    opt.step();
    // m̂ = g and v̂ = g² after one step, so the Adam part is lr · g / |g|; decay adds lr · wd · w.
    CHECK(w.value(0, 0) == Approx(1.0 - 0.1 * (1 + 0.5 * 1.0)));
    CHECK(w.value(0, 1) == Approx(-2.0 - 0.1 * (-1 + 0.5 * -2.0)));
    CHECK(w.value(0, 2) == Approx(0.5 - 0.1 * 0.5 * 0.5));  // zero gradient: decay only
    CHECK(b.value(0, 0) == Approx(1.0 - 0.1));
}

TEST_CASE("AdamW over several steps matches the textbook update computed in double", "[optim]") {
    Parameters p;
    Param& w = p.add("w", Mat{{0.5f, -1.5f}});
    AdamW opt(p, {0.01f, 0.9f, 0.99f, 1e-8f, 0.1f, 3});
    double x[2] = {0.5, -1.5}, m[2] = {0, 0}, v[2] = {0, 0};
    const double grads[3][2] = {{0.2, -1.0}, {-0.4, 0.5}, {0.1, 0.3}};
    for (int t = 1; t <= 3; ++t) {
        w.grad = Mat{{static_cast<float>(grads[t - 1][0]), static_cast<float>(grads[t - 1][1])}};
        opt.step();
        const double lr = 0.01 * t / 3.0;  // warmup over 3 steps
        for (int i = 0; i < 2; ++i) {
            const double g = grads[t - 1][i];
            m[i] = 0.9 * m[i] + 0.1 * g;
            v[i] = 0.99 * v[i] + 0.01 * g * g;
            const double mhat = m[i] / (1 - std::pow(0.9, t)), vhat = v[i] / (1 - std::pow(0.99, t));
            x[i] -= lr * (mhat / (std::sqrt(vhat) + 1e-8) + 0.1 * x[i]);
        }
        INFO("step " << t);
        CHECK(w.value(0, 0) == Approx(x[0]).epsilon(1e-6));
        CHECK(w.value(0, 1) == Approx(x[1]).epsilon(1e-6));
    }
}

TEST_CASE("linear warmup rises to lr over warmup_steps, then stays", "[optim]") {
    Parameters p;
    p.zeros("w", 1, 1);
    AdamW opt(p, {1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 100});
    CHECK(opt.lr_at(1) == Approx(1e-5));
    CHECK(opt.lr_at(50) == Approx(5e-4));
    CHECK(opt.lr_at(100) == Approx(1e-3));
    CHECK(opt.lr_at(5000) == Approx(1e-3));
}

TEST_CASE("clip_grad_norm rescales to the given global norm and leaves small gradients alone", "[optim]") {
    Parameters p;
    Param& a = p.add("a", Mat{{0, 0}});
    Param& b = p.add("b", Mat{{0}});
    a.grad = Mat{{3, 0}};
    b.grad = Mat{{4}};
    CHECK(clip_grad_norm(p, 1.0) == Approx(5.0));
    CHECK(a.grad(0, 0) == Approx(0.6));
    CHECK(b.grad(0, 0) == Approx(0.8));
    CHECK(clip_grad_norm(p, 10.0) == Approx(1.0));
    CHECK(a.grad(0, 0) == Approx(0.6));
}

TEST_CASE("the training loop lowers the loss on the pronoun task", "[train]") {
    const PronounTask task = make_pronoun_task(PronounVersion::role, 1);
    fast::Model model({.vocab = task.vocab.size(), .max_T = PronounTask::kLength - 1, .d_model = 16, .n_heads = 2, .d_ff = 32, .norm = Norm::pre}, 1);
    TrainConfig c;
    c.steps = 150;
    c.progress = false;
    const TrainResult r = train_lm(model, task.train, c);
    REQUIRE(r.losses.size() == 150);
    const auto early = smooth(std::vector<double>(r.losses.begin(), r.losses.begin() + 10), 10).front();
    const auto late = smooth(std::vector<double>(r.losses.end() - 10, r.losses.end()), 10).front();
    CHECK(late < 0.5 * early);
    CHECK(r.tokens_per_s > 0);
}

namespace {
// A model that, as a GPU's, returns from update() before the work is done: the work (kLag of sleep) is done when
// the host next reads from it (forward's loss, an evaluation) or waits on it.
class LaggingDevice : public LanguageModel {
public:
    static constexpr std::chrono::milliseconds kLag{40};
    double forward(const std::vector<int>&, const std::vector<int>&, std::size_t B, std::size_t T) override {
        finish();
        logits_ = Mat::from_shape({B * T, 2});
        return 1.0;
    }
    void backward() override {}
    Parameters& params() override { return params_; }
    const Mat& logits() const override { return logits_; }
    void zero_grad() override {}
    void update(AdamW&, double) override { pending_ = true; }
    void wait() override { finish(); }
    void finish() {
        if (pending_) std::this_thread::sleep_for(kLag);
        pending_ = false;
    }

private:
    bool pending_ = false;
    Parameters params_;
    Mat logits_;
};
}  // namespace

TEST_CASE("the training loop's clock waits for a device's last step, and does not count a step as evaluation", "[train]") {
    LaggingDevice model;
    const BatchSampler sample = [](Rng&, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.assign(2, 0);
        targets.assign(2, 1);
    };
    TrainConfig c;
    c.steps = 3;
    c.progress = false;
    // three updates of 40 ms each: the first two end in the next step's forward, the last only when the loop waits
    CHECK(train_loop(model, sample, 1, 2, c).seconds >= 3 * 0.040);
    // an evaluation after every step reads the device: the step's work it waits for is training, not evaluation
    c.eval_every = 1;
    c.eval = [&] {
        model.finish();
        return 0.0;
    };
    CHECK(train_loop(model, sample, 1, 2, c).seconds >= 3 * 0.040);
}

TEST_CASE("training refuses empty or ragged data", "[train][errors]") {
    fast::Model model({.vocab = 5, .max_T = 4, .d_model = 4, .n_heads = 1}, 0);
    TrainConfig c;
    c.progress = false;
    CHECK_THROWS_WITH(train_lm(model, {}, c), Contains("no training sentences"));
    CHECK_THROWS_WITH(train_lm(model, {{1, 2, 3}, {1, 2}}, c), Contains("share one length"));
}

TEST_CASE("the model refuses bad shapes and tokens, naming them", "[model][errors]") {
    CHECK_THROWS_WITH(fast::Model({.vocab = 5, .max_T = 4, .d_model = 6, .n_heads = 4}, 0), Contains("not divisible by n_heads = 4"));
    fast::Model model({.vocab = 5, .max_T = 4, .d_model = 4, .n_heads = 1}, 0);
    CHECK_THROWS_WITH(model.forward({1, 2, 3, 9}, {1, 2, 3, 4}, 1, 4), Contains("token 9") && Contains("vocabulary of 5"));
    CHECK_THROWS_WITH(model.forward({1, 2, 3, 4, 0}, {1, 2, 3, 4, 0}, 1, 5), Contains("exceeds max_T = 4"));
    CHECK_THROWS_WITH(model.forward({1, 2}, {1, 2, 3}, 1, 2), Contains("targets"));
}

TEST_CASE("training's peak memory does not grow with the number of steps (50 against 200)", "[train][memory]") {
    // The ladder's full block at 12_language_model's --medium size on random tokens: every step reuses the last one's memory
    // (core/memory.hpp). Measured: 50 and 200 steps peak within a few hundred KiB of each other.
    const std::size_t V = 64, T = 64, B = 32;
    const ModelConfig config{.vocab = V, .max_T = T, .d_model = 64, .n_heads = 4, .d_ff = 256, .norm = Norm::pre};
    const BatchSampler random_tokens = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        tokens.resize(B * T), targets.resize(B * T);
        for (auto& t : tokens) t = static_cast<int>(rng.below(V));
        for (auto& t : targets) t = static_cast<int>(rng.below(V));
    };
    auto train = [&](int steps) {
        fast::Model model(config, 1);
        TrainConfig tc;
        tc.steps = steps, tc.batch = B, tc.progress = false;
        train_loop(model, random_tokens, B, T, tc);
    };
    train(5);  // warm up: OpenBLAS's buffers, code pages
    const PeakMemory short_run = measure_peak_memory([&] { train(50); });
    const PeakMemory long_run = measure_peak_memory([&] { train(200); });
    if (!short_run.reset) return;  // no /proc/self/clear_refs here: the marks cannot be compared
    INFO("peak resident: 50 steps " << short_run.peak / 1024 << " KiB, 200 steps " << long_run.peak / 1024 << " KiB");
    CHECK(long_run.peak <= short_run.peak + short_run.peak / 20 + (2u << 20));  // within 5 % + 2 MiB
}
