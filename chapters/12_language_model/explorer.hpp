// The ladder's explorer page (explorer.html, report/explorer.hpp): the rungs that weigh their context — the uniform
// average, then every rung with learned attention — read a few held-out passages the models never trained on,
// and a learner points at a token to see where each head looks and what the model expected next.
#pragma once

#include <string>
#include <vector>

#include "core/config.hpp"
#include "text/corpus.hpp"

namespace attn::sec12 {

// `count` passages of T + 1 held-out tokens (the T a model reads, and the one after), spread evenly over the
// held-out text, each starting after a newline where one lies within a window's length of its even spot; each
// named by where it starts and its first characters. Throws attn::Error when the held-out text holds fewer than
// count · (T + 1) tokens.
struct Passages {
    std::vector<std::vector<int>> tokens;
    std::vector<std::string> names;  // "held-out token 16,391: \"KING RICHARD III:\n...\""
};
Passages explorer_passages(const Corpus& corpus, std::size_t T, std::size_t count = 3);

// Whether the page shows a rung of this configuration: learned attention, or the first uniform average (the
// ones after it, with positions or the residual, weigh their context the same).
bool explored(const ModelConfig& config);

}  // namespace attn::sec12
