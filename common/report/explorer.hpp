// The explorer page (explorer.html): trained models read a few passages, and a learner looks inside.
//
// The text is shown as its tokens, each coloured by the model's surprise at it (the loss on predicting it from
// the tokens before). Pointing at a token shows, for the chosen model and head, a line to every token that head
// looks at from there (thicker for more weight), the model's five likeliest next tokens, and the one that came.
// One self-contained file: the data inline as JSON (every weight a float32, in base64), the script and the style
// inline, no network; it opens from disk in any browser, and checks itself on load (<pre id="selfcheck">).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/language_model.hpp"
#include "core/tensor.hpp"

namespace attn::explorer {

struct Guess {
    int token;
    float p;  // the model's probability of it
};

// One model's reading of one passage of T tokens.
struct Reading {
    Tensor3 weights;                      // (h, T, T): row i holds query i's weights over keys 0 … T−1
    std::vector<float> loss;              // (T): nats on the token that came after position i
    std::vector<std::vector<Guess>> top;  // (T) × up to 5: the likeliest next tokens after position i, likeliest first
};

struct ModelView {
    std::string name;               // "one head, added"
    std::vector<Reading> readings;  // one per passage
};

struct Page {
    std::string title, subtitle;  // what was trained, and how (the run's own setup line)
    std::vector<std::string> pieces;         // every token id's text (raw bytes; invalid UTF-8 shows as U+FFFD)
    std::vector<std::vector<int>> passages;  // T + 1 tokens each: the T the models read, and the one after the last
    std::vector<std::string> passage_names;  // "held-out text, token 4,120"
    std::vector<ModelView> models;
    bool causal = true;  // rows put nothing on later tokens: only row i's first i + 1 weights are stored
    int focus = -1;      // the token pointed at when the page opens (−1: the last the models read)
    std::string between;  // what the text shows between two tokens: "" for pieces of text, " " for words
};

// How a trained model reads each passage: block `layer`'s attention weights for every head, its surprise at each
// next token and its five likeliest guesses. The plain engine computes them (attn::reference::Model of `config`,
// from a copy of the trained weights), whichever engine or device trained the model. Throws attn::Error for a
// passage longer than the model's context, or a layer without attention.
ModelView read(LanguageModel& trained, const ModelConfig& config, const std::string& name, const std::vector<std::vector<int>>& passages,
               std::size_t layer = 0);

// The page. Throws attn::Error, naming the model, passage and shape, where the readings do not fit the passages
// (a shape, a token id outside pieces, a loss or guess count) or a causal row puts weight on a later token.
std::string html(const Page& page);
void write_file(const std::string& path, const Page& page);  // throws attn::Error naming the path if it cannot
// Where a program's page goes: beside its picture, named after it ("out/12_language_model.svg" gives
// "out/12_language_model_explorer.html"), so that programs writing into one folder (the tour's) keep their own.
std::string path_beside(const std::string& svg_path);

// The stored form of one head's (T, T) weights: rows packed (row i's first i + 1 entries when causal, all T
// otherwise), float32 little-endian, base64. unpack gives the (T·T) row-major matrix back, zeros above the
// diagonal when causal; it throws attn::Error on a string of the wrong length.
std::string pack_weights(const Tensor3& weights, std::size_t head, bool causal);
std::vector<float> unpack_weights(const std::string& base64, std::size_t T, bool causal);

}  // namespace attn::explorer
