// The command line of every program. CLI11 parses it; this thin layer gives the programs one way to
// declare a flag (with its range) and one policy for exit codes.
//
//   attn::Cli cli("03_scaling", "Section 9.2 — The division by √d_k (Phép chia cho √d_k)");
//   int pairs = 20000;
//   cli.add("--pairs", pairs, "random (q, k) pairs per width", 1, 10'000'000);
//   return attn::run_program(cli, argc, argv, [&] { ... });
//
// Flags take `--name value` or `--name=value`; given twice, the last one counts. `--help` prints the usage
// on stdout and exits 0. An unknown flag, a missing or malformed value, or a value out of range prints the
// reason and the usage on stderr and exits 2. attn::Interrupted exits 130, attn::NoDevice 77 (no GPU for
// --device gpu). An attn::Error (or any std::exception) thrown by the body
// prints "error: ..." and exits 1.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;  // CLI11's parser: only cli.cpp includes it, so the programs compile without its templates
}

namespace attn {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Cli {
public:
    Cli(std::string program, std::string title);
    ~Cli();

    // A number outside [min, max] is a usage error: every size, count, step and budget has a range.
    void add(const std::string& flag, int& target, const std::string& help, int min, int max);
    void add(const std::string& flag, double& target, const std::string& help, double min, double max);
    void add(const std::string& flag, std::uint64_t& target, const std::string& help);  // a seed: any value
    void add(const std::string& flag, std::string& target, const std::string& help);
    // A file the program writes at its end (--svg): a path whose folder is missing or not writable is an error
    // (exit 1) before any work, not after a run of minutes.
    void add_output(const std::string& flag, std::string& target, const std::string& help);
    // A word from a fixed list (--device cpu|gpu); anything else is a usage error naming the choices.
    void add(const std::string& flag, std::string& target, const std::string& help, const std::vector<std::string>& choices);
    void add_switch(const std::string& flag, bool& target, const std::string& help);  // present → true
    // A word that is not a flag, one of `choices`, anywhere on the line (12_language_model's experiment).
    void add_choice(const std::string& name, std::string& target, const std::vector<std::string>& choices,
                    const std::string& help);
    void footer(const std::string& text);  // printed below the flags
    // A check of the parsed values, run by parse() after every flag is read, before the program does any
    // work: it throws UsageError (exit 2) naming the flag, e.g. a --resume folder that does not exist.
    void check(std::function<void()> rule);

    // Parses argv into the bound variables. Returns false when --help was asked for (usage printed).
    bool parse(int argc, const char* const* argv, std::ostream& out);
    void print_usage(std::ostream& os) const;
    bool given(const std::string& flag) const;  // after parse: the flag was on the command line
    const std::string& program() const { return program_; }
    const std::string& title() const { return title_; }

private:
    std::string program_, title_;
    std::unique_ptr<CLI::App> app_;
    std::vector<std::function<void()>> checks_;
};

// Parse, then run the body; turns usage errors into exit 2 and library errors into exit 1.
int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body,
                std::ostream& out, std::ostream& err);
int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body);  // std::cout, std::cerr

}  // namespace attn
