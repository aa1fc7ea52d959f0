// The byte-level BPE tokenizer (text/bpe.hpp): Wikipedia's example merge by merge; the incremental
// trainer against a plain recount of every pair before every merge (the spec below); decode(encode(s)) == s
// for random and adversarial bytes; the same merges on every run; the file format; errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"

using namespace attn;

namespace {

// The specification, minbpe's loop as plainly as it can be written: before every merge, count every
// pair of the whole text in an ordered map (so that the first of the equal maxima is the smallest pair),
// then rewrite the text left to right. Stops when no pair occurs twice.
struct Recount {
    std::vector<Merge> merges;
    std::vector<int> ids;  // the text after the last merge
};
Recount train_by_recount(const std::string& text, std::size_t vocab) {
    Recount r;
    for (unsigned char c : text) r.ids.push_back(c);
    while (256 + r.merges.size() < vocab) {
        std::map<std::pair<int, int>, int> counts;
        for (std::size_t i = 0; i + 1 < r.ids.size(); ++i) ++counts[{r.ids[i], r.ids[i + 1]}];
        std::pair<int, int> best{};
        int best_count = 0;
        for (const auto& [pair, n] : counts)
            if (n > best_count) best = pair, best_count = n;
        if (best_count < 2) break;
        const int id = 256 + static_cast<int>(r.merges.size());
        r.merges.push_back({best.first, best.second});
        std::vector<int> next;
        for (std::size_t i = 0; i < r.ids.size(); ++i) {
            if (i + 1 < r.ids.size() && r.ids[i] == best.first && r.ids[i + 1] == best.second) {
                next.push_back(id);
                ++i;
            } else {
                next.push_back(r.ids[i]);
            }
        }
        r.ids = next;
    }
    return r;
}

// n bytes drawn uniformly from `alphabet`: few letters make many ties and long runs.
std::string random_text(std::size_t n, const std::string& alphabet, Rng& rng) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(alphabet[rng.below(alphabet.size())]);
    return s;
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("attn_test_bpe_" + name)).string();
}

}  // namespace

TEST_CASE("Wikipedia's example, merge by merge (derivation in bpe.hpp)", "[bpe]") {
    const std::string text = "aaabdaaabac";  // a = 97, b = 98, c = 99, d = 100
    // Z = 256 = "aa": the most frequent pair, (a, a), 4 times (overlapping).
    CHECK(Bpe::train(text, 257).encode(text) == std::vector<int>{256, 97, 98, 100, 256, 97, 98, 97, 99});
    // Y = 257 = "ab": (Z, a) and (a, b) both occur twice; the tie goes to the smaller pair, (97, 98).
    CHECK(Bpe::train(text, 258).encode(text) == std::vector<int>{256, 257, 100, 256, 257, 97, 99});
    // X = 258 = "aaab": (Z, Y) twice.
    const Bpe bpe = Bpe::train(text, 259);
    CHECK(bpe.merges() == std::vector<Merge>{{97, 97}, {97, 98}, {256, 257}});
    CHECK(bpe.encode(text) == std::vector<int>{258, 100, 258, 97, 99});
    CHECK(bpe.bytes_of(258) == "aaab");
    CHECK(bpe.decode(bpe.encode(text)) == text);
    // Now every pair occurs once: a fourth merge is refused, and the message says how far this text goes.
    CHECK_THROWS_WITH(Bpe::train(text, 260),
                      Catch::Contains("vocab 260 needs 4 merges, but after 3") && Catch::Contains("vocab 259 at most"));
}

TEST_CASE("a run of one byte: overlapping pairs are counted, and replaced left to right", "[bpe]") {
    // 1000 a's: (a, a) occurs 999 times (overlapping) and becomes 500 tokens "aa"; (aa, aa) makes 250 of
    // "aaaa", then 125 of 8 a's. From there each merge pairs up the longest tokens and an odd one stays
    // behind, so that after 9 merges 1000 = 512 + 256 + 128 + 64 + 32 + 8.
    const std::string run(1000, 'a');
    const Bpe bpe = Bpe::train(run, 265);
    const std::vector<int> ids = bpe.encode(run);
    CHECK(ids == std::vector<int>{264, 263, 262, 261, 260, 258});
    CHECK(bpe.bytes_of(264) == std::string(512, 'a'));
    CHECK(bpe.decode(ids) == run);
    CHECK_THROWS_AS(Bpe::train(run, 266), Error);  // every pair now occurs once
}

TEST_CASE("the incremental trainer learns exactly the merges of a full recount", "[bpe]") {
    Rng rng(11);
    for (const std::string alphabet : {"ab", "abc ", "aab  \n\xc3\xa9"}) {
        for (int trial = 0; trial < 5; ++trial) {
            const std::string text = random_text(400, alphabet, rng);
            const Recount spec = train_by_recount(text, 100000);  // as far as the text allows
            INFO("alphabet '" << alphabet << "', trial " << trial << ", " << spec.merges.size() << " merges");
            const Bpe bpe = Bpe::train(text, 256 + spec.merges.size());
            CHECK(bpe.merges() == spec.merges);
            CHECK(bpe.encode(text) == spec.ids);
            CHECK_THROWS_AS(Bpe::train(text, 257 + spec.merges.size()), Error);
        }
    }
    // English-like text, where the counts are far from uniform.
    const std::string stories = generate_stories(5, 20000);
    const Recount spec = train_by_recount(stories, 320);
    const Bpe bpe = Bpe::train(stories, 320);
    CHECK(bpe.merges() == spec.merges);
    CHECK(bpe.encode(stories) == spec.ids);
}

TEST_CASE("GPT-2's cut into words, case by case", "[bpe][split]") {
    // 'Hello' ' world' ''s' ' ' ' end' '\n' '\n' 'OK' ' 123' '!!': a letter run takes the one space before it; a
    // run of spaces before a word leaves its last space to the word; "'s" is a word of its own.
    const std::string text = "Hello world's  end\n\nOK 123!!";
    CHECK(gpt2_word_starts(text) == std::vector<std::size_t>{5, 11, 13, 14, 18, 19, 20, 22, 26});
    CHECK(gpt2_word_starts("  x") == std::vector<std::size_t>{1});  // "␣", "␣x"
    CHECK(gpt2_word_starts("a  ") == std::vector<std::size_t>{1});  // trailing spaces stay together
    CHECK(gpt2_word_starts("don't 've're") == std::vector<std::size_t>{3, 5, 7, 9});  // don 't ␣' ve 're
    CHECK(gpt2_word_starts("").empty());
}

TEST_CASE("with the cut, the merges are a full recount's within words, and none crosses a cut", "[bpe][split]") {
    // The specification: the text as its words, pairs counted inside words only, every merge rewriting each
    // word left to right.
    const std::string text = generate_stories(7, 6000) + " I'll 42 don't!! \n\n  end";
    std::vector<std::size_t> cuts = gpt2_word_starts(text);
    cuts.insert(cuts.begin(), 0), cuts.push_back(text.size());
    std::vector<std::vector<int>> words;
    for (std::size_t w = 0; w + 1 < cuts.size(); ++w) {
        words.emplace_back();
        for (std::size_t i = cuts[w]; i < cuts[w + 1]; ++i) words.back().push_back(static_cast<unsigned char>(text[i]));
    }
    std::vector<Merge> merges;
    for (int id = 256; id < 400; ++id) {
        std::map<std::pair<int, int>, int> counts;
        for (const auto& w : words)
            for (std::size_t i = 0; i + 1 < w.size(); ++i) ++counts[{w[i], w[i + 1]}];
        std::pair<int, int> best{};
        int most = 0;
        for (const auto& [pair, n] : counts)
            if (n > most) best = pair, most = n;
        REQUIRE(most >= 2);
        merges.push_back({best.first, best.second});
        for (auto& w : words) {
            std::vector<int> out;
            for (std::size_t i = 0; i < w.size(); ++i)
                if (i + 1 < w.size() && w[i] == best.first && w[i + 1] == best.second) out.push_back(id), ++i;
                else out.push_back(w[i]);
            w = out;
        }
    }
    std::vector<int> ids;
    for (const auto& w : words) ids.insert(ids.end(), w.begin(), w.end());
    const Bpe bpe = Bpe::train(text, 400, Split::gpt2);
    CHECK(bpe.split() == Split::gpt2);
    CHECK(bpe.merges() == merges);
    CHECK(bpe.encode(text) == ids);
    CHECK(bpe.decode(ids) == text);
    // Without the cut the same text merges across words: other merges.
    CHECK(Bpe::train(text, 400).merges() != merges);
    // The split is part of the file.
    const std::string path = temp_path("split.txt");
    bpe.save(path);
    const Bpe loaded = Bpe::load(path);
    std::filesystem::remove(path);
    CHECK(loaded.split() == Split::gpt2);
    CHECK(loaded.encode(text) == ids);
}

TEST_CASE("training twice gives the same merges, and they survive a save and a load", "[bpe]") {
    const std::string text = generate_stories(0, 50000);
    const Bpe a = Bpe::train(text, 400), b = Bpe::train(text, 400);
    CHECK(a.merges() == b.merges());
    const std::string path = temp_path("merges.txt");
    a.save(path);
    const Bpe loaded = Bpe::load(path);
    std::filesystem::remove(path);
    CHECK(loaded.merges() == a.merges());
    CHECK(loaded.encode(text) == a.encode(text));
}

TEST_CASE("encoding the training text shortens it, and held-out text almost as much", "[bpe]") {
    // The generated stories repeat 124 words, so 256 merges cover most of them: the training split
    // shrinks to under a quarter of its bytes (5.1 characters a token when this test was written).
    // Held-out text, which training never saw, is made of the same words and shrinks nearly as much
    // (within 10 %): the merges are not a memorised text.
    const std::string text = generate_stories(0, 100000);
    const std::size_t split = text.size() * 9 / 10;
    const std::string train = text.substr(0, split), heldout = text.substr(split);
    const Bpe bpe = Bpe::train(train, 512);
    const double train_ratio = static_cast<double>(train.size()) / static_cast<double>(bpe.encode(train).size());
    const double heldout_ratio = static_cast<double>(heldout.size()) / static_cast<double>(bpe.encode(heldout).size());
    INFO("characters per token: training " << train_ratio << ", held out " << heldout_ratio);
    CHECK(train_ratio > 4.0);
    CHECK(heldout_ratio > 0.9 * train_ratio);
    // The byte tokenizer (no merges) is the identity on bytes.
    CHECK(Bpe().encode("Ana") == std::vector<int>{65, 110, 97});
}

TEST_CASE("decode(encode(s)) == s for random bytes and adversarial UTF-8", "[bpe]") {
    Rng rng(3);
    std::string all_bytes;
    for (int b = 0; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
    const std::vector<std::string> inputs = {
        "",
        std::string(1, '\0'),
        std::string("a\0b\0\0c", 6),                                      // NUL inside
        std::string(777, 'x'),                                             // a long run of one byte
        std::string(300, '\xff'),                                          // a long run of an invalid byte
        "h\xc3\xa9llo w\xc3\xb6rld \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",  // é ö — 日本 😀
        "\xc3",                                                            // a truncated 2-byte character
        "\xed\xa0\x80",                                                    // a UTF-16 surrogate, not UTF-8
        "\xc0\xaf\xfe\xff",                                                // an overlong '/', bytes never in UTF-8
        "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98",                    // 😀😀 and a cut-off third
        "\r\n\t  \n\n",
        random_text(5000, all_bytes, rng),
    };
    std::string everything;
    for (const std::string& s : inputs) everything += s + s;
    // One tokenizer trained on English-like text, one on the adversarial inputs themselves, so that its
    // merges join UTF-8 continuation bytes, NULs and invalid bytes.
    for (const Bpe& bpe : {Bpe::train(generate_stories(1, 20000), 400), Bpe::train(everything, 300), Bpe()}) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            INFO("input " << i << " (" << inputs[i].size() << " bytes), vocab " << bpe.vocab_size());
            const std::vector<int> ids = bpe.encode(inputs[i]);
            CHECK(ids.size() <= inputs[i].size());
            CHECK(bpe.decode(ids) == inputs[i]);
        }
    }
    CHECK(Bpe::train(everything, 300).encode(inputs[3]).size() < 100);  // the run of x's did get merged
}

TEST_CASE("bad vocabularies, ids and merge files are refused with the value and the rule", "[bpe]") {
    CHECK_THROWS_WITH(Bpe::train("abab", 255), Catch::Contains("vocab 255 is below 256"));
    CHECK_THROWS_WITH(Bpe::train("", 257), Catch::Contains("this text allows vocab 256 at most"));
    CHECK(Bpe::train("", 256).encode("").empty());

    const Bpe bpe = Bpe::train("abab", 257);
    CHECK_THROWS_WITH(bpe.decode({97, 257}),
                      Catch::Contains("id 257 at position 1 is outside the vocabulary [0, 257)"));
    CHECK_THROWS_WITH(bpe.decode({-1}), Catch::Contains("id -1 at position 0"));
    CHECK_THROWS_WITH(bpe.bytes_of(300), Catch::Contains("token id 300 is outside"));
    const std::vector<Merge> undefined = {{97, 98}, {256, 258}};  // 258 is the id a third merge would make
    CHECK_THROWS_WITH(Bpe(undefined),
                      Catch::Contains("merge 1 (token 257) joins 256 and 258, but only tokens 0 … 256 exist before it"));

    const std::string path = temp_path("bad.txt");
    const auto write = [&](const std::string& content) {
        std::ofstream(path) << content;
        return path;
    };
    CHECK_THROWS_WITH(Bpe::load(write("bpe\n97 98\n")), Catch::Contains(path + " line 1: expected the header"));
    CHECK_THROWS_WITH(Bpe::load(write("attn-bpe 1\n97 98\n97\n")), Catch::Contains(path + " line 3: expected two token ids"));
    CHECK_THROWS_WITH(Bpe::load(write("attn-bpe 1\n97 98 99\n")), Catch::Contains(path + " line 2"));
    CHECK_THROWS_WITH(Bpe::load(write("attn-bpe 1\n97 300\n")), Catch::Contains(path) && Catch::Contains("joins 97 and 300"));
    std::filesystem::remove(path);
    CHECK_THROWS_WITH(Bpe::load(path), Catch::Contains("cannot open " + path));
}
