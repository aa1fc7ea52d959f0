// The corpus (text/corpus.hpp): the story generator is deterministic given its seed; a text file that
// cannot be trained on is refused with a message that names it (missing, empty, binary, not UTF-8, too
// short); the 90/10 split, the byte vocabulary, windows and evaluation.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "fast/model.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"

using namespace attn;

namespace {
// A file under the system's temporary directory, removed when the test ends.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& name, const std::string& content) {
        path = (std::filesystem::temp_directory_path() / ("attn_test_corpus_" + name)).string();
        std::ofstream(path, std::ios::binary) << content;
    }
    ~TempFile() { std::filesystem::remove(path); }
};
}  // namespace

TEST_CASE("generate_stories is deterministic given its seed, and plain English-like text", "[corpus][sec12]") {
    const std::string a = generate_stories(3, 20000), b = generate_stories(3, 20000), c = generate_stories(4, 20000);
    CHECK(a == b);
    CHECK(a != c);
    CHECK(a.size() >= 20000);
    CHECK(a.size() < 21000);  // stops at the first story that reaches the size
    CHECK(a.rfind("Once there was a ", 0) == 0);
    std::set<char> bytes(a.begin(), a.end());
    for (char ch : bytes) CHECK(((ch >= ' ' && ch <= '~') || ch == '\n'));
    CHECK(bytes.size() > 30);
    CHECK(bytes.size() < 64);
    // The long-range dependency the experiments rely on: every story ends by going back home,
    // where the opening line said the hero lived.
    const std::string first = a.substr(0, a.find('\n'));
    const std::size_t lived = first.find(" lived in the ") + 14;
    const std::string home = first.substr(lived, first.find('.', lived) - lived);
    CHECK(first.substr(first.size() - home.size() - 1) == home + ".");
}

TEST_CASE("make_corpus: byte vocabulary in byte order, a 90/10 split, decode inverts it", "[corpus][sec12]") {
    const std::string text = generate_stories(0, 30000);
    const Corpus c = make_corpus(text, "stories");
    CHECK(c.bytes == text.size());
    CHECK(c.train.size() == text.size() * 9 / 10);
    CHECK(c.train.size() + c.heldout.size() == text.size());
    for (std::size_t i = 1; i < c.vocab.size(); ++i) CHECK(c.vocab[i - 1] < c.vocab[i]);
    CHECK(c.decode(c.train) + c.decode(c.heldout) == text);
}

TEST_CASE("make_corpus with bpe: the merges are learned on the training 90 % alone", "[corpus][bpe][sec12]") {
    // The training 90 %: "ab" and "cd" in turns; the held-out 10 %: "xyz" over and over, which would give the
    // most frequent pairs of the whole text if its merges saw it.
    std::string train_text, heldout_text;
    while (train_text.size() < 9000) train_text += train_text.size() % 3 == 0 ? "ab " : "cd ";
    while (heldout_text.size() < 1000) heldout_text += "xyz";
    const std::string text = train_text.substr(0, 9000) + heldout_text.substr(0, 1000);
    REQUIRE(split_offset(text, Tokenizer::bpe) == 9000);
    // Split::none: cut into words ("ab", " cd", " ab", …) this text runs out of pairs after two merges.
    const Corpus c = make_corpus(text, "split", CorpusOptions{.tokenizer = Tokenizer::bpe, .vocab = 262, .split = Split::none, .min_heldout = 1000});
    REQUIRE(c.vocab_size() == 262);
    const Bpe expected = Bpe::train(text.substr(0, 9000), 262);
    for (int id = 256; id < 262; ++id) {
        INFO("token " << id << " = '" << c.pieces[static_cast<std::size_t>(id)] << "'");
        CHECK(c.pieces[static_cast<std::size_t>(id)] == expected.bytes_of(id));  // the training part's merges, exactly
        CHECK(c.pieces[static_cast<std::size_t>(id)].find_first_of("xyz") == std::string::npos);  // no held-out byte in any
    }
    // The held-out text is the byte tokens x, y, z: no merge covers it. Decoding gives the text back.
    CHECK(c.heldout.size() == 1000);
    CHECK(c.decode(c.train) + c.decode(c.heldout) == text);
    CHECK(c.unit() == std::string("BPE token"));
    CHECK(c.tokens_per_character() == Approx((c.train.size() + 1000.0) / 10000.0));
}

TEST_CASE("Corpus::encode: a prompt to the ids training used, by either tokenizer, and a byte the bytes lack refused", "[corpus][sec12]") {
    const std::string text = generate_stories(0, 30000);
    const Corpus bytes = make_corpus(text, "stories");
    const std::string prompt = text.substr(100, 40);
    CHECK(bytes.encode(prompt) == std::vector<int>(bytes.train.begin() + 100, bytes.train.begin() + 140));
    CHECK(bytes.decode(bytes.encode(prompt)) == prompt);
    CHECK_THROWS_WITH(bytes.encode("ok\x01"), Catch::Contains("the byte 0x01 at offset 2 is not in stories's byte vocabulary"));
    const Corpus bpe = make_corpus(text, "stories", CorpusOptions{.tokenizer = Tokenizer::bpe, .vocab = 300, .split = Split::none});
    REQUIRE(bpe.bpe != nullptr);
    const std::string start = text.substr(0, 2000);
    const std::vector<int> ids = bpe.encode(start);
    CHECK(bpe.decode(ids) == start);
    CHECK(std::vector<int>(bpe.train.begin(), bpe.train.begin() + 100) == std::vector<int>(ids.begin(), ids.begin() + 100));
    CHECK(bpe.decode(bpe.encode("\x01 any bytes at all \xff")) == "\x01 any bytes at all \xff");
}

TEST_CASE("make_corpus with bpe on the stories: a split at a character boundary, the same ids on every run", "[corpus][bpe][sec12]") {
    // 'é' is two bytes: 90 % of this text falls inside one, and the split moves back to its first byte.
    std::string text = generate_stories(0, 20000);
    const std::size_t at = text.size() * 9 / 10;
    text.replace(at - 1, 1, "\xc3\xa9");
    REQUIRE(text.size() * 9 / 10 == at);
    REQUIRE((static_cast<unsigned char>(text[at]) >> 6) == 0x2);  // inside 'é'
    CHECK(split_offset(text, Tokenizer::bpe) == at - 1);
    CHECK(split_offset(text, Tokenizer::bytes) == at);
    const CorpusOptions bpe{.tokenizer = Tokenizer::bpe, .vocab = 300};
    const Corpus a = make_corpus(text, "stories", bpe), b = make_corpus(text, "stories", bpe);
    CHECK(a.train == b.train);
    CHECK(a.heldout == b.heldout);
    CHECK(a.decode(a.heldout).substr(0, 2) == "\xc3\xa9");
    CHECK(a.decode(a.train) + a.decode(a.heldout) == text);
    CHECK(a.characters == text.size() - 1);
    CHECK(a.tokens_per_character() < 1.0);
    CHECK(make_corpus(text, "stories").tokens_per_character() == Approx(static_cast<double>(text.size()) / (text.size() - 1)));
}

TEST_CASE("load_corpus refuses a missing, empty, binary, non-UTF-8 or too short file, naming it", "[corpus][errors][sec12]") {
    using Catch::Matchers::Contains;
    CHECK_THROWS_AS(load_corpus("/nonexistent/corpus.txt"), Error);
    CHECK_THROWS_WITH(load_corpus("/nonexistent/corpus.txt"), Contains("cannot open /nonexistent/corpus.txt"));
    const TempFile empty("empty.txt", "");
    CHECK_THROWS_WITH(load_corpus(empty.path), Contains(empty.path + " is empty"));
    const TempFile binary("binary.bin", std::string("text\0more", 9) + std::string(20000, 'a'));
    CHECK_THROWS_WITH(load_corpus(binary.path), Contains(binary.path + " looks binary: a NUL byte at offset 4"));
    const TempFile latin1("latin1.txt", "caf\xe9 au lait " + std::string(20000, 'a'));
    CHECK_THROWS_WITH(load_corpus(latin1.path), Contains(latin1.path + " is not UTF-8 text: invalid byte at offset 3"));
    const TempFile short_text("short.txt", "To be, or not to be, that is the question.\n");
    CHECK_THROWS_WITH(load_corpus(short_text.path), Contains(short_text.path + " has 43 bytes; the experiments need at least 10240"));
    // UTF-8 beyond ASCII is text: its bytes become tokens like any other.
    const TempFile utf8("utf8.txt", "Mã hoá vị trí. " + generate_stories(1, 20000));
    const Corpus c = load_corpus(utf8.path);
    CHECK(c.source == utf8.path);
    CHECK(c.vocab.back() >= 0x80);
}

TEST_CASE("sample_windows and evaluate: next-token targets, one perplexity per model", "[corpus][sec12]") {
    const Corpus c = make_corpus(generate_stories(0, 30000), "stories");
    Rng rng(1);
    std::vector<int> tokens, targets;
    sample_windows(c.train, 4, 16, rng, tokens, targets);
    REQUIRE(tokens.size() == 64);
    for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t t = 0; t + 1 < 16; ++t) CHECK(targets[b * 16 + t] == tokens[b * 16 + t + 1]);
    // An untrained model predicts about uniformly: perplexity near the vocabulary size, far above 1.
    fast::Model model({.vocab = c.vocab_size(), .max_T = 16, .d_model = 8, .n_heads = 1, .mixer = Mixer::none, .positions = Positions::none}, 0);
    const Evaluation e = evaluate(model, c.heldout, 16, 8, 4);
    CHECK(e.tokens == 8 * 16);
    CHECK(e.perplexity == Approx(std::exp(e.loss)));
    CHECK(e.perplexity > 5);
    CHECK_THROWS_WITH(evaluate(model, std::vector<int>(10, 0), 16), Catch::Matchers::Contains("hold no window of T = 16"));
}
