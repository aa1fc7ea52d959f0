#include "text/bpe.hpp"

#include <climits>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.hpp"

namespace attn {

namespace {

// A pair of token ids as one 64-bit key, left in the high half, so that comparing keys compares
// (left, right): the smallest key is the tie-break's winner.
std::uint64_t key(int left, int right) {
    return (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint32_t>(right);
}
Merge pair_of(std::uint64_t k) { return {static_cast<int>(k >> 32), static_cast<int>(k & 0xffffffffu)}; }

// The text as a doubly linked list of tokens, with, for every pair of adjacent tokens, how often it
// occurs and where it starts. A merge unlinks the right token of each occurrence and corrects the counts
// of the pairs on either side; nothing else in the text is looked at. Training and encoding both run
// their merges through it, so encoding the training text gives exactly the tokens training ended with.
// With a split, the list is cut at every word start: a word's first token has no left neighbour and its
// last no right one, so no pair across a cut is ever counted or merged.
class TokenList {
public:
    TokenList(std::string_view text, Split split)
        : tok_(text.size()), prev_(text.size()), next_(text.size()) {
        std::vector<bool> starts(text.size() + 1, false);  // a word starts here (and "after the end")
        starts[text.size()] = true;
        if (split == Split::gpt2)
            for (const std::size_t s : gpt2_word_starts(text)) starts[s] = true;
        for (std::size_t i = 0; i < text.size(); ++i) {
            tok_[i] = static_cast<unsigned char>(text[i]);
            prev_[i] = i == 0 || starts[i] ? none : static_cast<int>(i) - 1;
            next_[i] = starts[i + 1] ? none : static_cast<int>(i) + 1;
        }
        for (std::size_t i = 0; i < text.size(); ++i)
            if (next_[i] != none) count(static_cast<int>(i), +1);
    }

    // Every (m.left, m.right), left to right, becomes token `id`.
    void merge(Merge m, int id) {
        const auto found = where_.find(key(m.left, m.right));
        if (found == where_.end()) return;
        std::vector<int> at = std::move(found->second);
        where_.erase(found);
        // Left to right, as the positions were recorded: all of a pair's positions are recorded by one
        // left-to-right pass, the constructor's or that of the merge that made the pair's newer token.
        // The order matters when occurrences overlap: in "a a a" the (a, a) at 0 is merged, which removes
        // the one at 1, so the text becomes "Z a", not "a Z".
        for (const int i : at) {
            const int j = next_[i];
            if (tok_[i] != m.left || j == none || tok_[j] != m.right) continue;  // changed since recorded
            // x a b y → x Z y: the pairs (x, a), (a, b), (b, y) go, (x, Z) and (Z, y) come.
            if (prev_[i] != none) count(prev_[i], -1);
            count(i, -1);
            if (next_[j] != none) count(j, -1);
            tok_[i] = id, tok_[j] = none;
            next_[i] = next_[j];
            if (next_[i] != none) prev_[next_[i]] = i;
            if (prev_[i] != none) count(prev_[i], +1);
            if (next_[i] != none) count(i, +1);
        }
    }

    const std::unordered_map<std::uint64_t, std::int64_t>& counts() const { return count_; }

    std::vector<int> ids() const {  // in text order: a merge keeps its left position and empties the right
        std::vector<int> out;
        for (const int t : tok_)
            if (t != none) out.push_back(t);
        return out;
    }

private:
    static constexpr int none = -1;
    std::vector<int> tok_, prev_, next_;  // position → token (none once merged away), its neighbours
    std::unordered_map<std::uint64_t, std::int64_t> count_;  // pair → occurrences; absent when 0
    // pair → the positions where it started when recorded; some are stale, so merge checks each
    std::unordered_map<std::uint64_t, std::vector<int>> where_;

    // The pair that starts at position i is counted once more (delta = +1) or once less (−1).
    void count(int i, int delta) {
        const std::uint64_t k = key(tok_[i], tok_[next_[i]]);
        if ((count_[k] += delta) == 0) count_.erase(k);
        if (delta > 0) where_[k].push_back(i);
    }
};

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 128; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

// The length of the word that starts at i, by GPT-2's pattern, tried in its order:
//   's|'t|'re|'ve|'m|'ll|'d | ␣?\p{L}+ | ␣?\p{N}+ | ␣?[^\s\p{L}\p{N}]+ | \s+(?!\S) | \s+
std::size_t gpt2_word(std::string_view t, std::size_t i) {
    const std::size_t n = t.size();
    const auto at = [&](std::size_t j) { return static_cast<unsigned char>(t[j]); };
    if (at(i) == '\'') {
        for (const std::string_view c : {"s", "t", "re", "ve", "m", "ll", "d"})
            if (t.substr(i + 1, c.size()) == c) return 1 + c.size();
    }
    const std::size_t j = at(i) == ' ' && i + 1 < n ? i + 1 : i;  // the optional leading space
    const auto run = [&](auto belongs) {
        std::size_t k = j;
        while (k < n && belongs(at(k))) ++k;
        return k - i;
    };
    if (is_letter(at(j))) return run(is_letter);
    if (is_digit(at(j))) return run(is_digit);
    if (!is_space(at(j))) return run([](unsigned char c) { return !is_space(c) && !is_letter(c) && !is_digit(c); });
    // Whitespace: the whole run, but a run of two or more before a word leaves its last space to that word.
    std::size_t k = i;
    while (k < n && is_space(at(k))) ++k;
    return k < n && k - i >= 2 ? k - i - 1 : k - i;
}

}  // namespace

std::vector<std::size_t> gpt2_word_starts(std::string_view text) {
    std::vector<std::size_t> starts;
    for (std::size_t i = text.empty() ? 0 : gpt2_word(text, 0); i < text.size(); i += gpt2_word(text, i)) starts.push_back(i);
    return starts;
}

Bpe::Bpe(std::vector<Merge> merges, Split split) : merges_(std::move(merges)), split_(split) {
    for (int b = 0; b < 256; ++b) bytes_.emplace_back(1, static_cast<char>(b));
    for (const Merge& m : merges_) {
        const int id = static_cast<int>(bytes_.size());
        require(m.left >= 0 && m.left < id && m.right >= 0 && m.right < id, "Bpe",
                "merge " + std::to_string(id - 256) + " (token " + std::to_string(id) + ") joins " +
                    std::to_string(m.left) + " and " + std::to_string(m.right) +
                    ", but only tokens 0 … " + std::to_string(id - 1) + " exist before it");
        bytes_.push_back(bytes_[static_cast<std::size_t>(m.left)] + bytes_[static_cast<std::size_t>(m.right)]);
    }
}

Bpe Bpe::train(std::string_view text, std::size_t vocab_size, Split split) {
    require(vocab_size >= 256, "Bpe::train",
            "vocab " + std::to_string(vocab_size) + " is below 256: the 256 byte values are always tokens");
    require(text.size() <= INT_MAX, "Bpe::train", "a text of " + std::to_string(text.size()) + " bytes is over 2³¹");
    TokenList list(text, split);
    std::vector<Merge> merges;
    while (256 + merges.size() < vocab_size) {
        // The most frequent pair; among equals, the smallest key, i.e. the smallest (left, right).
        std::uint64_t best = 0;
        std::int64_t best_count = 0;
        for (const auto& [k, n] : list.counts())
            if (n > best_count || (n == best_count && k < best)) best = k, best_count = n;
        require(best_count >= 2, "Bpe::train",
                "vocab " + std::to_string(vocab_size) + " needs " + std::to_string(vocab_size - 256) +
                    " merges, but after " + std::to_string(merges.size()) +
                    " no pair of adjacent tokens occurs twice (a merge needs two): this text allows vocab " +
                    std::to_string(256 + merges.size()) + " at most");
        merges.push_back(pair_of(best));
        list.merge(merges.back(), static_cast<int>(255 + merges.size()));
    }
    return Bpe(std::move(merges), split);
}

std::vector<int> Bpe::encode(std::string_view text) const {
    require(text.size() <= INT_MAX, "Bpe::encode", "a text of " + std::to_string(text.size()) + " bytes is over 2³¹");
    TokenList list(text, split_);
    for (std::size_t k = 0; k < merges_.size(); ++k) list.merge(merges_[k], static_cast<int>(256 + k));
    return list.ids();
}

const std::string& Bpe::bytes_of(int id) const {
    require(id >= 0 && static_cast<std::size_t>(id) < bytes_.size(), "Bpe",
            "token id " + std::to_string(id) + " is outside the vocabulary [0, " + std::to_string(bytes_.size()) + ")");
    return bytes_[static_cast<std::size_t>(id)];
}

std::string Bpe::decode(const std::vector<int>& ids) const {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        require(ids[i] >= 0 && static_cast<std::size_t>(ids[i]) < bytes_.size(), "Bpe::decode",
                "id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                    " is outside the vocabulary [0, " + std::to_string(bytes_.size()) + ")");
        out += bytes_[static_cast<std::size_t>(ids[i])];
    }
    return out;
}

void Bpe::save(const std::string& path) const {
    std::ofstream out(path);
    require(out.good(), "Bpe::save", "cannot open " + path + " for writing");
    out << (split_ == Split::gpt2 ? "attn-bpe 1 split=gpt2\n" : "attn-bpe 1\n");
    for (const Merge& m : merges_) out << m.left << ' ' << m.right << '\n';
    require(out.good(), "Bpe::save", "writing " + path + " failed");
}

Bpe Bpe::load(const std::string& path) {
    std::ifstream in(path);
    require(in.good(), "Bpe::load", "cannot open " + path + " (missing or unreadable)");
    std::string line;
    std::getline(in, line);
    require(line == "attn-bpe 1" || line == "attn-bpe 1 split=gpt2", "Bpe::load",
            path + " line 1: expected the header \"attn-bpe 1\" or \"attn-bpe 1 split=gpt2\", got \"" + line + "\"");
    const Split split = line == "attn-bpe 1" ? Split::none : Split::gpt2;
    std::vector<Merge> merges;
    for (int n = 2; std::getline(in, line); ++n) {
        std::istringstream fields(line);
        Merge m;
        std::string extra;
        require(fields >> m.left >> m.right && !(fields >> extra), "Bpe::load",
                path + " line " + std::to_string(n) + ": expected two token ids \"left right\", got \"" + line + "\"");
        merges.push_back(m);
    }
    try {
        return Bpe(std::move(merges), split);
    } catch (const Error& e) {
        throw Error("Bpe::load: " + path + ": " + e.what());
    }
}

}  // namespace attn
