// A tiny command-line parser shared by every program.
//
//   attn::Cli cli("03_scaling", "Section 9.2 — The division by √d_k (Phép chia cho √d_k)");
//   int pairs = 20000;
//   cli.add("--pairs", pairs, "random (q, k) pairs per width", 1);
//   return attn::run_program(cli, argc, argv, [&] { ... });
//
// Flags take `--name value` or `--name=value`. `--help` prints the usage and exits 0. An unknown flag,
// a missing or malformed value, or a value out of range prints the reason and the usage on stderr and
// exits 2. An attn::Error (or any std::exception) thrown by the body prints "error: ..." and exits 1.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attn {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Cli {
public:
    Cli(std::string program, std::string title);

    // Integer flag; values below `min` (or above `max`) are rejected with a usage error.
    void add(const std::string& flag, int& target, const std::string& help, long long min = 1,
             long long max = 1'000'000'000);
    void add(const std::string& flag, std::uint64_t& target, const std::string& help);  // e.g. --seed
    void add(const std::string& flag, double& target, const std::string& help);
    void add(const std::string& flag, std::string& target, const std::string& help);
    void add_switch(const std::string& flag, bool& target, const std::string& help);  // present → true

    // Parses argv into the bound variables. Returns false when --help was asked for (usage printed).
    bool parse(int argc, const char* const* argv, std::ostream& out);
    void print_usage(std::ostream& os) const;
    const std::string& program() const { return program_; }
    const std::string& title() const { return title_; }

private:
    struct Option {
        std::string flag, help, default_text, metavar;
        bool is_switch = false;
        std::function<void(const std::string&)> set;
    };
    Option& find(const std::string& flag);
    std::string program_, title_;
    std::vector<Option> options_;
};

// Parse, then run the body; turns usage errors into exit 2 and library errors into exit 1.
int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body,
                std::ostream& out, std::ostream& err);
int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body);  // std::cout, std::cerr

}  // namespace attn
