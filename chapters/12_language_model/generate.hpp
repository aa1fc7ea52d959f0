// `12_language_model generate`: a model that the ladder trained and saved (`ladder --save DIR`), prompted. The rung is
// rebuilt at the size and tokenizer the flags give (the same as its training run's: the checkpoint's manifest holds
// the model's configuration, and a model of another size is refused), its weights loaded from DIR, the prompt encoded
// by the BPE saved beside them (DIR/tokenizer.bpe; one that differs from the flags' is refused), and its
// continuation of the prompt printed token by token as each is drawn (attn/sample.hpp: temperature and top-k).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "attn/corpus.hpp"
#include "attn/train.hpp"

namespace attn::sec12 {

// The BPE a run trained with, as `--save DIR` writes it beside the checkpoints (Bpe::save's format).
inline constexpr const char* kTokenizerFile = "tokenizer.bpe";

struct GenerateSetup {
    std::string dir;          // --resume: the folder `ladder --save` wrote
    std::string model;        // --model: a rung's name ("+ FFN") or folder ("ffn"); empty: the fullest rung saved
    std::string prompt;       // --prompt: the text to continue
    std::size_t tokens = 200;  // --tokens: how many to draw
    double temperature = 1.0;  // --temperature: > 0
    std::size_t top_k = 0;     // --top-k: 0 keeps every token
    std::uint64_t seed = 0;    // --seed: the draws' (the model is the first training seed DIR holds, folders -seedN)
};

// Prints which model, the prompt and its continuation, streamed. Throws attn::Error when DIR holds no saved rung,
// when --model names no rung or one not saved there (the message lists what is), when the checkpoint is
// of another size, when the saved BPE is not the one the flags build, or when the prompt is empty or has a byte the
// byte tokenizer lacks.
void generate(std::ostream& os, const Corpus& corpus, const LmSetup& setup, const GenerateSetup& g);

}  // namespace attn::sec12
