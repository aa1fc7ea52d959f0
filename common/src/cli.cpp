#include "attn/cli.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <iomanip>
#include <iostream>

#include "attn/error.hpp"

namespace attn {

namespace {
template <class Int>
Int parse_int(const std::string& flag, const std::string& text, long long min, long long max) {
    long long v = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || p != end) {
        throw UsageError(flag + " expects an integer, got '" + text + "'");
    }
    if (v < min || v > max) {
        throw UsageError(flag + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                         text);
    }
    return static_cast<Int>(v);
}
}  // namespace

Cli::Cli(std::string program, std::string title) : program_(std::move(program)), title_(std::move(title)) {}

void Cli::add(const std::string& flag, int& target, const std::string& help, long long min, long long max) {
    options_.push_back({flag, help, std::to_string(target), "N", false,
                        [&target, flag, min, max](const std::string& s) { target = parse_int<int>(flag, s, min, max); }});
}

void Cli::add(const std::string& flag, std::uint64_t& target, const std::string& help) {
    options_.push_back({flag, help, std::to_string(target), "N", false, [&target, flag](const std::string& s) {
                            std::uint64_t v = 0;
                            const char* end = s.data() + s.size();
                            auto [p, ec] = std::from_chars(s.data(), end, v);
                            if (s.empty() || ec != std::errc() || p != end) {
                                throw UsageError(flag + " expects a non-negative integer, got '" + s + "'");
                            }
                            target = v;
                        }});
}

void Cli::add(const std::string& flag, double& target, const std::string& help) {
    std::ostringstream def;
    def << target;
    options_.push_back({flag, help, def.str(), "X", false, [&target, flag](const std::string& s) {
                            double v = 0;
                            const char* end = s.data() + s.size();
                            auto [p, ec] = std::from_chars(s.data(), end, v);
                            if (s.empty() || ec != std::errc() || p != end || !std::isfinite(v)) {
                                throw UsageError(flag + " expects a finite number, got '" + s + "'");
                            }
                            target = v;
                        }});
}

void Cli::add(const std::string& flag, std::string& target, const std::string& help) {
    options_.push_back({flag, help, target.empty() ? "none" : target, "S", false, [&target, flag](const std::string& s) {
                            if (s.empty()) throw UsageError(flag + " expects a value");
                            target = s;
                        }});
}

void Cli::add_switch(const std::string& flag, bool& target, const std::string& help) {
    options_.push_back({flag, help, "", "", true, [&target](const std::string&) { target = true; }});
}

Cli::Option& Cli::find(const std::string& flag) {
    for (auto& o : options_) {
        if (o.flag == flag) return o;
    }
    throw UsageError("unknown flag '" + flag + "'");
}

bool Cli::parse(int argc, const char* const* argv, std::ostream& out) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            print_usage(out);
            return false;
        }
        if (arg.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + arg + "' (flags start with --)");
        std::string value;
        bool has_value = false;
        if (const auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        Option& o = find(arg);
        if (o.is_switch) {
            if (has_value) throw UsageError(arg + " takes no value");
            o.set("");
            continue;
        }
        if (!has_value) {
            if (i + 1 >= argc) throw UsageError(arg + " expects a value");
            value = argv[++i];
        }
        o.set(value);
    }
    return true;
}

void Cli::print_usage(std::ostream& os) const {
    os << title_ << "\n\nusage: " << program_ << " [flags]\n\n";
    for (const auto& o : options_) {
        const std::string left = "  " + o.flag + (o.is_switch ? "" : " " + o.metavar);
        os << std::left << std::setw(20) << left << " " << o.help;
        if (!o.is_switch) os << " (default " << o.default_text << ")";
        os << "\n";
    }
    os << std::left << std::setw(20) << "  --help" << " " << "print this message\n";
}

int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body, std::ostream& out,
                std::ostream& err) {
    try {
        if (!cli.parse(argc, argv, out)) return 0;
    } catch (const UsageError& e) {
        err << cli.program() << ": " << e.what() << "\n\n";
        cli.print_usage(err);
        return 2;
    }
    try {
        body();
    } catch (const std::exception& e) {
        out.flush();
        err << cli.program() << ": error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body) {
    return run_program(cli, argc, argv, body, std::cout, std::cerr);
}

}  // namespace attn
