#include "chapters/12_language_model/explorer.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/format.hpp"
#include "text/sample.hpp"

namespace attn::sec12 {

Passages explorer_passages(const Corpus& corpus, std::size_t T, std::size_t count) {
    const std::vector<int>& text = corpus.heldout;
    require(count >= 1 && text.size() >= count * (T + 1), "explorer_passages",
            std::to_string(count) + " passages of " + std::to_string(T + 1) + " tokens from " + std::to_string(text.size()) + " held-out tokens");
    Passages passages;
    const std::size_t stride = text.size() / count;  // passage k starts in [k · stride, (k + 1) · stride − T − 1]
    for (std::size_t k = 0; k < count; ++k) {
        std::size_t start = k * stride;
        for (std::size_t at = std::max<std::size_t>(start, 1); at < start + T && at + T + 1 <= (k + 1) * stride; ++at) {
            const std::string& before = corpus.pieces.at(static_cast<std::size_t>(text[at - 1]));
            if (!before.empty() && before.back() == '\n') {
                start = at;
                break;
            }
        }
        passages.tokens.emplace_back(text.begin() + static_cast<std::ptrdiff_t>(start), text.begin() + static_cast<std::ptrdiff_t>(start + T + 1));
        std::string first;
        for (std::size_t t = start; t < start + T + 1 && count_characters(first) < 24; ++t) first += corpus.pieces.at(static_cast<std::size_t>(text[t]));
        passages.names.push_back("held-out token " + fmt_count(static_cast<long long>(start)) + ": \"" + printable(first) + "...\"");
    }
    return passages;
}

bool explored(const ModelConfig& c) {
    return c.mixer == Mixer::learned || (c.mixer == Mixer::uniform && c.positions == Positions::none && !c.residual);
}

}  // namespace attn::sec12
