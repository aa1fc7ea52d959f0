// The byte-level BPE tokenizer (text/bpe.hpp) on the language models' corpus: how long training takes,
// and how many characters a token holds — the figures the chapter gives for its tokenizer (a vocabulary
// of 1024 on 1 MB of Shakespeare: 2.43 characters a token). Trains on the first 90 % of the text, the
// language models' training split, and encodes both splits.
//
// Times vary run to run and with the machine's load (printed at the start); this program is not a test.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "report/cli.hpp"
#include "report/table.hpp"
#include "text/bpe.hpp"
#include "text/corpus.hpp"

using namespace attn;

namespace {

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(f >> one >> five >> fifteen)) return "unknown";
    return one + " " + five + " " + fifteen + " (1, 5, 15 min)";
}

// Wall-clock and CPU seconds of fn (CPU: this process, so other programs on a busy machine do not count).
template <class F>
std::pair<double, double> timed(F&& fn) {
    const auto wall = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    fn();
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
            static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC};
}

// UTF-8 characters: every byte that is not a continuation byte (10xxxxxx) starts one.
double characters(const std::string& s) {
    return static_cast<double>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xc0) != 0x80; }));
}

// A token as the reader should see it: a space as ␣, a newline as ⏎, quoted.
std::string shown(const std::string& bytes) {
    std::string s = "\"";
    for (char c : bytes) s += c == ' ' ? "␣" : c == '\n' ? "⏎" : std::string(1, c);
    return s + "\"";
}

}  // namespace

int main(int argc, char** argv) {
    int vocab = 1024, bytes = 1'000'000;
    std::string corpus;
    Cli cli("bench_bpe", "Byte-level BPE: training time and characters per token on the language models' corpus");
    cli.add("--vocab", vocab, "vocabulary: 256 byte tokens + the merges to learn", 256, 65536);
    cli.add("--bytes", bytes, "bytes of generated stories (ignored with --corpus)", 1000, 100'000'000);
    cli.add("--corpus", corpus, "a text file instead of the generated stories, e.g. tiny Shakespeare");

    return run_program(cli, argc, argv, [&] {
        std::string text;
        if (corpus.empty()) {
            text = generate_stories(0, static_cast<std::size_t>(bytes));
        } else {
            std::ifstream in(corpus, std::ios::binary);
            require(in.good(), "--corpus", "cannot open " + corpus);
            std::ostringstream buf;
            buf << in.rdbuf();
            text = buf.str();
        }
        const std::size_t split = text.size() * 9 / 10;
        const std::string train = text.substr(0, split), heldout = text.substr(split);

        std::cout << cli.title() << "\n\n"
                  << "corpus: " << (corpus.empty() ? "generated stories (seed 0)" : corpus) << ", " << text.size()
                  << " bytes; training split (the first 90 %) " << train.size() << " bytes\n"
                  << "load average at start " << load_average() << "\n\n";

        Bpe bpe;
        const auto [train_wall, train_cpu] = timed([&] { bpe = Bpe::train(train, static_cast<std::size_t>(vocab)); });
        std::vector<int> train_ids, heldout_ids;
        const auto [encode_wall, encode_cpu] = timed([&] { train_ids = bpe.encode(train); });
        heldout_ids = bpe.encode(heldout);

        Table t(std::cout, {{"", 34}, {"value", 12, 2}}, "  ");
        t.header();
        t.row({"train vocab " + std::to_string(vocab) + ": wall seconds", train_wall});
        t.row({"train: CPU seconds (one core)", train_cpu});
        t.row({"encode training split: wall s", encode_wall});
        t.row({"tokens, training split", train_ids.size()});
        t.row({"tokens, held-out split", heldout_ids.size()});
        t.row({"characters a token, training", characters(train) / train_ids.size()});
        t.row({"characters a token, held out", characters(heldout) / heldout_ids.size()});

        std::cout << "\nthe first merges:";
        for (std::size_t id = 256; id < std::min<std::size_t>(bpe.vocab_size(), 266); ++id)
            std::cout << ' ' << shown(bpe.bytes_of(static_cast<int>(id)));
        std::cout << "\nthe last merges: ";
        for (std::size_t id = bpe.vocab_size() - std::min<std::size_t>(bpe.vocab_size() - 256, 6); id < bpe.vocab_size(); ++id)
            std::cout << ' ' << shown(bpe.bytes_of(static_cast<int>(id)));
        std::cout << "\nthe start of the held-out split, token by token:\n  ";
        for (std::size_t i = 0; i < std::min<std::size_t>(heldout_ids.size(), 24); ++i)
            std::cout << shown(bpe.bytes_of(heldout_ids[i])) << ' ';
        std::cout << "\n";
        require(bpe.decode(heldout_ids) == heldout, "bench_bpe", "decode(encode(held-out text)) differs from the text");
    });
}
