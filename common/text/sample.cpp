#include "text/sample.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"

namespace attn {

namespace {

std::string str(double x) {  // as C++ prints it: "0.5", "nan", "inf"
    std::ostringstream s;
    s << x;
    return s.str();
}

// One token from one row of logits (V,), as sample.hpp describes.
int pick(const float* logits, std::size_t V, double temperature, std::size_t top_k, Rng& rng, std::size_t step) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < V; ++i) {
        require(std::isfinite(logits[i]), "sample",
                "step " + std::to_string(step) + ": the logit of token " + std::to_string(i) + " is " +
                    str(logits[i]) + "; the logits must be finite");
        if (logits[i] > logits[best]) best = i;
    }
    if (temperature == 0) return static_cast<int>(best);
    // exp((l_i − max) / temperature): the largest term is 1, so nothing overflows; the sum normalises.
    std::vector<double> p(V);
    double total = 0;
    for (std::size_t i = 0; i < V; ++i) total += p[i] = std::exp((logits[i] - logits[best]) / temperature);
    if (top_k > 0 && top_k < V) {  // only the k largest logits keep their share (equal ones: the smaller id first)
        std::vector<std::size_t> order(V);
        for (std::size_t i = 0; i < V; ++i) order[i] = i;
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top_k), order.end(),
                          [&](std::size_t a, std::size_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
        std::vector<bool> kept(V, false);
        for (std::size_t r = 0; r < top_k; ++r) kept[order[r]] = true;
        total = 0;
        for (std::size_t i = 0; i < V; ++i) total += p[i] = kept[i] ? p[i] : 0.0;
    }
    const double u = rng.uniform() * total;
    double cumulative = 0;
    std::size_t last = best;
    for (std::size_t i = 0; i < V; ++i) {
        if (u < (cumulative += p[i])) return static_cast<int>(i);
        if (p[i] > 0) last = i;
    }
    return static_cast<int>(last);  // u rounded up to the total itself: the last token that has any probability
}

}  // namespace

std::vector<int> sample(LanguageModel& model, const std::vector<int>& prompt, std::size_t n_tokens, double temperature,
                        std::size_t max_T, Rng& rng, std::size_t top_k) {
    require(!prompt.empty(), "sample", "the prompt is empty; give at least one token to start from");
    require(std::isfinite(temperature) && temperature >= 0, "sample",
            "temperature " + str(temperature) + " must be finite and ≥ 0 (0 = argmax)");
    require(max_T > 0, "sample", "max_T must be positive");
    std::vector<int> text = prompt;
    for (std::size_t step = 0; step < n_tokens; ++step) {
        const std::size_t T = std::min(text.size(), max_T);
        const std::vector<int> context(text.end() - static_cast<std::ptrdiff_t>(T), text.end());
        // The loss is not used, but forward scores targets: any valid id will do, and 0 always is.
        model.forward(context, std::vector<int>(T, 0), 1, T);
        const Mat& logits = model.logits();  // (T, V): the last row predicts the next token
        const std::size_t V = logits.shape(1);
        text.push_back(pick(&logits(T - 1, 0), V, temperature, top_k, rng, step));
    }
    return {text.begin() + static_cast<std::ptrdiff_t>(prompt.size()), text.end()};
}

std::string printable(std::string_view bytes) {
    std::string out;
    std::size_t i = 0;
    while (i < bytes.size()) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c == '\n') out += "\\n", ++i;
        else if (c == '\t') out += "\\t", ++i;
        else if (c == '\\') out += "\\\\", ++i;
        else if (c < 0x20 || c == 0x7f) out += "\\x" + fmt_hex_byte(c), ++i;
        else if (c < 0x80) out += static_cast<char>(c), ++i;
        else {
            // a multi-byte character: its lead byte gives the length, and each following byte must be 10xxxxxx
            const std::size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
            bool valid = len > 0 && i + len <= bytes.size();
            for (std::size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(bytes[i + k]) >> 6) == 0x2;
            if (valid) out.append(bytes.substr(i, len)), i += len;
            else out += "\\x" + fmt_hex_byte(c), ++i;
        }
    }
    return out;
}

}  // namespace attn
