#include "chapters/12_language_model/generate.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "attn/checkpoint.hpp"
#include "attn/device.hpp"
#include "attn/error.hpp"
#include "attn/optim.hpp"
#include "attn/sample.hpp"
#include "chapters/12_language_model/ladder.hpp"

namespace attn::sec12 {

namespace {
// "ffn-seed0" → "ffn": the part of a run's folder that names the rung
std::string rung_slug(const std::string& name) {
    const std::string folder = run_folder(name, 0);
    return folder.substr(0, folder.size() - std::string("-seed0").size());
}

// The training seeds DIR holds a checkpoint of this rung for (folders <slug>-seed<N> with a `latest`), smallest first.
std::vector<std::uint64_t> saved_seeds(const std::string& dir, const std::string& name) {
    std::vector<std::uint64_t> seeds;
    const std::string stem = rung_slug(name) + "-seed";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        const std::string folder = entry.path().filename().string();
        if (folder.size() <= stem.size() || folder.compare(0, stem.size(), stem) != 0) continue;
        const std::string digits = folder.substr(stem.size());
        if (digits.size() > 19 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
        if (std::filesystem::exists(entry.path() / "latest")) seeds.push_back(std::stoull(digits));
    }
    std::sort(seeds.begin(), seeds.end());
    return seeds;
}
}  // namespace

void generate(std::ostream& os, const Corpus& corpus, const LmSetup& s, const GenerateSetup& g) {
    const std::vector<LadderRung> rungs = ladder_rungs(corpus.vocab_size(), s);
    std::vector<const LadderRung*> saved;  // the rungs DIR holds a checkpoint of
    std::string names;
    for (const LadderRung& r : rungs) {
        if (!saved_seeds(g.dir, r.name).empty()) {
            saved.push_back(&r);
            names += (names.empty() ? "" : ", ") + ("'" + r.name + "' (" + rung_slug(r.name) + ")");
        }
    }
    require(!saved.empty(), "generate",
            g.dir + " holds no ladder model (expected folders such as " + g.dir + "/" + run_folder(rungs.back().name, 0) +
                "/latest): train one with `12_language_model ladder --save " + g.dir + "` at this size");
    const LadderRung* rung = saved.back();  // the fullest rung saved
    if (!g.model.empty()) {
        rung = nullptr;
        for (const LadderRung& r : rungs)
            if (r.name == g.model || rung_slug(r.name) == g.model) rung = &r;
        require(rung != nullptr, "generate", "--model '" + g.model + "' is no rung of the ladder; " + g.dir + " holds " + names);
        require(std::find(saved.begin(), saved.end(), rung) != saved.end(), "generate",
                "--model '" + g.model + "': " + g.dir + " holds no checkpoint of it; it holds " + names);
    }
    const std::uint64_t trained_seed = saved_seeds(g.dir, rung->name).front();  // the first training seed saved
    require(!g.prompt.empty(), "generate", "--prompt is empty: give some text to continue");
    // The prompt through the tokenizer the models trained with: the BPE saved beside them, where the run saved one. It
    // must be the one these flags build, token for token (else the rungs' ids would mean other text).
    std::vector<int> prompt;
    const std::string saved_bpe = g.dir + "/" + kTokenizerFile;
    if (std::filesystem::exists(saved_bpe)) {
        const Bpe bpe = Bpe::load(saved_bpe);
        bool same = corpus.bpe != nullptr && bpe.vocab_size() == corpus.vocab_size();
        for (std::size_t id = 0; same && id < bpe.vocab_size(); ++id) same = bpe.bytes_of(static_cast<int>(id)) == corpus.pieces[id];
        require(same, "generate",
                saved_bpe + " (" + std::to_string(bpe.vocab_size()) + " tokens) is not the tokenizer these flags build (" +
                    tokenizer_name(corpus.tokenizer) + ", " + std::to_string(corpus.vocab_size()) +
                    " tokens): give the --corpus, --tokenizer and --vocab the models trained with");
        prompt = bpe.encode(g.prompt);
    } else {
        prompt = corpus.encode(g.prompt);
    }

    // The rung as it trained (on the CPU: drawing a few hundred tokens needs no GPU), its weights from DIR.
    const std::unique_ptr<LanguageModel> model = make_model(rung->config, trained_seed, Device::cpu, s.engine);
    AdamW opt(model->params(), {});
    Rng unused_sampler(trained_seed);
    const std::string folder = g.dir + "/" + run_folder(rung->name, trained_seed);
    CheckpointInfo info;
    try {
        info = load_checkpoint(folder, model->describe(), model->params(), opt, unused_sampler);
    } catch (const Error& e) {  // most often a model saved at another size: say how to ask for it
        throw Error(std::string(e.what()) + "\n  generate rebuilds the rung at the size and tokenizer its flags give: use the ones it "
                                            "trained with (--quick, --full, --tokenizer)");
    }
    os << "model: '" << rung->name << "', " << folder << " (step " << info.step << ", training loss " << info.loss << ")\n"
       << "drawing " << g.tokens << " tokens at temperature " << g.temperature
       << (g.top_k > 0 ? ", from the " + std::to_string(g.top_k) + " likeliest each time" : std::string()) << ", draws from --seed "
       << g.seed << "\n\n";
    os << g.prompt << std::flush;
    std::vector<int> text = prompt;
    Rng rng(g.seed, 0x9e4);
    for (std::size_t i = 0; i < g.tokens; ++i) {
        // one token at a time, printed as drawn: sample() makes one draw per token, so this is one long call's text
        const int next = sample(*model, text, 1, g.temperature, s.T, rng, g.top_k).front();
        text.push_back(next);
        os << corpus.pieces.at(static_cast<std::size_t>(next)) << std::flush;
    }
    os << "\n";
}

}  // namespace attn::sec12
