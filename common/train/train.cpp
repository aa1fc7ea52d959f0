#include "train/train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/rng.hpp"
#include "core/side_by_side.hpp"
#include "text/corpus.hpp"
#include "train/checkpoint.hpp"

namespace attn {

void make_batch(const std::vector<std::vector<int>>& sentences, const std::vector<std::size_t>& rows,
                std::vector<int>& tokens, std::vector<int>& targets) {
    tokens.clear();
    targets.clear();
    for (std::size_t r : rows) {
        const auto& s = sentences[r];
        tokens.insert(tokens.end(), s.begin(), s.end() - 1);
        targets.insert(targets.end(), s.begin() + 1, s.end());
    }
}

namespace {
void draw_bar(const std::string& label, int step, int steps, double loss, double tok_s) {
    const int width = 24, filled = width * step / steps;
    std::fprintf(stderr, "\r  %-22s [%s%s] %5d/%d  loss %.4f  %8.0f tok/s", label.c_str(),
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(), step, steps, loss, tok_s);
    std::fflush(stderr);
}
}  // namespace

std::string run_folder(const std::string& label, std::uint64_t seed) {
    std::string slug;
    for (unsigned char ch : label) {
        if (std::isalnum(ch)) slug += static_cast<char>(std::tolower(ch));
        else if (!slug.empty() && slug.back() != '-') slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    return (slug.empty() ? std::string("run") : slug) + "-seed" + std::to_string(seed);
}

void apply_checkpoints(const Checkpoints& k, TrainConfig& tc) {
    const std::string folder = run_folder(tc.label, tc.seed);
    const std::string save = !k.save_dir.empty() ? k.save_dir : k.resume_dir;
    if (!save.empty()) tc.save_dir = save + "/" + folder, tc.save_every = k.every, tc.resume_flag_dir = save;
    if (!k.resume_dir.empty()) {
        const std::string from = k.resume_dir + "/" + folder;
        if (std::filesystem::exists(from + "/latest")) tc.resume_dir = from;  // else: this run starts from the start
    }
    if (k.evaluate_only) {
        require(!tc.resume_dir.empty(), "--steps 0 with --resume",
                "no checkpoint of '" + tc.label + "' in " + k.resume_dir + " (expected " + k.resume_dir + "/" + folder + "/latest)");
        tc.steps = read_checkpoint_info(tc.resume_dir).step;  // as far as it went: nothing more to train
        tc.save_dir.clear();
    }
}

TrainResult train_lm(LanguageModel& model, const std::vector<std::vector<int>>& sentences, const TrainConfig& c) {
    require(!sentences.empty(), "train_lm", "no training sentences");
    const std::size_t L = sentences.front().size();
    for (const auto& s : sentences)
        require(s.size() == L && L >= 2, "train_lm", "sentences must share one length ≥ 2");
    std::vector<std::size_t> rows(c.batch);
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        for (auto& row : rows) row = static_cast<std::size_t>(rng.below(sentences.size()));
        make_batch(sentences, rows, tokens, targets);
    };
    return train_loop(model, sample, c.batch, L - 1, c);
}

TrainResult train_on_tokens(LanguageModel& model, const std::vector<int>& data, std::size_t T, const TrainConfig& c) {
    const BatchSampler sample = [&](Rng& rng, std::vector<int>& tokens, std::vector<int>& targets) {
        sample_windows(data, c.batch, T, rng, tokens, targets);
    };
    return train_loop(model, sample, c.batch, T, c);
}

LmRun train_lm_on_corpus(LanguageModel& model, const Corpus& corpus, const LmSetup& s, const std::string& name,
                         int eval_every) {
    TrainConfig tc = train_config(s, name);
    if (eval_every > 0) {
        tc.eval_every = eval_every;
        // along the way, a quarter of at most 256 windows: a curve, not the verdict's figure
        tc.eval = [&] { return evaluate(model, corpus.heldout, s.T, std::min<std::size_t>(s.eval_windows, 256) / 4 + 1).loss; };
    }
    LmRun run;
    run.name = name;
    run.params = model.params().count();
    run.log = train_on_tokens(model, corpus.train, s.T, tc);
    run.heldout = evaluate(model, corpus, corpus.heldout, s.T, s.eval_windows);
    return run;
}

TrainResult train_loop(LanguageModel& model, const BatchSampler& sample, std::size_t B, std::size_t T, const TrainConfig& c) {
    require(c.steps > 0 && B > 0 && T > 0, "train_loop", "steps, batch and T must be positive");
    keep_freed_memory();  // each step reuses the last one's activation memory (core/memory.hpp)
    Rng rng(c.seed, 0x7a1);
    AdamW opt(model.params(), c.opt);
    // One bar on a line: a run side by side with the caller's (core/side_by_side.hpp) prints only its closing line.
    const bool bar = c.progress && isatty(STDERR_FILENO) && !in_side_by_side();
    TrainResult r;
    std::vector<int> tokens, targets;
    const auto start = std::chrono::steady_clock::now();
    double eval_seconds = 0;  // evaluation is not training: keep it out of tokens/s
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - eval_seconds;
    };
    const std::string config = c.config.empty() ? model.describe() : c.config;  // what a checkpoint is of
    int first = 1;
    if (!c.resume_dir.empty()) {
        const CheckpointInfo info = load_checkpoint(c.resume_dir, config, model.params(), opt, rng);
        model.sync_from_host(&opt);
        require(info.step <= c.steps, "train_loop",
                "the checkpoint in " + c.resume_dir + " is at step " + std::to_string(info.step) + ", past this run's " +
                    std::to_string(c.steps) + " steps");
        r.losses = info.losses, r.evals = info.evals, first = info.step + 1;
        if (info.stopped) r.stopped = true, first = c.steps + 1;  // stop_when had ended it: nothing more to train
        // The saved run's closing evaluation (at its last step, off the eval_every grid) is not one this run makes.
        else if (c.eval_every > 0 && info.step < c.steps && info.step % c.eval_every != 0)
            std::erase_if(r.evals, [&](const auto& e) { return e.first == info.step; });
    }
    std::optional<StopRequest> stop_on_ctrl_c;
    if (!c.save_dir.empty()) stop_on_ctrl_c.emplace();
    for (int step = first; step <= c.steps; ++step) {
        sample(rng, tokens, targets);
        model.zero_grad();
        r.losses.push_back(model.forward(tokens, targets, B, T));
        model.backward();
        model.update(opt, c.clip);
        if (c.eval && c.eval_every > 0 && (step % c.eval_every == 0 || step == c.steps)) {
            model.wait();  // a device may still be running this step's update: that is training, not evaluation
            const auto eval_start = std::chrono::steady_clock::now();
            r.evals.emplace_back(step, c.eval());
            eval_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - eval_start).count();
        }
        const bool done = c.stop_when && c.stop_check_every > 0 && step % c.stop_check_every == 0 && c.stop_when();
        if (bar && (step % 25 == 0 || step == c.steps || done))
            draw_bar(c.label, step, c.steps, r.losses.back(),
                     static_cast<double>(static_cast<std::size_t>(step - first + 1) * B * T) / elapsed());
        const bool stop = stop_on_ctrl_c && StopRequest::requested();
        r.stopped = done;
        if (!c.save_dir.empty() && (stop || done || step == c.steps || (c.save_every > 0 && step % c.save_every == 0))) {
            const CheckpointInfo info{.experiment = c.experiment.empty() ? c.label : c.experiment, .config = config, .seed = c.seed,
                                      .step = step, .loss = r.losses.back(), .losses = r.losses, .evals = r.evals, .stopped = done};
            model.sync_to_host(&opt);
            save_checkpoint(c.save_dir, info, model.params(), opt, rng);
        }
        if (done) break;
        if (stop) {
            if (bar) std::fprintf(stderr, "\n");
            const std::string flag_dir = c.resume_flag_dir.empty() ? c.save_dir : c.resume_flag_dir;
            throw Interrupted("stopped after step " + std::to_string(step) + " of " + std::to_string(c.steps) + " (Ctrl-C); the checkpoint is in " +
                              c.save_dir + ": run the same command with --resume " + flag_dir + " to go on");
        }
    }
    model.wait();  // a device returns from update() before it has run it: the last step ends when the device is done
    r.seconds = elapsed();
    model.sync_to_host(nullptr);  // params() holds the trained weights for whoever reads them next
    const int ran = static_cast<int>(r.losses.size()) - first + 1;
    r.tokens_per_s = ran > 0 ? static_cast<double>(static_cast<std::size_t>(ran) * B * T) / r.seconds : 0;
    if (c.progress) {
        if (bar) std::fprintf(stderr, "\n");
        std::fprintf(stderr, "  %s: %d steps in %.1f s, %.0f tokens/s\n", c.label.c_str(), ran, r.seconds, r.tokens_per_s);
    }
    return r;
}

void LanguageModel::update(AdamW& opt, double clip) {
    if (clip > 0) clip_grad_norm(params(), clip);
    opt.step();
}

double clip_grad_norm(Parameters& params, double max_norm) {
    double sq = 0;
    for (const auto& p : params.all())
        for (float g : p.grad) sq += static_cast<double>(g) * g;
    const double norm = std::sqrt(sq);
    if (norm > max_norm) {
        const float scale = static_cast<float>(max_norm / norm);
        for (auto& p : params.all()) p.grad *= scale;
    }
    return norm;
}

std::vector<double> smooth(const std::vector<double>& values, std::size_t window) {
    std::vector<double> out;
    for (std::size_t i = 0; i + window <= values.size(); i += window) {
        double s = 0;
        for (std::size_t j = i; j < i + window; ++j) s += values[j];
        out.push_back(s / static_cast<double>(window));
    }
    return out;
}

}  // namespace attn
