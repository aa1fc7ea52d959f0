#include "chapters/12_language_model/generate.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "attn/bpe.hpp"
#include "attn/checkpoint.hpp"
#include "attn/config.hpp"
#include "attn/device.hpp"
#include "attn/error.hpp"
#include "attn/optim.hpp"
#include "attn/sample.hpp"

namespace attn::sec12 {

namespace {

struct Saved {
    std::string folder, name, short_name;  // DIR/ffn-seed0, "ffn-seed0", "ffn"
    CheckpointInfo info;
};

// Every folder of DIR that holds a checkpoint, by its training seed, then its name.
std::vector<Saved> saved_models(const std::string& dir) {
    std::vector<Saved> found;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (!std::filesystem::exists(entry.path() / "latest" / "manifest.txt")) continue;
        Saved s;
        s.folder = entry.path().string(), s.name = entry.path().filename().string();
        s.info = read_checkpoint_info(s.folder + "/latest");
        const std::string tail = "-seed" + std::to_string(s.info.seed);
        s.short_name = s.name.size() > tail.size() && s.name.ends_with(tail) ? s.name.substr(0, s.name.size() - tail.size()) : s.name;
        found.push_back(std::move(s));
    }
    std::sort(found.begin(), found.end(), [](const Saved& a, const Saved& b) { return std::tie(a.info.seed, a.name) < std::tie(b.info.seed, b.name); });
    return found;
}

}  // namespace

void generate(std::ostream& os, const Corpus& corpus, const GenerateSetup& g) {
    const std::vector<Saved> saved = saved_models(g.dir);
    require(!saved.empty(), "generate",
            g.dir + " holds no saved model (a folder with latest/manifest.txt): train one with, e.g., `12_language_model ladder "
                    "--save " + g.dir + "`");
    std::string names;
    for (const Saved& s : saved) names += (names.empty() ? "" : ", ") + s.name;
    // The model asked for: by folder, by folder without its seed, or by its run's label; the first seed among several.
    const auto pick = [&](const std::string& want) -> const Saved* {
        for (const Saved& s : saved)
            if (s.name == want || s.short_name == want || s.info.experiment == want) return &s;
        return nullptr;
    };
    const Saved* chosen = nullptr;
    if (!g.model.empty()) {
        chosen = pick(g.model);
        require(chosen != nullptr, "generate", "--model '" + g.model + "': " + g.dir + " holds no such model; it holds " + names);
    } else {
        chosen = pick("layernorm-full-block");  // the ladder's full block
        const bool one = std::all_of(saved.begin(), saved.end(), [&](const Saved& s) { return s.short_name == saved.front().short_name; });
        if (chosen == nullptr && one) chosen = &saved.front();
        require(chosen != nullptr, "generate", g.dir + " holds several models and no full block of the ladder: choose one with --model (" + names + ")");
    }
    const ModelConfig config = parse_config(chosen->info.config);

    // The tokenizer the model trained with: the BPE saved beside it, else the byte tokenizer of --corpus.
    std::optional<Bpe> bpe;
    const std::string saved_bpe = g.dir + "/" + kTokenizerFile;
    if (std::filesystem::exists(saved_bpe)) bpe = Bpe::load(saved_bpe);
    const std::size_t vocab = bpe ? bpe->vocab_size() : corpus.vocab_size();
    require(vocab == config.vocab, "generate",
            chosen->name + " reads " + std::to_string(config.vocab) + " tokens, but " +
                (bpe ? saved_bpe + " has " : "the " + std::string(tokenizer_name(corpus.tokenizer)) + " tokenizer of " + corpus.source + " has ") +
                std::to_string(vocab) + (bpe ? "" : ": give the --corpus and --tokenizer it trained with"));
    require(!g.prompt.empty(), "generate", "--prompt is empty: give some text to continue");
    const std::vector<int> prompt = bpe ? bpe->encode(g.prompt) : corpus.encode(g.prompt);
    const auto piece = [&](int id) -> const std::string& { return bpe ? bpe->bytes_of(id) : corpus.pieces.at(static_cast<std::size_t>(id)); };

    // The model as it trained (on the CPU: a few hundred tokens need no GPU), its weights from DIR.
    const std::unique_ptr<LanguageModel> model = make_model(config, chosen->info.seed, Device::cpu, g.engine);
    AdamW opt(model->params(), {});
    Rng unused_sampler(chosen->info.seed);
    const CheckpointInfo info = load_checkpoint(chosen->folder, chosen->info.config, model->params(), opt, unused_sampler);
    os << "model: '" << info.experiment << "', " << chosen->folder << " (step " << info.step << ", training loss " << info.loss << ")\n"
       << "  " << describe(config) << "\n"
       << "drawing " << g.tokens << " tokens at temperature " << g.temperature
       << (g.top_k > 0 ? ", from the " + std::to_string(g.top_k) + " likeliest each time" : std::string()) << ", draws from --seed "
       << g.seed << "\n\n";
    os << g.prompt << std::flush;
    std::vector<int> text = prompt;
    Rng rng(g.seed, 0x9e4);
    for (std::size_t i = 0; i < g.tokens; ++i) {
        // one token at a time, printed as drawn: sample() makes one draw per token, so this is one long call's text
        const int next = sample(*model, text, 1, g.temperature, config.max_T, rng, g.top_k).front();
        text.push_back(next);
        os << piece(next) << std::flush;
    }
    os << "\n";
}

}  // namespace attn::sec12
