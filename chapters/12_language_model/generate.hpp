// `12_language_model generate`: a model that an experiment trained and saved (`--save DIR`), prompted. Each saved
// model is a folder of DIR with a checkpoint (train/checkpoint.hpp) whose manifest holds its configuration in words:
// the model is rebuilt from it (parse_config), its weights loaded, the prompt encoded by the tokenizer it trained with
// (DIR/tokenizer.bpe, which a BPE run saves beside its models, where its vocabulary is the model's; else the tokenizer
// the flags build: --corpus, --tokenizer, --vocab), and its continuation printed token by token as each is drawn
// (text/sample.hpp: temperature and top-k). DIR may also be one model's own folder.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "text/corpus.hpp"
#include "train/engine.hpp"

namespace attn::sec12 {

// The BPE a run trained with, as `--save DIR` writes it beside the checkpoints (Bpe::save's format).
inline constexpr const char* kTokenizerFile = "tokenizer.bpe";

struct GenerateSetup {
    std::string dir;           // --resume: the folder `--save` wrote
    std::string model;         // --model: a folder of DIR ("ffn-seed0"), without its seed ("ffn") or its run's label
                               // ("+ FFN"); empty: the ladder's full block, or the one model DIR holds
    std::string prompt;        // --prompt: the text to continue
    std::size_t tokens = 200;  // --tokens: how many to draw
    double temperature = 1.0;  // --temperature: > 0
    std::size_t top_k = 0;     // --top-k: 0 keeps every token
    std::uint64_t seed = 0;    // --seed: the draws' (the model's own seed is its checkpoint's)
    Engine engine = Engine::fast;
};

// Prints which model, the prompt and its continuation, streamed. Throws attn::Error when DIR holds no readable saved
// model, when --model names none of them or (without --model) DIR holds several and no full block (the message lists
// them), when no tokenizer has the model's vocabulary, or when the prompt is empty or has a byte a byte tokenizer
// lacks.
void generate(std::ostream& os, const Corpus& corpus, const GenerateSetup& g);

}  // namespace attn::sec12
