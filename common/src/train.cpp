#include "attn/train.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "attn/checkpoint.hpp"
#include "attn/corpus.hpp"
#include "attn/error.hpp"
#include "attn/memory.hpp"
#include "attn/rng.hpp"
#include "attn/side_by_side.hpp"

namespace attn {

namespace {
// inputs s[0 .. L−2] and targets s[1 .. L−1] of the chosen sentences, row after row
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

void draw_bar(const std::string& label, int step, int steps, double loss, double tok_s) {
    const int width = 24, filled = width * step / steps;
    std::fprintf(stderr, "\r  %-22s [%s%s] %5d/%d  loss %.4f  %8.0f tok/s", label.c_str(),
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str(), step, steps, loss, tok_s);
    std::fflush(stderr);
}
}  // namespace

void add_engine_flag(Cli& cli, Engine& engine) {
    auto word = std::make_shared<std::string>(engine_name(engine));  // lives in the check below, as long as the Cli
    cli.add("--engine", *word,
            std::string("which code trains the models on the CPU: reference (common/reference/, written to be read) or fast "
                        "(common/fast/: threads, vector loops, fused passes); the same model either way, up to fp32 rounding "
                        "(default ") + engine_name(engine) + ")",
            {"reference", "fast"});
    cli.check([word, &engine] { engine = engine_for(*word); });
}

void add_checkpoint_flags(Cli& cli, Checkpoints& k) {
    cli.add("--save", k.save_dir, "save each trained model (weights, AdamW, sampler, history) in its own folder under this one, "
                                  "at the end and on Ctrl-C; NumPy reads the weights: np.load('DIR/<run>/latest/wte.npy')");
    cli.add("--every", k.every, "with --save or --resume: also save every N steps", 0, 1000000);
    cli.add("--resume", k.resume_dir, "go on from the checkpoints in this folder (a run without one starts from the start); "
                                      "the same flags as the saved run, --steps as many or more");
    // Both folders are checked before anything trains: a typo in --resume would otherwise train every model
    // from the start, and a --save folder that cannot be written would fail only after the first model.
    cli.check([&k] {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!k.resume_dir.empty() && !fs::is_directory(k.resume_dir, ec))
            throw UsageError("--resume " + k.resume_dir + ": no such folder" +
                             (fs::exists(k.resume_dir, ec) ? " (it is a file)" : " (a typo? --save DIR writes one)"));
        const std::string& save = !k.save_dir.empty() ? k.save_dir : k.resume_dir;
        if (save.empty() || (k.read_only && k.save_dir.empty())) return;
        // The folder, or the nearest folder above it that exists (the run creates the rest), must be writable.
        fs::path p = fs::path(save).lexically_normal();
        while (!p.empty() && !fs::exists(p, ec)) p = p.has_parent_path() && p.parent_path() != p ? p.parent_path() : fs::path();
        if (p.empty()) p = ".";
        const std::string flag = !k.save_dir.empty() ? "--save " : "--resume ";
        if (!fs::is_directory(p, ec))
            throw UsageError(flag + save + ": " + p.string() + " is a file, not a folder: checkpoints cannot be written there");
        if (::access(p.c_str(), W_OK) != 0)
            throw UsageError(flag + save + ": " + p.string() + " is not writable: checkpoints cannot be written there");
    });
}

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
    keep_freed_memory();  // each step reuses the last one's activation memory (attn/memory.hpp)
    Rng rng(c.seed, 0x7a1);
    AdamW opt(model.params(), c.opt);
    // One bar on a line: a run side by side with the caller's (attn/side_by_side.hpp) prints only its closing line.
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

PronounScore score_pronoun(LanguageModel& model, const std::vector<std::vector<int>>& sentences,
                           const std::vector<PronounTask::Answer>& answers) {
    require(sentences.size() == answers.size() && !sentences.empty(), "score_pronoun",
            std::to_string(sentences.size()) + " sentences for " + std::to_string(answers.size()) + " answers");
    std::vector<std::size_t> rows(sentences.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::vector<int> tokens, targets;
    make_batch(sentences, rows, tokens, targets);
    const std::size_t T = sentences.front().size() - 1;
    model.forward(tokens, targets, sentences.size(), T);
    const Mat& logits = model.logits();  // (B·T, V)
    PronounScore s;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
        const auto row = xt::row(logits, static_cast<std::ptrdiff_t>(i * T + PronounTask::kAnswerPosition));
        const int guess = static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
        const auto& a = answers[i];
        const int other = a.ref == a.x ? a.y : a.x;
        s.accuracy += guess == a.ref;
        s.wrong_noun += guess == other;
        s.elsewhere += guess != a.ref && guess != other;
    }
    const double n = static_cast<double>(sentences.size());
    s.accuracy /= n, s.wrong_noun /= n, s.elsewhere /= n;
    return s;
}

namespace {
// one sentence as a batch of one: inputs s[0 .. L−2], targets s[1 .. L−1]
void forward_one(LanguageModel& model, const std::vector<int>& sentence) {
    const std::vector<int> tokens(sentence.begin(), sentence.end() - 1), targets(sentence.begin() + 1, sentence.end());
    model.forward(tokens, targets, 1, tokens.size());
}
// row kAnswerPosition of (h, T, T) weights, averaged over the h heads → (T,)
Vec answer_row(const Tensor3& w, const std::string& where) {
    require(w.size() > 0, where, "this model has no attention");
    const std::size_t T = w.shape(1);
    Vec row = xt::zeros<float>({T});
    for (std::size_t h = 0; h < w.shape(0); ++h)
        for (std::size_t i = 0; i < T; ++i) row(i) += w(h, PronounTask::kAnswerPosition, i) / static_cast<float>(w.shape(0));
    return row;
}
}  // namespace

double mean_loss(LanguageModel& model, const std::vector<std::vector<int>>& sentences) {
    require(!sentences.empty(), "mean_loss", "no sentences");
    std::vector<std::size_t> rows(sentences.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::vector<int> tokens, targets;
    make_batch(sentences, rows, tokens, targets);
    return model.forward(tokens, targets, sentences.size(), sentences.front().size() - 1);
}

Vec answer_attention(reference::Model& model, const std::vector<int>& sentence, std::size_t layer) {
    require(layer < model.config().n_layers, "answer_attention",
            "block " + std::to_string(layer) + " of a " + std::to_string(model.config().n_layers) + "-block model");
    forward_one(model, sentence);
    return answer_row(model.attention_weights(layer), "answer_attention");
}

PronounRun train_pronoun(const PronounTask& task, const ModelConfig& config, const PronounSetup& setup, const std::string& name) {
    PronounRun run;
    run.name = name;
    std::unique_ptr<LanguageModel> model = make_cpu_model(config, setup.seed, setup.engine);
    run.params = model->params().count();
    PronounFit fit = fit_pronoun(*model, task, setup, name);
    run.model = as_reference_model(std::move(model), config);  // its attention maps are read on the reference engine
    run.log = std::move(fit.log);
    run.train = fit.train;
    run.heldout = fit.heldout;
    return run;
}

PronounRun train_pronoun(const PronounTask& task, Mixer mixer, std::size_t n_heads, const PronounSetup& setup,
                         const std::string& name) {
    return train_pronoun(task,
                         {.vocab = task.vocab.size(),
                          .max_T = PronounTask::kLength - 1,
                          .d_model = setup.d_model,
                          .n_heads = n_heads,
                          .mixer = mixer,
                          .d_ff = setup.d_ff,
                          .norm = setup.norm},
                         setup, name);
}

PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, const PronounSetup& setup, const std::string& name) {
    return fit_pronoun(model, task, train_config(setup, name));
}

PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, TrainConfig tc) {
    tc.eval_every = 100;  // held-out accuracy along the way: the plateau at 0.5, and the climb out of it
    tc.eval = [&] { return score_pronoun(model, task.heldout, task.heldout_answers).accuracy; };
    PronounFit fit;
    fit.log = train_lm(model, task.train, tc);
    fit.train = score_pronoun(model, task.train, task.train_answers);
    fit.heldout = score_pronoun(model, task.heldout, task.heldout_answers);
    fit.train_loss = mean_loss(model, task.train);
    fit.heldout_loss = mean_loss(model, task.heldout);
    return fit;
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

svg::Series loss_curve(const std::string& name, const std::vector<double>& losses, std::size_t window,
                       const std::string& colour, bool dashed) {
    svg::Series curve{name, {}, {}, colour, dashed};
    const std::vector<double> means = smooth(losses, window);
    for (std::size_t j = 0; j < means.size(); ++j) curve.x.push_back(static_cast<double>((j + 1) * window)), curve.y.push_back(means[j]);
    return curve;
}

}  // namespace attn
