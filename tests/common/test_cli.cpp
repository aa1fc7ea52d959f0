// The command line every program shares (attn::Cli over CLI11): values, ranges, messages, and the exit codes
// of run_program.
#include <catch2/catch.hpp>

#include <sstream>

#include "core/error.hpp"
#include "report/cli.hpp"

using namespace attn;
using Catch::Matchers::Contains;

namespace {
struct Fixture {
    int T = 6;
    std::uint64_t seed = 0;
    double lr = 0.1;
    std::string path = "a.svg";
    std::string experiment = "all";
    bool mine = false;
    Cli cli{"prog", "Section 0 — test"};
    Fixture() {
        cli.add("--T", T, "sequence length", 1, 100);
        cli.add("--seed", seed, "seed");
        cli.add("--lr", lr, "learning rate", 0, 10);
        cli.add("--svg", path, "output");
        cli.add_switch("--mine", mine, "mine");
    }
    bool parse(std::vector<const char*> args) {
        args.insert(args.begin(), "prog");
        std::ostringstream out;
        return cli.parse(static_cast<int>(args.size()), args.data(), out);
    }
};
}  // namespace

TEST_CASE("flags take '--name value' and '--name=value'", "[cli]") {
    Fixture f;
    REQUIRE(f.parse({"--T", "12", "--seed=99", "--lr", "0.5", "--svg=b.svg", "--mine"}));
    CHECK(f.T == 12);
    CHECK(f.seed == 99);
    CHECK(f.lr == 0.5);
    CHECK(f.path == "b.svg");
    CHECK(f.mine);
}

TEST_CASE("numbers are read in decimal, and a flag given twice keeps the last value", "[cli]") {
    Fixture f;
    REQUIRE(f.parse({"--T", "010", "--seed", "0010", "--lr=1e-1", "--lr", "2.5"}));
    CHECK(f.T == 10);  // CLI11 alone would read 010 as octal, 8
    CHECK(f.seed == 10);
    CHECK(f.lr == 2.5);
    REQUIRE(f.parse({"--T", "5", "--T=7"}));
    CHECK(f.T == 7);
}

TEST_CASE("a choice is a word anywhere among the flags, one of its list", "[cli]") {
    Fixture f;
    f.cli.add_choice("experiment", f.experiment, {"ladder", "all"}, "which one");
    REQUIRE(f.parse({"--T", "3", "ladder", "--mine"}));
    CHECK(f.experiment == "ladder");
    CHECK(f.T == 3);
    CHECK(f.mine);
    CHECK_THROWS_WITH(f.parse({"--mine", "bogus"}), "unknown experiment 'bogus'");
    CHECK_THROWS_WITH(f.parse({"ladder", "all"}), "unexpected argument 'all' (flags start with --)");
}

TEST_CASE("bad flags are usage errors that say what is wrong", "[cli][errors]") {
    Fixture f;
    CHECK_THROWS_WITH(f.parse({"--bogus"}), "unknown flag '--bogus'");
    CHECK_THROWS_WITH(f.parse({"--T", "abc"}), "--T expects an integer, got 'abc'");
    CHECK_THROWS_WITH(f.parse({"--T", "0"}), "--T must be in [1, 100], got 0");
    CHECK_THROWS_WITH(f.parse({"--T", "12x"}), Contains("expects an integer"));
    CHECK_THROWS_WITH(f.parse({"--T"}), "--T expects a value");
    CHECK_THROWS_WITH(f.parse({"--T", "0x10"}), "--T expects an integer, got '0x10'");
    CHECK_THROWS_WITH(f.parse({"--T="}), "--T expects a value");
    CHECK_THROWS_WITH(f.parse({"--seed", "-1"}), "--seed expects a non-negative integer, got '-1'");
    CHECK_THROWS_WITH(f.parse({"--seed", "18446744073709551616"}), Contains("non-negative integer"));  // 2^64
    CHECK_THROWS_WITH(f.parse({"--lr", "nan"}), "--lr expects a finite number, got 'nan'");
    CHECK_THROWS_WITH(f.parse({"--lr", "-0.5"}), "--lr must be in [0, 10], got -0.5");
    CHECK_THROWS_WITH(f.parse({"--mine=1"}), "--mine takes no value");
    CHECK_THROWS_WITH(f.parse({"--mine=false"}), "--mine takes no value");
    CHECK_THROWS_WITH(f.parse({"--bogus=3"}), "unknown flag '--bogus'");
    CHECK_THROWS_WITH(f.parse({"-x"}), "unknown flag '-x'");
    CHECK_THROWS_WITH(f.parse({"T"}), Contains("unexpected argument 'T'"));
}

TEST_CASE("--help prints the usage and asks the program to stop", "[cli]") {
    Fixture f;
    const char* args[] = {"prog", "--help"};
    std::ostringstream out;
    CHECK_FALSE(f.cli.parse(2, args, out));
    CHECK_THAT(out.str(), Contains("usage: prog [flags]") && Contains("--T N") && Contains("(default 6, in [1, 100])") &&
                              Contains("--lr X") && Contains("(default 0.1, in [0, 10])") && Contains("--svg S"));
}

TEST_CASE("run_program: 0 on success, 2 on a usage error, 1 on a library error", "[cli][errors]") {
    Fixture f;
    std::ostringstream out, err;
    const char* ok[] = {"prog", "--T", "3"};
    CHECK(run_program(f.cli, 3, ok, [] {}, out, err) == 0);
    const char* bad[] = {"prog", "--T", "zero"};
    CHECK(run_program(f.cli, 3, bad, [] {}, out, err) == 2);
    CHECK_THAT(err.str(), Contains("prog: --T expects an integer, got 'zero'") && Contains("usage: prog"));
    err.str("");
    CHECK(run_program(f.cli, 1, ok, [] { throw Error("attention: q (1, 2) and k (3, 3) differ in d_k"); }, out, err) == 1);
    CHECK(err.str() == "prog: error: attention: q (1, 2) and k (3, 3) differ in d_k\n");
}

TEST_CASE("an output file whose folder is missing, or a folder itself, is an error before any work", "[cli][errors]") {
    const auto parse = [](const std::string& value) {
        std::string path = "x.svg";
        Cli cli{"prog", "Section 0 — test"};
        cli.add_output("--svg", path, "output");
        const std::string arg = "--svg=" + value;
        const std::vector<const char*> args = {"prog", arg.c_str()};
        std::ostringstream out;
        return cli.parse(static_cast<int>(args.size()), args.data(), out);
    };
    CHECK(parse("here.svg"));  // the current folder: nothing is written by the check
    CHECK(parse("/tmp/x.svg"));
    CHECK_THROWS_AS(parse("/nonexistent-dir/x.svg"), Error);
    CHECK_THROWS_WITH(parse("/nonexistent-dir/x.svg"),
                      "--svg: cannot write '/nonexistent-dir/x.svg' (the folder /nonexistent-dir does not exist); nothing was run");
    CHECK_THROWS_WITH(parse("/tmp"), Contains("(it is a folder)"));
}

TEST_CASE("run_program: an unwritable output is exit 1, and the program's body never runs", "[cli][errors]") {
    std::string path = "x.svg";
    Cli cli{"prog", "Section 0 — test"};
    cli.add_output("--svg", path, "output");
    std::ostringstream out, err;
    const char* args[] = {"prog", "--svg", "/nonexistent-dir/x.svg"};
    bool ran = false;
    CHECK(run_program(cli, 3, args, [&] { ran = true; }, out, err) == 1);
    CHECK_FALSE(ran);
    CHECK(err.str() == "prog: error: --svg: cannot write '/nonexistent-dir/x.svg' (the folder /nonexistent-dir does not exist); nothing was run\n");
}
