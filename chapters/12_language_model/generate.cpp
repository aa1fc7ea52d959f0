#include "chapters/12_language_model/generate.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "gpu/placement.hpp"
#include "text/bpe.hpp"
#include "text/sample.hpp"
#include "train/checkpoint.hpp"
#include "train/optim.hpp"

namespace attn::sec12 {

namespace {

struct Saved {
    std::string folder, name, short_name;  // DIR/ffn-seed0, "ffn-seed0", "ffn"
    CheckpointInfo info;
};

// Every folder of DIR that holds a checkpoint (or DIR itself, when it is one), by its training seed, then its name; a
// folder whose manifest cannot be read is left out and named in `unreadable`.
std::vector<Saved> saved_models(const std::string& dir, std::string& unreadable) {
    namespace fs = std::filesystem;
    std::vector<fs::path> folders;
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "latest" / "manifest.txt")) folders.push_back(fs::path(dir));
    else
        for (const auto& entry : fs::directory_iterator(dir, ec))
            if (fs::exists(entry.path() / "latest" / "manifest.txt")) folders.push_back(entry.path());
    std::vector<Saved> found;
    for (const fs::path& folder : folders) {
        Saved s;
        s.folder = folder.string(), s.name = folder.lexically_normal().filename().string();
        if (s.name.empty()) s.name = folder.lexically_normal().parent_path().filename().string();
        try {
            s.info = read_checkpoint_info(s.folder + "/latest");
        } catch (const Error& e) {
            unreadable += std::string(unreadable.empty() ? "" : "; ") + e.what();
            continue;
        }
        const std::string tail = "-seed" + std::to_string(s.info.seed);
        s.short_name = s.name.size() > tail.size() && s.name.ends_with(tail) ? s.name.substr(0, s.name.size() - tail.size()) : s.name;
        found.push_back(std::move(s));
    }
    std::sort(found.begin(), found.end(), [](const Saved& a, const Saved& b) { return std::tie(a.info.seed, a.name) < std::tie(b.info.seed, b.name); });
    return found;
}

}  // namespace

void generate(std::ostream& os, const Corpus& corpus, const GenerateSetup& g) {
    std::string unreadable;
    const std::vector<Saved> saved = saved_models(g.dir, unreadable);
    require(!saved.empty(), "generate",
            g.dir + " holds no saved model (a folder with latest/manifest.txt)" + (unreadable.empty() ? "" : " that can be read (" + unreadable + ")") +
                ": train one with, e.g., `12_language_model ladder --save " + g.dir + "`");
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

    // The tokenizer the model trained with: the BPE a run saved beside its models (in DIR, or above a model's own
    // folder), where its vocabulary is the model's; else the one the flags build (--corpus, --tokenizer, --vocab).
    std::optional<Bpe> bpe;
    std::string saved_bpe;
    for (const std::filesystem::path& at : {std::filesystem::path(g.dir), std::filesystem::path(chosen->folder).lexically_normal().parent_path()})
        if (saved_bpe.empty() && std::filesystem::exists(at / kTokenizerFile)) saved_bpe = (at / kTokenizerFile).string();
    if (!saved_bpe.empty()) {
        Bpe b = Bpe::load(saved_bpe);
        if (b.vocab_size() == config.vocab) bpe = std::move(b);
    }
    const std::size_t vocab = bpe ? bpe->vocab_size() : corpus.vocab_size();
    require(vocab == config.vocab, "generate",
            chosen->name + " reads " + std::to_string(config.vocab) + " tokens, but the " + tokenizer_name(corpus.tokenizer) +
                " tokenizer of " + corpus.source + " has " + std::to_string(vocab) +
                (saved_bpe.empty() ? "" : " (and " + saved_bpe + " another vocabulary)") +
                ": give the --corpus, --tokenizer and --vocab it trained with");
    require(!g.prompt.empty(), "generate", "--prompt is empty: give some text to continue");
    const std::vector<int> prompt = bpe ? bpe->encode(g.prompt) : corpus.encode(g.prompt);
    const auto piece = [&](int id) -> const std::string& { return bpe ? bpe->bytes_of(id) : corpus.pieces.at(static_cast<std::size_t>(id)); };

    // The model as it trained (on the CPU: a few hundred tokens need no GPU), its weights from DIR.
    const std::unique_ptr<LanguageModel> model = make_model(config, chosen->info.seed, Device::cpu, g.engine);
    AdamW opt(model->params(), {});
    Rng unused_sampler(chosen->info.seed);
    const CheckpointInfo info = load_checkpoint(chosen->folder, model->describe(), model->params(), opt, unused_sampler);
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
