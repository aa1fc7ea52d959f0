// Text for the trained language-model experiments (the ladder, the √d_k ablation, warmup, positions).
//
// The chapter trains on a megabyte of Shakespeare, which ships with the programs. The other text, made by
// generate_stories: short stories in plain English-like text whose next character depends on
//   - word order (determiner → adjective → noun → verb; "said Ana" after a closing quote),
//   - tokens far back: each story opens by naming its hero, the hero's kind (which fixes he/she)
//     and home; later sentences say the name, the right pronoun and "went back to the {home}"
//     tens to hundreds of characters after they were introduced,
// so that averaging, learned attention and positions make measurable differences. Deterministic given
// the seed. The experiments train on the chapter's text, tiny Shakespeare (shipped in
// chapters/12_language_model/data/), by default: `--corpus stories` names these, `--corpus FILE` any UTF-8 text.
//
// Two tokenizers (CorpusOptions::tokenizer):
//   bytes  tokens are bytes; the vocabulary is the set of bytes the text contains (a few dozen for
//          English), numbered in byte order. The first 90 % of the tokens train, the last 10 % are held out.
//   bpe    the chapter's: byte-level BPE (text/bpe.hpp) with a vocabulary of `vocab` (1024 in the chapter).
//          The text is split 90/10 first (at a character boundary); the merges are learned on the training
//          90 % alone, so the held-out text is tokenized by rules it did not shape; then both parts are
//          encoded. Token ids are BPE ids (0 … vocab − 1; the 256 byte tokens are all in the vocabulary).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/language_model.hpp"
#include "core/rng.hpp"
#include "text/bpe.hpp"

namespace attn {

std::string generate_stories(std::uint64_t seed, std::size_t bytes);

enum class Tokenizer { bytes, bpe };
const char* tokenizer_name(Tokenizer t);  // "bytes", "bpe"

struct Corpus {
    std::string source;                 // "generated stories (seed 0)" or the file's path
    Tokenizer tokenizer = Tokenizer::bytes;
    std::vector<unsigned char> vocab;   // bytes: token id → byte (empty under bpe)
    std::vector<std::string> pieces;    // token id → the bytes it stands for (either tokenizer)
    std::vector<int> train, heldout;    // token ids, 90 % / 10 %
    std::size_t bytes = 0;
    std::size_t characters = 0;         // UTF-8 code points of the whole text
    std::size_t vocab_size() const { return pieces.size(); }
    std::string decode(const std::vector<int>& tokens) const;
    // Text → token ids by this corpus's tokenizer (a prompt). Under bpe any bytes encode; under bytes a byte the
    // text never holds has no id: attn::Error naming it.
    std::vector<int> encode(std::string_view text) const;
    std::shared_ptr<const Bpe> bpe;       // bpe: its merges, learned on the training part (null under bytes)
    double tokens_per_character() const;  // (train + held-out tokens) / characters
    const char* unit() const;             // what one token is: "byte" or "BPE token"
};

struct CorpusOptions {
    Tokenizer tokenizer = Tokenizer::bytes;
    std::size_t vocab = 1024;        // bpe only: 256 byte tokens + vocab − 256 merges
    Split split = Split::gpt2;       // bpe only: cut into words first, as GPT-2 and the chapter (the stories: none)
    std::size_t min_heldout = 1024;  // the text must hold 10 × this many bytes
};

// The text → tokens, split 90/10. Throws attn::Error when the text is too short to give `min_heldout`
// held-out bytes, or (bpe) when its training part runs out of pairs before the vocabulary is full.
Corpus make_corpus(const std::string& text, const std::string& source, std::size_t min_heldout = 1024);
Corpus make_corpus(const std::string& text, const std::string& source, const CorpusOptions& options);
// A UTF-8 text file. Clear errors (naming the file) for a missing or unreadable file, an empty one, a
// binary one (a NUL byte or invalid UTF-8, with its offset) and one too short for the experiments.
Corpus load_corpus(const std::string& path, std::size_t min_heldout = 1024);
Corpus load_corpus(const std::string& path, const CorpusOptions& options);

// The chapter's text, shipped with the programs: tiny Shakespeare (chapters/12_language_model/data/), 1,115,394
// characters; the path is the source tree's, compiled in.
std::string shakespeare_path();
inline constexpr const char* kShakespeare = "tiny Shakespeare";  // its Corpus::source
// What --corpus names: "shakespeare" (the chapter's text), "stories" (generated, seed 0, `stories_bytes` long;
// always cut with Split::none, see bpe.hpp) or the path of a UTF-8 text file.
Corpus named_corpus(const std::string& name, const CorpusOptions& options, std::size_t stories_bytes = 1'000'000);
// The one-line help of a program's --corpus flag.
extern const char* const kCorpusHelp;

// The byte offset where make_corpus splits `text` into training and held-out parts: 90 % of the bytes,
// moved back to the start of a UTF-8 character under bpe (bytes keeps the plain 90 %).
std::size_t split_offset(const std::string& text, Tokenizer tokenizer);
// UTF-8 code points in s (a byte that starts no character, 10xxxxxx, is not counted).
std::size_t count_characters(std::string_view s);

// B random windows of T + 1 tokens from data: inputs the first T, targets the last T → (B·T) each.
void sample_windows(const std::vector<int>& data, std::size_t B, std::size_t T, Rng& rng, std::vector<int>& tokens,
                    std::vector<int>& targets);

// Mean next-token loss over consecutive, non-overlapping windows of T tokens (at most max_windows,
// evaluated `batch` windows per forward), and its exponential, the perplexity.
struct Evaluation {
    double loss = 0, perplexity = 0;  // mean nats per token, and exp of it
    std::size_t tokens = 0;           // the targets scored
    std::size_t characters = 0;       // the characters those targets stand for (0: not counted)
    // Bits per character: the same loss in units that do not depend on the tokenizer (NaN when not counted).
    double bits_per_character() const;
};
Evaluation evaluate(LanguageModel& model, const std::vector<int>& data, std::size_t T, std::size_t max_windows = 64,
                    std::size_t batch = 16);
// The same, with the characters its targets stand for counted (UTF-8 code points of their pieces), for data
// that is corpus's train or heldout.
Evaluation evaluate(LanguageModel& model, const Corpus& corpus, const std::vector<int>& data, std::size_t T, std::size_t max_windows = 64,
                    std::size_t batch = 16);

// A perplexity per token at `characters_per_token` characters a token, in bits per character: log2(ppl) / that.
double bits_per_character(double perplexity, double characters_per_token);

}  // namespace attn
