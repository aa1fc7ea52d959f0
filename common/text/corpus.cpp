#include "text/corpus.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/format.hpp"
#include "text/bpe.hpp"

namespace attn {

namespace {
struct Kind {
    const char* noun;
    const char* pronoun;  // he / she: fixed by the kind, so a story's pronoun depends on its opening line
    const char* possessive;
};
constexpr std::array<Kind, 12> kKinds{{{"fox", "she", "her"},    {"bear", "he", "his"},    {"owl", "she", "her"},
                                       {"wolf", "he", "his"},    {"hare", "she", "her"},   {"crow", "he", "his"},
                                       {"mouse", "she", "her"},  {"badger", "he", "his"},  {"otter", "she", "her"},
                                       {"goat", "he", "his"},    {"heron", "she", "her"},  {"beaver", "he", "his"}}};
constexpr std::array<const char*, 16> kNames{"Ana", "Bo", "Cora", "Dov", "Eli", "Fay", "Gus", "Hana",
                                             "Ivo", "Jun", "Kit", "Lio", "Mara", "Ned", "Oda", "Pim"};
constexpr std::array<const char*, 10> kHomes{"forest", "river", "valley", "meadow", "hill",
                                             "marsh",  "cave",  "garden", "field",  "lake"};
constexpr std::array<const char*, 8> kSizes{"small", "old", "young", "quiet", "clever", "brave", "tired", "happy"};
constexpr std::array<const char*, 12> kThings{"apple", "stone", "feather", "bell", "basket", "map",
                                              "key",   "coat",  "lamp",    "boat", "drum",   "book"};
constexpr std::array<const char*, 8> kColours{"red", "blue", "green", "yellow", "white", "black", "brown", "grey"};
constexpr std::array<const char*, 8> kFound{"found", "lost", "carried", "dropped", "painted", "hid", "cleaned", "sold"};
constexpr std::array<const char*, 6> kWhere{"near", "under", "behind", "beside", "inside", "past"};
constexpr std::array<const char*, 6> kPlaces{"bridge", "tree", "wall", "gate", "well", "road"};
constexpr std::array<const char*, 6> kFeel{"smiled", "laughed", "sang", "sighed", "waited", "danced"};
constexpr std::array<const char*, 4> kSaid{"said", "asked", "called", "whispered"};

template <std::size_t N>
const char* pick(const std::array<const char*, N>& words, Rng& rng) {
    return words[static_cast<std::size_t>(rng.below(N))];
}

// One story: an opening that names the hero, a few events, and an ending that returns home.
void story(std::ostringstream& out, Rng& rng) {
    const Kind& kind = kKinds[static_cast<std::size_t>(rng.below(kKinds.size()))];
    const char* name = pick(kNames, rng);
    const char* home = pick(kHomes, rng);
    std::string he = kind.pronoun, his = kind.possessive;
    std::string He = he, His = his;
    He[0] = static_cast<char>(He[0] - 'a' + 'A'), His[0] = static_cast<char>(His[0] - 'a' + 'A');
    out << "Once there was a " << pick(kSizes, rng) << " " << kind.noun << " called " << name << ". " << name
        << " lived in the " << home << ".";
    const std::size_t events = 3 + static_cast<std::size_t>(rng.below(4));
    const char* thing = pick(kThings, rng);  // the story's object, named again later
    for (std::size_t e = 0; e < events; ++e) {
        out << " ";
        switch (rng.below(5)) {
            case 0:
                out << He << " " << pick(kFound, rng) << " the " << thing << " " << pick(kWhere, rng) << " the "
                    << pick(kPlaces, rng) << ".";
                break;
            case 1:
                out << "The " << thing << " was " << pick(kColours, rng) << ", so " << name << " " << pick(kFeel, rng) << ".";
                break;
            case 2:
                out << "\"I like " << his << " " << thing << ",\" " << pick(kSaid, rng) << " the " << pick(kSizes, rng) << " "
                    << kKinds[static_cast<std::size_t>(rng.below(kKinds.size()))].noun << ".";
                break;
            case 3:
                out << "\"Where is my " << thing << "?\" " << pick(kSaid, rng) << " " << name << ".";
                break;
            default:
                out << His << " friend " << pick(kNames, rng) << " " << pick(kFeel, rng) << " " << pick(kWhere, rng) << " the "
                    << pick(kPlaces, rng) << ".";
        }
    }
    out << " In the end, " << name << " took the " << thing << " and went back to the " << home << ".\n";
}

// The offset of the first byte that breaks UTF-8, or npos.
std::size_t invalid_utf8(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        if (len == 0 || i + len > s.size()) return i;
        for (std::size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return i;
        i += len;
    }
    return std::string::npos;
}
}  // namespace

std::string generate_stories(std::uint64_t seed, std::size_t bytes) {
    Rng rng(seed, 0xc0);
    std::ostringstream out;
    while (static_cast<std::size_t>(out.tellp()) < bytes) story(out, rng);
    return out.str();
}

const char* tokenizer_name(Tokenizer t) { return t == Tokenizer::bpe ? "bpe" : "bytes"; }

std::string Corpus::decode(const std::vector<int>& tokens) const {
    std::string s;
    for (int t : tokens) s += pieces.at(static_cast<std::size_t>(t));
    return s;
}

std::vector<int> Corpus::encode(std::string_view text) const {
    if (bpe) return bpe->encode(text);
    std::vector<int> ids;
    for (const char ch : text) {
        const auto b = static_cast<unsigned char>(ch);
        const auto at = std::find(vocab.begin(), vocab.end(), b);
        if (at == vocab.end()) {
            throw Error("encode: the byte 0x" + fmt_hex_byte(b) + " at offset " + std::to_string(ids.size()) +
                        " is not in " + source + "'s byte vocabulary (" + std::to_string(vocab.size()) +
                        " bytes)");
        }
        ids.push_back(static_cast<int>(at - vocab.begin()));
    }
    return ids;
}

double Corpus::tokens_per_character() const {
    return static_cast<double>(train.size() + heldout.size()) / static_cast<double>(characters);
}

const char* Corpus::unit() const { return tokenizer == Tokenizer::bpe ? "BPE token" : "byte"; }

std::size_t count_characters(std::string_view s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) >> 6) != 0x2;
    return n;
}

std::size_t split_offset(const std::string& text, Tokenizer tokenizer) {
    std::size_t split = text.size() * 9 / 10;
    if (tokenizer == Tokenizer::bpe)
        while (split > 0 && (static_cast<unsigned char>(text[split]) >> 6) == 0x2) --split;  // not inside a character
    return split;
}

Corpus make_corpus(const std::string& text, const std::string& source, std::size_t min_heldout) {
    return make_corpus(text, source, CorpusOptions{.min_heldout = min_heldout});
}

Corpus make_corpus(const std::string& text, const std::string& source, const CorpusOptions& o) {
    require(!text.empty(), "corpus", source + " is empty");
    const std::size_t need = 10 * o.min_heldout;
    require(text.size() >= need, "corpus",
            source + " has " + std::to_string(text.size()) + " bytes; the experiments need at least " +
                std::to_string(need) + " (a 90/10 split with " + std::to_string(o.min_heldout) + " held-out tokens)");
    Corpus c;
    c.source = source, c.bytes = text.size(), c.tokenizer = o.tokenizer, c.characters = count_characters(text);
    const std::size_t split = split_offset(text, o.tokenizer);
    if (o.tokenizer == Tokenizer::bpe) {
        const std::string_view train_text = std::string_view(text).substr(0, split), heldout_text = std::string_view(text).substr(split);
        const auto bpe = std::make_shared<const Bpe>(Bpe::train(train_text, o.vocab, o.split));  // the training part only: the held-out text shapes no merge
        for (int id = 0; id < static_cast<int>(bpe->vocab_size()); ++id) c.pieces.push_back(bpe->bytes_of(id));
        c.train = bpe->encode(train_text), c.heldout = bpe->encode(heldout_text);
        c.bpe = bpe;
        return c;
    }
    std::array<int, 256> id{};
    id.fill(-1);
    for (unsigned char b : text) id[b] = 0;
    for (int b = 0; b < 256; ++b)
        if (id[static_cast<std::size_t>(b)] == 0) {
            id[static_cast<std::size_t>(b)] = static_cast<int>(c.vocab.size());
            c.vocab.push_back(static_cast<unsigned char>(b));
            c.pieces.emplace_back(1, static_cast<char>(b));
        }
    c.train.reserve(split), c.heldout.reserve(text.size() - split);
    for (std::size_t i = 0; i < text.size(); ++i)
        (i < split ? c.train : c.heldout).push_back(id[static_cast<unsigned char>(text[i])]);
    return c;
}

Corpus load_corpus(const std::string& path, std::size_t min_heldout) {
    return load_corpus(path, CorpusOptions{.min_heldout = min_heldout});
}

Corpus load_corpus(const std::string& path, const CorpusOptions& options) {
    std::ifstream in(path, std::ios::binary);
    require(in.good(), "--corpus", "cannot open " + path + " (missing or unreadable)");
    require(std::filesystem::is_regular_file(path), "--corpus", path + " is not a regular file");
    std::ostringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    require(!text.empty(), "--corpus", path + " is empty");
    const std::size_t nul = text.find('\0');
    require(nul == std::string::npos, "--corpus", path + " looks binary: a NUL byte at offset " + std::to_string(nul));
    const std::size_t bad = invalid_utf8(text);
    require(bad == std::string::npos, "--corpus", path + " is not UTF-8 text: invalid byte at offset " + std::to_string(bad));
    return make_corpus(text, path, options);
}

#ifndef ATTN_SHAKESPEARE
#error "ATTN_SHAKESPEARE (the path of tiny Shakespeare) is set by common/CMakeLists.txt"
#endif
std::string shakespeare_path() { return ATTN_SHAKESPEARE; }

const char* const kCorpusHelp =
    "the text: shakespeare (the chapter's, 1,115,394 characters, shipped with the programs), stories (generated "
    "English-like stories) or a UTF-8 file's path";

Corpus named_corpus(const std::string& name, const CorpusOptions& options, std::size_t stories_bytes) {
    if (name == "stories") {
        CorpusOptions o = options;
        o.split = Split::none;  // 124 distinct words: cut into words they run out of pairs below 1024 (bpe.hpp)
        return make_corpus(generate_stories(0, stories_bytes), "generated stories (seed 0)", o);
    }
    if (name == "shakespeare") {
        Corpus c = load_corpus(shakespeare_path(), options);
        c.source = kShakespeare;
        return c;
    }
    return load_corpus(name, options);
}

void sample_windows(const std::vector<int>& data, std::size_t B, std::size_t T, Rng& rng, std::vector<int>& tokens,
                    std::vector<int>& targets) {
    require(T > 0 && data.size() >= T + 1, "sample_windows",
            std::to_string(data.size()) + " tokens cannot give windows of T + 1 = " + std::to_string(T + 1));
    tokens.resize(B * T), targets.resize(B * T);
    for (std::size_t b = 0; b < B; ++b) {
        const std::size_t start = static_cast<std::size_t>(rng.below(data.size() - T));
        std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(start), T, tokens.begin() + static_cast<std::ptrdiff_t>(b * T));
        std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(start + 1), T, targets.begin() + static_cast<std::ptrdiff_t>(b * T));
    }
}

Evaluation evaluate(LanguageModel& model, const std::vector<int>& data, std::size_t T, std::size_t max_windows,
                    std::size_t batch) {
    require(!data.empty() && T > 0, "evaluate", std::to_string(data.size()) + " tokens and T = " + std::to_string(T) + ": nothing to evaluate");
    const std::size_t windows = std::min(max_windows, (data.size() - 1) / T);
    require(windows > 0 && batch > 0, "evaluate",
            std::to_string(data.size()) + " tokens hold no window of T = " + std::to_string(T));
    double sum = 0;
    std::size_t counted = 0;
    std::vector<int> tokens, targets;
    for (std::size_t w0 = 0; w0 < windows; w0 += batch) {
        const std::size_t n = std::min(batch, windows - w0);
        tokens.clear(), targets.clear();
        for (std::size_t w = w0; w < w0 + n; ++w) {
            const auto start = data.begin() + static_cast<std::ptrdiff_t>(w * T);
            tokens.insert(tokens.end(), start, start + static_cast<std::ptrdiff_t>(T));
            targets.insert(targets.end(), start + 1, start + 1 + static_cast<std::ptrdiff_t>(T));
        }
        sum += model.forward(tokens, targets, n, T) * static_cast<double>(n * T);
        counted += n * T;
    }
    Evaluation e;
    e.loss = sum / static_cast<double>(counted), e.tokens = counted, e.perplexity = std::exp(e.loss);
    return e;
}

double Evaluation::bits_per_character() const {
    if (characters == 0) return std::numeric_limits<double>::quiet_NaN();
    return loss * static_cast<double>(tokens) / (static_cast<double>(characters) * std::log(2.0));
}

Evaluation evaluate(LanguageModel& model, const Corpus& corpus, const std::vector<int>& data, std::size_t T, std::size_t max_windows,
                    std::size_t batch) {
    Evaluation e = evaluate(model, data, T, max_windows, batch);
    // the targets scored: tokens 1..T of each window, windows back to back from the start (as evaluate reads them)
    const std::size_t windows = e.tokens / T;
    for (std::size_t w = 0; w < windows; ++w)
        for (std::size_t i = w * T + 1; i <= w * T + T; ++i) e.characters += count_characters(corpus.pieces.at(static_cast<std::size_t>(data[i])));
    return e;
}

double bits_per_character(double perplexity, double characters_per_token) { return std::log2(perplexity) / characters_per_token; }

}  // namespace attn
