// Text for the language-model experiments (003's ladder, the √d_k ablation, warmup, positions).
//
// The chapter trains on a megabyte of Shakespeare. So that nothing has to be downloaded, the default
// corpus is generated: short stories in plain English-like text whose next character depends on
//   - word order (determiner → adjective → noun → verb; "said Ana" after a closing quote),
//   - tokens far back: each story opens by naming its hero, the hero's kind (which fixes he/she)
//     and home; later sentences say the name, the right pronoun and "went back to the {home}"
//     tens to hundreds of characters after they were introduced,
// so that averaging, learned attention and positions make measurable differences. Deterministic given
// the seed. `--corpus FILE` takes any UTF-8 text instead (e.g. tiny Shakespeare; see the README).
//
// Tokens are bytes; the vocabulary is the set of bytes the text contains (a few dozen for English),
// numbered in byte order. The first 90 % of the tokens train, the last 10 % are held out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/language_model.hpp"
#include "attn/rng.hpp"

namespace attn {

std::string generate_stories(std::uint64_t seed, std::size_t bytes);

struct Corpus {
    std::string source;                 // "generated stories (seed 0)" or the file's path
    std::vector<unsigned char> vocab;   // token id → byte
    std::vector<int> train, heldout;    // token ids, 90 % / 10 %
    std::size_t bytes = 0;
    std::size_t vocab_size() const { return vocab.size(); }
    std::string decode(const std::vector<int>& tokens) const;
};

// The text → byte tokens, split 90/10. Throws attn::Error when the text is too short to give
// `min_heldout` held-out tokens.
Corpus make_corpus(const std::string& text, const std::string& source, std::size_t min_heldout = 1024);
// A UTF-8 text file. Clear errors (naming the file) for a missing or unreadable file, an empty one, a
// binary one (a NUL byte or invalid UTF-8, with its offset) and one too short for the experiments.
Corpus load_corpus(const std::string& path, std::size_t min_heldout = 1024);

// B random windows of T + 1 tokens from data: inputs the first T, targets the last T → (B·T) each.
void sample_windows(const std::vector<int>& data, std::size_t B, std::size_t T, Rng& rng, std::vector<int>& tokens,
                    std::vector<int>& targets);

// Mean next-token loss over consecutive, non-overlapping windows of T tokens (at most max_windows,
// evaluated `batch` windows per forward), and its exponential, the perplexity.
struct Evaluation {
    double loss = 0, perplexity = 0;
    std::size_t tokens = 0;
};
Evaluation evaluate(LanguageModel& model, const std::vector<int>& data, std::size_t T, std::size_t max_windows = 64,
                    std::size_t batch = 16);

}  // namespace attn
