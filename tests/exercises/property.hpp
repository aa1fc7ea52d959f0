// Property tests for the exercises: beside each exercise's worked cases, inputs drawn over its contract's whole
// domain (every size from the smallest the contract allows, magnitudes up to its limits, ties, the documented
// errors) by rapidcheck, each compared with a double-precision oracle. When one fails, rapidcheck shrinks it to
// the smallest input that still fails, and the learner reads that input, both outputs and the first cell that
// differs, in English and, after "[vi]", in Vietnamese (tools/progress.sh shows the learner's language):
//
//   ex_test::prop::check("Exercise 2.1 property", [](ex_test::prop::Case& c) {
//       const Vec s = prop::vec(prop::size(1, 12), prop::range({1, 10, 1000}));
//       c.input = "scores " + prop::show(s);
//       return prop::compare("stable_softmax", ex::stable_softmax(s), spec::softmax(s), 1e-6, c.input);
//   });
//
// The seed is fixed (kSeed): a run is reproducible, and a failure is the same failure every time.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "expect.hpp"

namespace ex_test::prop {

// 128-bit unsigned integers, for the exact oracles of counts that pass 2^64 in their intermediate products (a GCC
// and Clang extension: __extension__ keeps -Wpedantic quiet about it).
__extension__ typedef unsigned __int128 u128;

inline constexpr std::uint64_t kSeed = 20261203;  // rapidcheck's seed for every property
inline constexpr int kCases = 100;                 // inputs a property tries before it passes

// What a property's body is checking now: `input` is the drawn input, said in words ("scores (1000, 0)"), so
// that an exception from the learner's code names the input that raised it.
struct Case {
    std::string input;
};

// ---- drawing inputs (each shrinks towards the smallest, simplest value) ------------------------------------

inline std::size_t size(std::size_t lo, std::size_t hi) { return *rc::gen::inRange(lo, hi + 1); }  // in [lo, hi]

// How a case's numbers are drawn: up to max_abs in size, on a grid of `steps` values from 0 to max_abs —
// a fine grid (1000 steps), or a coarse one (2 steps: every entry is one of −m, −m/2, 0, m/2, m, so that
// rows hold ties and repeated values).
struct Range {
    double max_abs = 1;
    int steps = 1000;
};
inline Range range(const std::vector<double>& magnitudes) {
    Range r;
    r.max_abs = *rc::gen::elementOf(magnitudes);
    r.steps = *rc::gen::element(1000, 2);
    return r;
}
inline float number(const Range& r) {
    const int k = *rc::gen::inRange(0, r.steps + 1);
    const bool negative = *rc::gen::arbitrary<bool>();
    return static_cast<float>((negative ? -1.0 : 1.0) * r.max_abs * k / r.steps);
}
inline attn::Vec vec(std::size_t n, const Range& r) {
    attn::Vec v = attn::Vec::from_shape({n});
    for (auto& x : v) x = number(r);
    return v;
}
inline attn::Mat mat(std::size_t rows, std::size_t cols, const Range& r) {
    attn::Mat m = attn::Mat::from_shape({rows, cols});
    for (auto& x : m) x = number(r);
    return m;
}

// ---- saying what was drawn and what came out ----------------------------------------------------------------

inline std::string num(double x) {
    std::ostringstream s;
    s.precision(7);
    s << x;
    return s.str();
}
// A tensor in a line: (1000, 0) for a vector, [(1, 2), (3, 4)] for a matrix; past 8 entries a row (8 rows a
// matrix) the rest is "…": shrunk inputs are small, and a large one is named by its shape.
inline std::string show(const attn::Vec& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size() && i < 8; ++i) s += (i ? ", " : "") + num(v(i));
    if (v.size() > 8) s += ", … " + std::to_string(v.size() - 8) + " more";
    return s + ")";
}
inline std::string show(const attn::Mat& m) {
    std::string s = "[";
    for (std::size_t i = 0; i < m.shape(0) && i < 8; ++i) {
        attn::Vec row = xt::row(m, static_cast<std::ptrdiff_t>(i));
        s += (i ? ", " : "") + show(row);
    }
    if (m.shape(0) > 8) s += ", … " + std::to_string(m.shape(0) - 8) + " more rows";
    return s + "] " + attn::shape_str(m);
}
inline std::string show(double x) { return num(x); }

// The message when yours differs from the oracle, or "" when it does not: close means within tol, absolute
// where the expected value is below 1 in size and relative above (times `scale` where one is given: an entry's
// own size of the sums behind it, so that fp32 rounding of a large sum that cancels to a small one is allowed).
// A mistake whose output is yours on this input is named only where it is the only one that fits: rapidcheck's
// shrinking seeks the smallest input, where several mistakes often agree, and then none is named.
template <class T>
std::string compare(const std::string& fn, const T& mine, const T& want, double tol, const std::string& input,
                    const std::vector<Mistake<T>>& mistakes = {}, const T* scale = nullptr) {
    if (!detail::same_shape(mine, want))
        return "your " + fn + " gives shape " + attn::shape_str(mine) + " for " + input + "; expected " + attn::shape_str(want) +
               "\n[vi] " + fn + " của bạn trả về hình " + attn::shape_str(mine) + " với " + input + "; đúng là " + attn::shape_str(want);
    std::size_t at = want.size();
    for (std::size_t i = 0; i < want.size() && at == want.size(); ++i) {
        const double a = mine.data()[i], b = want.data()[i];
        const double size = std::max({1.0, std::fabs(b), scale ? static_cast<double>(scale->data()[i]) : 0.0});
        if (!(a == b || std::fabs(a - b) <= tol * size)) at = i;
    }
    if (at == want.size()) return "";
    std::vector<std::string> matching;
    for (const auto& m : mistakes)
        if (detail::same_shape(mine, m.value) && detail::first_difference(mine, m.value, tol, true) == m.value.size())
            matching.push_back(m.name);
    if (matching.size() > 1) matching.clear();
    const std::string cell = detail::cell_name(want, at), yours = num(mine.data()[at]), theirs = num(want.data()[at]);
    return "your " + fn + " gives " + show(mine) + " for " + input + "; expected " + show(want) + " (first difference at " + cell +
           ": yours " + yours + ", expected " + theirs + ", tolerance " + num(tol) + ")" + detail::diagnosis(matching) +
           "\n[vi] " + fn + " của bạn cho " + show(mine) + " với " + input + "; đúng là " + show(want) + " (khác đầu tiên ở ô " + cell +
           ": của bạn " + yours + ", đúng là " + theirs + ", sai số cho phép " + num(tol) + ")";
}
inline std::string compare(const std::string& fn, double mine, double want, double tol, const std::string& input,
                           const std::vector<Mistake<double>>& mistakes = {}) {
    if (detail::close(mine, want, tol)) return "";
    std::vector<std::string> matching;
    for (const auto& m : mistakes)
        if (detail::close(mine, m.value, tol, true)) matching.push_back(m.name);
    if (matching.size() > 1) matching.clear();
    return "your " + fn + " gives " + num(mine) + " for " + input + "; expected " + num(want) + " (tolerance " + num(tol) + ")" +
           detail::diagnosis(matching) + "\n[vi] " + fn + " của bạn cho " + num(mine) + " với " + input + "; đúng là " + num(want) +
           " (sai số cho phép " + num(tol) + ")";
}
// Counts: exact.
inline std::string compare_count(const std::string& fn, std::size_t mine, std::size_t want, const std::string& input) {
    if (mine == want) return "";
    return "your " + fn + " gives " + std::to_string(mine) + " for " + input + "; expected " + std::to_string(want) + "\n[vi] " + fn +
           " của bạn cho " + std::to_string(mine) + " với " + input + "; đúng là " + std::to_string(want);
}

// The contract's error: "" when `call` throws attn::Error (not the stub's "not implemented"), else what it did.
template <class Call>
std::string error_expected(const std::string& fn, Call&& call, const std::string& input) {
    std::string did, did_vi;
    try {
        call();
        did = "returned normally";
        did_vi = "trả về bình thường";
    } catch (const attn::Error& e) {
        const std::string what = e.what();
        if (what.find("not implemented") == std::string::npos) return "";
        did = "threw the stub's \"" + what + "\"";
        did_vi = "ném thông báo của bản khung \"" + what + "\"";
    } catch (const std::exception& e) {
        did = "threw " + detail::type_name(e) + " (\"" + e.what() + "\")";
        did_vi = "ném " + detail::type_name(e) + " (\"" + e.what() + "\")";
    }
    return "your " + fn + " " + did + " for " + input + "; the contract asks for an attn::Error here\n[vi] " + fn + " của bạn " + did_vi +
           " với " + input + "; hợp đồng yêu cầu ném attn::Error ở đây";
}

// ---- running a property ---------------------------------------------------------------------------------------

// rapidcheck's listener that prints nothing: the failure is said once, by the check below (the default one
// also prints a "reproduce" string at exit, which a fixed seed makes unnecessary).
struct Quiet : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// Draws `cases` inputs through `body` (Case& → the failure's message, "" when the case passes); on a failure,
// rapidcheck shrinks the input and the check fails once, with the smallest failing input's message.
template <class Body>
bool check(const std::string& what, Body&& body, int cases = kCases) {
    rc::detail::TestParams params;
    params.seed = kSeed;
    params.maxSuccess = cases;
    rc::detail::TestMetadata metadata;
    metadata.id = what;
    metadata.description = what;
    Quiet listener;
    // A kernel that never ends is stopped by the emulator's time bound (seconds each time): after the first,
    // the search for a smaller input ends, and the input that hung is the one reported.
    bool hung = false;
    std::string hang;  // the failure of the input that hung
    const auto result = rc::detail::checkTestable(
        [&] {
            if (hung) return;
            Case c;
            std::string failure;
            try {
                failure = body(c);
            } catch (const std::exception& e) {
                const std::string what_ = e.what(), type = detail::type_name(e);
                failure = "yours threw " + type + " (\"" + what_ + "\") for " + c.input + "\n[vi] hàm của bạn ném " + type + " (\"" +
                          what_ + "\") với " + c.input;
                hung = what_.find("was stopped: one block ran for over") != std::string::npos;
                if (hung) hang = failure;
            }
            if (!failure.empty()) throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, failure);
        },
        metadata, params, listener, std::unordered_map<std::string, rc::detail::Reproduce>{});  // no reproduce map: no RC_PARAMS read
    if (result.template is<rc::detail::SuccessResult>()) {
        SUCCEED(what);
        return true;
    }
    std::string message;
    int passed = 0;
    if (result.template is<rc::detail::FailureResult>()) {
        const auto& f = result.template get<rc::detail::FailureResult>();
        message = f.description;
        passed = f.numSuccess;
    } else if (result.template is<rc::detail::GaveUpResult>()) {
        message = result.template get<rc::detail::GaveUpResult>().description;
    } else {
        message = result.template get<rc::detail::Error>().description;
    }
    if (hung) message = hang;
    FAIL_CHECK(what << " (rapidcheck, seed " << kSeed << "; " << passed << " inputs passed; "
                    << (hung ? "this input never finished, so no smaller one was tried" : "this is the smallest failing one it found")
                    << "):\n" << message);
    return false;
}

}  // namespace ex_test::prop
