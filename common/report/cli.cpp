// attn::Cli over CLI11. CLI11 splits the command line, matches the flags and converts their values; the
// validators here check each value's text first and say what is wrong with it, and reason() rewords the
// few messages CLI11 writes itself, so every usage error reads "--T must be in [1, 4096], got 0".
#include "report/cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"

namespace attn {

namespace {

// How a bound or a default reads in the usage and the messages: 4096, 0.5, 11687.55.
std::string text(std::integral auto v) { return std::to_string(v); }
std::string text(double v) {
    char buf[32];
    return {buf, std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 7).ptr};
}

// "sequence length (default 6, in [1, 4096])": the usage gives every number flag its default and its range.
template <class Number>
std::string with_range(const std::string& help, Number value, Number min, Number max) {
    return help + " (default " + text(value) + ", in [" + text(min) + ", " + text(max) + "])";
}

// A validator gets the value's text before CLI11 converts it and returns "" or the whole message.
// Numbers are read here, in decimal only; an integer is handed on as std::to_string writes it, because
// CLI11 alone would read 010 as octal 8 (and -1 as a seed as 2^64 - 1).
template <class Number>
CLI::Validator number_in(const std::string& flag, Number min, Number max, const std::string& kind) {
    return CLI::Validator(
        [=](std::string& s) -> std::string {
            Number v{};
            const char* end = s.data() + s.size();
            const auto [stop, ec] = std::from_chars(s.data(), end, v);
            if (s.empty() || ec != std::errc() || stop != end || !std::isfinite(static_cast<double>(v))) {
                return flag + " expects " + kind + ", got '" + s + "'";
            }
            if (v < min || v > max) return flag + " must be in [" + text(min) + ", " + text(max) + "], got " + s;
            if constexpr (std::is_integral_v<Number>) s = text(v);
            return "";
        },
        "");
}

// A switch's validator sees "true" when the switch stands alone, and the text after '=' when it does not.
CLI::Validator no_value(const std::string& flag) {
    return CLI::Validator([=](std::string& s) { return s == "true" ? std::string() : flag + " takes no value"; }, "");
}

// CLI::IsMember does this too, but says "bogus not in {ladder,...}"; ours names what the word was meant to be.
CLI::Validator one_of(const std::string& name, const std::vector<std::string>& choices) {
    return CLI::Validator(
        [=](std::string& s) {
            const bool known = std::find(choices.begin(), choices.end(), s) != choices.end();
            return known ? std::string() : "unknown " + name + " '" + s + "'";
        },
        "");
}

// CLI11 starts an option's message with its name and ": ". After that comes one of our validators'
// sentences (a ValidationError), or CLI11's own words for a flag without its value ("1 required N missing").
std::string reason(const CLI::ParseError& e) {
    const std::string what = e.what(), name = what.substr(0, what.find(": "));
    if (dynamic_cast<const CLI::ValidationError*>(&e)) return what.substr(name.size() + 2);
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) return name + " expects a value";  // "--svg" last, or "--svg="
    return what;
}

}  // namespace

Cli::Cli(std::string program, std::string title)
    : program_(std::move(program)), title_(std::move(title)), app_(std::make_unique<CLI::App>(title_ + "\n", program_)) {
    app_->option_defaults()->group("flags")->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app_->set_help_flag("-h,--help", "print this message");
    app_->allow_extras();  // parse() names the first stray argument itself
    // The usage: the title, a blank line, "usage: PROGRAM [flags]", then one line per flag.
    auto format = std::make_shared<CLI::Formatter>();
    format->label("Usage", "usage");
    format->label("OPTIONS", "flags");
    format->label("Positionals", "arguments");
    format->column_width(21);
    app_->formatter(format);
}

Cli::~Cli() = default;

void Cli::add(const std::string& flag, int& target, const std::string& help, int min, int max) {
    app_->add_option(flag, target, with_range(help, target, min, max))
        ->type_name("N")
        ->transform(number_in(flag, min, max, "an integer"));
}

void Cli::add(const std::string& flag, double& target, const std::string& help, double min, double max) {
    app_->add_option(flag, target, with_range(help, target, min, max))
        ->type_name("X")
        ->transform(number_in(flag, min, max, "a finite number"));
}

void Cli::add(const std::string& flag, std::uint64_t& target, const std::string& help) {
    app_->add_option(flag, target, help + " (default " + text(target) + ")")
        ->type_name("N")
        ->transform(number_in<std::uint64_t>(flag, 0, UINT64_MAX, "a non-negative integer"));
}

void Cli::add(const std::string& flag, std::string& target, const std::string& help) {
    app_->add_option(flag, target, help + " (default " + (target.empty() ? "none" : target) + ")")->type_name("S");
}

void Cli::add_output(const std::string& flag, std::string& target, const std::string& help) {
    add(flag, target, help);
    check([flag, &target] {
        namespace fs = std::filesystem;
        const fs::path path(target), folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
        std::error_code ec;
        std::string why;
        if (!fs::is_directory(folder, ec)) why = "the folder " + folder.string() + " does not exist";
        else if (fs::is_directory(path, ec)) why = "it is a folder";
        else if (access(folder.c_str(), W_OK | X_OK) != 0) why = "the folder " + folder.string() + " is not writable";
        else if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) why = "the file is not writable";
        if (!why.empty()) throw Error(flag + ": cannot write '" + target + "' (" + why + "); nothing was run");
    });
}

void Cli::add(const std::string& flag, std::string& target, const std::string& help, const std::vector<std::string>& choices) {
    std::string list;
    for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
    app_->add_option(flag, target, help + " (" + list + ", default " + target + ")")->type_name("S")->check(one_of(flag, choices));
}

void Cli::add_switch(const std::string& flag, bool& target, const std::string& help) {
    app_->add_flag(flag, target, help)->check(no_value(flag));
}

void Cli::add_choice(const std::string& name, std::string& target, const std::vector<std::string>& choices,
                     const std::string& help) {
    app_->add_option(name, target, help)->type_name("")->check(one_of(name, choices));
}

void Cli::footer(const std::string& text) { app_->footer(text); }

bool Cli::parse(int argc, const char* const* argv, std::ostream& out) {
    try {
        app_->parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        print_usage(out);
        return false;
    } catch (const CLI::ParseError& e) {
        throw UsageError(reason(e));
    }
    if (const std::vector<std::string> stray = app_->remaining(); !stray.empty()) {
        const std::string& arg = stray.front();
        if (arg.starts_with("-")) throw UsageError("unknown flag '" + arg.substr(0, arg.find('=')) + "'");
        throw UsageError("unexpected argument '" + arg + "' (flags start with --)");
    }
    for (const auto& rule : checks_) rule();
    return true;
}

void Cli::check(std::function<void()> rule) { checks_.push_back(std::move(rule)); }

void Cli::print_usage(std::ostream& os) const { os << app_->help(); }

bool Cli::given(const std::string& flag) const { return app_->count(flag) > 0; }

int run_program(Cli& cli, int argc, const char* const* argv, const std::function<void()>& body, std::ostream& out,
                std::ostream& err) {
    try {
        if (!cli.parse(argc, argv, out)) return 0;
    } catch (const UsageError& e) {
        err << cli.program() << ": " << e.what() << "\n\n";
        cli.print_usage(err);
        return 2;
    } catch (const std::exception& e) {  // a check that is not about the command's spelling (an unwritable --svg)
        err << cli.program() << ": error: " << e.what() << "\n";
        return 1;
    }
    try {
        body();
    } catch (const Interrupted& e) {
        out.flush();
        err << cli.program() << ": " << e.what() << "\n";
        return 130;
    } catch (const NoDevice& e) {
        out.flush();
        err << cli.program() << ": " << e.what() << "\n";
        return 77;
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
