// Checkpoints (train/checkpoint.hpp): a run stopped and resumed ends bit-identical to one that never stopped,
// at 1 and 2 BLAS threads, for a ladder model and a 2-block stack; Ctrl-C saves and stops; a save killed at
// any moment leaves the previous checkpoint whole; a load refuses, naming the file and the rule, anything
// that does not fit — before it changes the model.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../spec.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "fast/matmul.hpp"
#include "fast/model.hpp"
#include "train/checkpoint.hpp"
#include "train/train.hpp"

using namespace attn;
namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t V = 32, T = 16, B = 4;

ModelConfig ladder_model() { return {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 2, .d_ff = 32, .norm = Norm::pre}; }
ModelConfig two_blocks() { return {.vocab = V, .max_T = T, .d_model = 16, .n_heads = 2, .n_layers = 2, .d_ff = 32, .norm = Norm::pre}; }

// A fresh folder under the system's temporary directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("attn-ckpt-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    static int& counter() {
        static int n = 0;
        return n;
    }
    std::string str() const { return path.string(); }
};

const BatchSampler random_tokens = [](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
    tokens.resize(B * T), targets.resize(B * T);
    for (auto& t : tokens) t = static_cast<int>(rng.below(V));
    for (auto& t : targets) t = static_cast<int>(rng.below(V));
};

TrainConfig config(int steps) {
    TrainConfig tc;
    tc.steps = steps, tc.batch = B, tc.seed = 11, tc.progress = false, tc.config = "test model";
    return tc;
}

std::vector<float> weights(fast::Model& m) {
    std::vector<float> w;
    for (const Param& p : m.params().all()) w.insert(w.end(), p.value.begin(), p.value.end());
    return w;
}

using spec::same_bits;

}  // namespace

TEST_CASE("checkpoint: 200 steps equal 100, a save, a resume and 100 more, bit for bit", "[checkpoint]") {
    for (const auto& [name, cfg] : {std::pair{"a ladder model", ladder_model()}, std::pair{"a 2-block stack", two_blocks()}})
        for (int threads : {1, 2}) {
            INFO(name << ", " << threads << " BLAS thread(s)");
            fast::fix_blas_threads(threads);
            fast::Model whole(cfg, 5);
            const TrainResult all = train_loop(whole, random_tokens, B, T, config(200));

            TempDir dir;
            fast::Model first(cfg, 5);
            TrainConfig half = config(100);
            half.save_dir = dir.str();
            train_loop(first, random_tokens, B, T, half);
            fast::Model second(cfg, 99);  // other initial weights: every one must come from the checkpoint
            TrainConfig rest = config(200);
            rest.resume_dir = dir.str();
            const TrainResult resumed = train_loop(second, random_tokens, B, T, rest);
            fast::fix_blas_threads(0);

            CHECK(same_bits(weights(second), weights(whole)));
            REQUIRE(resumed.losses.size() == all.losses.size());
            CHECK(std::memcmp(resumed.losses.data(), all.losses.data(), all.losses.size() * sizeof(double)) == 0);
            CHECK(read_checkpoint_info(dir.str()).step == 100);
        }
}

TEST_CASE("checkpoint: Ctrl-C finishes the step, saves and stops, and the resumed run ends where an unstopped one does", "[checkpoint]") {
    fast::Model whole(ladder_model(), 5);
    train_loop(whole, random_tokens, B, T, config(120));

    TempDir dir;
    fast::Model stopped(ladder_model(), 5);
    int calls = 0;
    const BatchSampler press_at_60 = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        random_tokens(rng, tokens, targets);
        if (++calls == 60) ::raise(SIGINT);  // the real signal, during step 60
    };
    TrainConfig tc = config(120);
    tc.save_dir = dir.str();
    CHECK_THROWS_WITH(train_loop(stopped, press_at_60, B, T, tc),
                      Contains("stopped after step 60 of 120") && Contains("--resume " + dir.str()));
    CHECK(read_checkpoint_info(dir.str()).step == 60);

    fast::Model resumed(ladder_model(), 7);
    TrainConfig rest = config(120);
    rest.resume_dir = dir.str();
    train_loop(resumed, random_tokens, B, T, rest);
    CHECK(same_bits(weights(resumed), weights(whole)));
}

TEST_CASE("checkpoint: a save killed at any moment leaves the previous checkpoint whole", "[checkpoint]") {
    TempDir dir;
    fast::Model model(two_blocks(), 3);
    AdamW opt(model.params(), {});
    Rng rng(1);
    save_checkpoint(dir.str(), {"test", "test model", 0, 1, 0.5, {0.5}, {}}, model.params(), opt, rng);
    for (int delay_us : {0, 200, 500, 1000, 2000, 4000, 8000}) {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {  // saves step 2, 3, … as fast as it can, until killed
            for (int step = 2;; ++step) {
                std::vector<double> losses(static_cast<std::size_t>(step), 0.5);
                save_checkpoint(dir.str(), {"test", "test model", 0, step, 0.5, losses, {}}, model.params(), opt, rng);
            }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        INFO("killed after " << delay_us << " µs");
        fast::Model loaded(two_blocks(), 9);
        AdamW opt2(loaded.params(), {});
        Rng rng2(2);
        CHECK_NOTHROW(load_checkpoint(dir.str(), "test model", loaded.params(), opt2, rng2));
        CHECK(same_bits(weights(loaded), weights(model)));
    }
}

TEST_CASE("checkpoint: saving the step `latest` names again leaves that folder whole until the link moves", "[checkpoint]") {
    TempDir dir;
    fast::Model model(two_blocks(), 3);
    AdamW opt(model.params(), {});
    Rng rng(1);
    const CheckpointInfo info{"test", "test model", 0, 5, 0.5, {0.5}, {}};
    const std::string first = save_checkpoint(dir.str(), info, model.params(), opt, rng);
    const std::string second = save_checkpoint(dir.str(), info, model.params(), opt, rng);
    INFO("first save " << first << ", second " << second);
    CHECK(second != first);  // written beside it, not over it
    CHECK(std::filesystem::exists(std::filesystem::path(first) / "manifest.txt"));
    CHECK(std::filesystem::read_symlink(std::filesystem::path(dir.str()) / "latest").filename() ==
          std::filesystem::path(second).filename());
    // and a third save of the same step goes back to the first name, which `latest` no longer names
    CHECK(save_checkpoint(dir.str(), info, model.params(), opt, rng) == first);
}

TEST_CASE("checkpoint: a load refuses what does not fit, naming the file, and changes nothing", "[checkpoint][errors]") {
    TempDir dir;
    fast::Model model(ladder_model(), 3);
    AdamW opt(model.params(), {});
    Rng rng(1);
    const std::string folder = save_checkpoint(dir.str(), {"test", "test model", 0, 1, 0.5, {0.5}, {}}, model.params(), opt, rng);
    auto try_load = [&](const std::string& config = "test model") {
        fast::Model other(ladder_model(), 4);
        const std::vector<float> before = weights(other);
        AdamW o(other.params(), {});
        Rng r(2);
        try {
            load_checkpoint(dir.str(), config, other.params(), o, r);
        } catch (const Error& e) {
            CHECK(same_bits(weights(other), before));  // nothing changed
            return std::string(e.what());
        }
        return std::string("loaded");
    };
    REQUIRE(try_load() == "loaded");
    CHECK_THAT(try_load("another model"), Contains("is for another model") && Contains("another model"));

    SECTION("a missing weight") {
        fs::remove(fs::path(folder) / "wte.npy");
        CHECK_THAT(try_load(), Contains("wte.npy") && Contains("missing"));
    }
    SECTION("a truncated weight") {
        const fs::path p = fs::path(folder) / "wte.npy";
        fs::resize_file(p, fs::file_size(p) - 7);
        CHECK_THAT(try_load(), Contains("wte.npy") && Contains("data bytes"));
    }
    SECTION("a NaN weight") {
        Mat w = read_npy_mat((fs::path(folder) / "wte.npy").string());
        w(0, 0) = std::numeric_limits<float>::quiet_NaN();
        write_npy((fs::path(folder) / "wte.npy").string(), w);
        CHECK_THAT(try_load(), Contains("wte.npy"));
    }
    SECTION("a weight of another shape") {
        write_npy((fs::path(folder) / "wte.npy").string(), Mat(xt::zeros<float>({3, 3})));
        CHECK_THAT(try_load(), Contains("wte.npy") && Contains("(3, 3)"));
    }
    SECTION("an unknown format, and a manifest cut short") {
        const fs::path man = fs::path(folder) / "manifest.txt";
        std::string text;
        {
            std::ifstream in(man);
            text.assign(std::istreambuf_iterator<char>(in), {});
        }
        std::ofstream(man) << "format: 99\n" << text.substr(text.find('\n') + 1);
        CHECK_THAT(try_load(), Contains("format 99"));
        std::ofstream(man) << text.substr(0, text.find("end:"));
        CHECK_THAT(try_load(), Contains("no 'end' line") && Contains("truncated"));
    }
    SECTION("no checkpoint at all") {
        fs::remove_all(dir.path);
        CHECK_THAT(try_load(), Contains("no checkpoint in"));
    }
}

TEST_CASE("parse_config reads a manifest's configuration back: describe's words for every field and value", "[checkpoint]") {
    // Every value of every field at least once (the enums all through), and GPT-2's shape.
    std::vector<ModelConfig> configs = {gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12})};
    for (int i = 0; i < 5; ++i) {
        ModelConfig c{.vocab = 65 + static_cast<std::size_t>(i), .max_T = 32u << i, .d_model = 16u << i, .n_heads = 1u + i, .n_layers = 1u + i % 3,
                      .d_k = i % 2 ? 8u : 0u};
        c.mixer = static_cast<Mixer>(i % 3), c.residual = i % 2 == 0, c.d_ff = i % 2 ? 0 : 4 * c.d_model, c.norm = static_cast<Norm>(i % 3);
        c.positions = static_cast<Positions>(i), c.scale = i != 1, c.causal = i != 2, c.biases = i == 3, c.output_projection = i != 4;
        c.output_bias = i == 2, c.head = i % 2 ? Head::tied : Head::untied, c.init = static_cast<Init>(i % 3);
        configs.push_back(c);
    }
    for (const ModelConfig& c : configs) {
        INFO(describe(c));
        CHECK(describe(parse_config(describe(c))) == describe(c));
    }
    const std::string good = describe(configs[1]);
    CHECK_THROWS_WITH(parse_config("vocab 65"), Catch::Contains("the field 'max_T' is missing"));
    CHECK_THROWS_WITH(parse_config(good + ", colour blue"), Catch::Contains("the field 'colour' is unknown"));
    CHECK_THROWS_WITH(parse_config(good + ", vocab 3"), Catch::Contains("the field 'vocab' is given twice"));
    CHECK_THROWS_WITH(parse_config(good + ","), Catch::Contains("ends without its last field"));
    CHECK_THROWS_WITH(parse_config("vocab 65,, " + good.substr(good.find("max_T"))), Catch::Contains("is not a field and its value"));
    std::string bad = good;
    const std::size_t at = bad.find("norm ");
    bad.replace(at, bad.find(',', at) - at, "norm mid");
    CHECK_THROWS_WITH(parse_config(bad), Catch::Contains("norm 'mid' is none of none, pre, post"));
    CHECK_THROWS_WITH(parse_config("vocab -1, " + good.substr(good.find("max_T"))), Catch::Contains("vocab '-1' is not a count"));
}
