// Byte-level byte-pair encoding (BPE), the tokenizer of GPT-2 and of the chapter's language models
// (a vocabulary of 1024 on 1 MB of Shakespeare: 2.43 characters a token).
//
// The 256 byte values are tokens 0 … 255. Training repeats one step until the vocabulary has the size
// asked for: count every pair of adjacent tokens in the text, take the most frequent pair (a, b), give it
// the next id (256, 257, …) and replace every (a, b) in the text by it, left to right. Encoding a new text
// replays the merges in the order they were learned; decoding writes out each token's bytes. Every byte
// is a token, so any byte string — any UTF-8 text, valid or not — encodes, and decode(encode(s)) == s.
//
// Wikipedia's example, "aaabdaaabac" (a = 97, b = 98, c = 99, d = 100):
//   counts  aa 4, ab 2, bd 1, da 1, ba 1, ac 1        → merge (97, 97) as 256:  Z a b d Z a b a c
//   counts  Za 2, ab 2, bd 1, dZ 1, ba 1, ac 1        → tie; (97, 98) < (256, 97), so (97, 98) as 257:  Z Y d Z Y a c
//   counts  ZY 2, Yd 1, dZ 1, Ya 1, ac 1              → merge (256, 257) as 258:  X d X a c
//   every pair occurs once: a vocabulary of 259 is the most this text gives.
//
// Choices, each fixed so that the same text gives the same merges on every run and platform:
//   - Ties: among the pairs with the highest count, the smallest (a, b) wins (smallest a, then smallest b).
//   - A merge needs a pair that occurs at least twice (a pair seen once would only memorise the text);
//     asking for more merges than that allows is an error, not a smaller vocabulary.
//   - Counts are of overlapping pairs ("aaa" holds (a, a) twice), replacement is left to right ("aaa" →
//     Z a), as in GPT-2 and minbpe.
//   - Pre-splitting (Split): with Split::gpt2, as GPT-2 does, the text is first cut into words by GPT-2's
//     pattern — 's 't 're 've 'm 'll 'd | ␣?letters | ␣?digits | ␣?other symbols | runs of whitespace,
//     a run's last space going to the word after it — and merges never cross a cut, so tokens are " the",
//     " went", "ing". (Every byte ≥ 128 counts as a letter: GPT-2's \p{L} for the ASCII texts here.) This
//     is the chapter's tokenizer: on tiny Shakespeare, 1024 tokens learned on the training 90 % give
//     460,578 tokens over the whole text, 2.42 characters a token (the chapter: 459,760 and 2.43); without
//     the split merges cross words (".⏎⏎B") and it gives 444,677, 2.51. Split::none merges across
//     everything (minbpe's BasicTokenizer): the generated stories need it, being made of 124 distinct
//     words — cut into words, their training split runs out of pairs at a vocabulary of 573, below the
//     chapter's 1024. On them, at 1024, whole phrases become tokens (" and went back to the forest"), 12.9
//     characters a token (tools/bench/bench_bpe).
//
// Training keeps, for every adjacent pair, its count and the positions where it starts; a merge updates
// only the neighbours of the pairs it replaces, so it costs time in proportion to its occurrences, not to
// the text. Choosing the best pair scans the table of distinct pairs (at most the text's length).
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// How the text is cut before merging; merges never cross a cut (see above).
enum class Split { none, gpt2 };
// Where Split::gpt2 starts a new word: the byte offsets of every word after the first, in order.
std::vector<std::size_t> gpt2_word_starts(std::string_view text);

// One learned merge: tokens `left` then `right` become one new token.
struct Merge {
    int left = 0, right = 0;
    auto operator<=>(const Merge&) const = default;
};

class Bpe {
public:
    // The tokenizer with these merges: merge k makes token 256 + k, so each side must be below 256 + k.
    // No merges: the plain byte tokenizer (vocabulary 256).
    explicit Bpe(std::vector<Merge> merges = {}, Split split = Split::none);

    // Learns vocab_size − 256 merges on `text` (pass the training split only, so the held-out text is
    // tokenized by rules it did not shape). Throws attn::Error if vocab_size < 256 or if the text runs
    // out of pairs that occur twice before the vocabulary is full.
    static Bpe train(std::string_view text, std::size_t vocab_size, Split split = Split::none);

    std::vector<int> encode(std::string_view text) const;  // bytes → token ids
    std::string decode(const std::vector<int>& ids) const;  // token ids → bytes; an id out of range throws

    std::size_t vocab_size() const { return 256 + merges_.size(); }
    const std::vector<Merge>& merges() const { return merges_; }
    Split split() const { return split_; }
    const std::string& bytes_of(int id) const;  // the bytes token `id` stands for

    // The merges as a text file: a header line "attn-bpe 1" ("attn-bpe 1 split=gpt2" with the split), then
    // one line "left right" per merge.
    // load throws attn::Error naming the file (and the line) when it cannot be read or is malformed.
    void save(const std::string& path) const;
    static Bpe load(const std::string& path);

private:
    std::vector<Merge> merges_;
    Split split_ = Split::none;
    std::vector<std::string> bytes_;  // token id → its bytes
};

}  // namespace attn
