// What both engines build from: the options of a block and of a model, named as in the chapter, and how their
// weights start. The reference engine (common/reference/) and the fast one (fast/model.hpp) read these same
// structs, so one configuration and one seed give both the same model.
//
//   ModelConfig ladder_top{.vocab = V, .max_T = 64, .d_model = 64, .n_heads = 4, .d_ff = 256, .norm = Norm::pre};
//   ModelConfig gpt2 = gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12});
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

// How a block mixes tokens: not at all, by the prefix average of Section 9.1 (every weight 1/(t+1),
// nothing learned but W_v and W_o), or by learned attention weights softmax(q kᵀ / √d_k).
enum class Mixer { none, uniform, learned };
// Where the LayerNorms sit (Section 9.5): none, before each sub-layer (pre) or after each residual sum (post).
enum class Norm { none, pre, post };
// How positions enter (Section 9.6): not at all; a learned table or the sinusoidal table added to the token
// embeddings; RoPE rotating q and k; ALiBi's −m_j (t − i) added to head j's scores. RoPE and ALiBi act on
// learned scores, so they need Mixer::learned.
enum class Positions { none, learned, sinusoidal, rope, alibi };
const char* positions_name(Positions p);  // "none", "learned", "sinusoidal", "RoPE", "ALiBi"
// How weights start. fan_in: N(0, 1/fan_in) for matrices and N(0, 1) for the token and position tables;
// pytorch: N(0, 1/(3 fan_in)), the variance of nn.Linear's uniform default, tables N(0, 1); gpt2: N(0, 0.02²)
// for every matrix and table. Biases start at 0 and LayerNorm gains at 1 in all three.
enum class Init { fan_in, pytorch, gpt2 };
float init_std(Init init, std::size_t fan_in);  // a matrix's standard deviation
float embedding_std(Init init);                 // the token and position tables'

// --- attention, block and model -----------------------------------------------------------------------------
struct AttentionConfig {
    std::size_t d_model = 64, n_heads = 4;
    std::size_t d_k = 0;                   // width of q and k per head; 0 = d_model / n_heads
    Mixer mixer = Mixer::learned;        // uniform: fixed weights, no W_q or W_k
    Positions positions = Positions::none;  // only RoPE and ALiBi act here
    bool scale = true;                     // divide the scores by √d_k (false: Section 9.2's ablation)
    bool causal = true;                    // false: every position sees all T (an encoder)
    bool biases = false;                   // b_q, b_k, b_v, b_o
    bool output_projection = true;         // W_o; without it the merged heads are the output
    bool output_bias = false;              // b_o alone, without b_q, b_k, b_v (nn.Linear(d, d) after bias-free heads)
};

struct BlockConfig {
    AttentionConfig attention;  // its d_model is the block's
    Mixer mixer = Mixer::learned;  // none: the block has no attention sub-layer
    std::size_t d_ff = 0;            // the FFN's hidden width; 0: no FFN sub-layer
    Norm norm = Norm::pre;
    bool residual = true;
};

// The readout: its own (d, V) matrix and bias, or the token table read backwards (GPT-2; no bias).
enum class Head { untied, tied };

struct ModelConfig {
    std::size_t vocab = 0;     // V
    std::size_t max_T = 0;     // the longest sequence (rows of a learned position table)
    std::size_t d_model = 64;  // d
    std::size_t n_heads = 4;
    std::size_t n_layers = 1;  // blocks
    std::size_t d_k = 0;       // width of q and k per head; 0 = d_model / n_heads
    Mixer mixer = Mixer::learned;
    bool residual = true;
    std::size_t d_ff = 0;      // the FFN's hidden width; 0 = no FFN
    Norm norm = Norm::none;
    Positions positions = Positions::learned;
    bool scale = true;         // divide the scores by √d_k
    bool causal = true;
    bool biases = false;       // b_q, b_k, b_v, b_o
    bool output_projection = true;  // W_o after the heads
    bool output_bias = false;       // b_o alone (W_o's bias without b_q, b_k, b_v): the chapter's ladder
    Head head = Head::untied;
    Init init = Init::fan_in;
};

// GPT-2's shape (Sections 9.5, 9.8), at any size: pre-norm blocks with biases, d_ff = 4 d, learned positions,
// the readout tied to the token table, N(0, 0.02²) weights. Change any field afterwards, by name:
//   ModelConfig c = gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12});
struct ModelSize {
    std::size_t vocab = 0, max_T = 0, d_model = 64, n_heads = 4, n_layers = 1;
};
ModelConfig gpt2_config(const ModelSize& size);

// The stream of the seed that a model's initial weights are drawn from (Rng's streams, core/rng.hpp): each
// initialisation its own stream, so that a seed's fan-in model and its GPT-2-initialised model share no
// draws. Both engines draw from it, in the same order.
std::uint64_t init_stream(Init init);

// Every field in words, e.g. "vocab 49, max_T 64, d_model 64, heads 4, layers 1, d_k 16, mixer learned, …".
std::string describe(const ModelConfig& c);
// describe's words back into the configuration (a checkpoint's manifest holds them): parse_config(describe(c)) is c.
// Throws attn::Error naming the field for a missing, repeated or unknown field or a value it does not know.
ModelConfig parse_config(const std::string& text);

}  // namespace attn
