// How an exercise test tells a learner what is wrong: one failure per check, naming the first cell that
// differs, both values, the shape and the trial — and, where the wrong value is what a known mistake gives,
// the mistake.
//
//   if (!expect_close(mine, want, 1e-5, "trial 3, x (4, 2)", {{"dividing by T instead of t + 1", wrong}})) break;
//
// Returns whether it passed, so that a loop over random trials stops at the first failing one (one clear
// message rather than ten of the same).
#pragma once

#include <catch2/catch.hpp>

#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <typeinfo>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "report/table.hpp"

namespace ex_test {

// What a known mistake would have returned for this input.
template <class T>
struct Mistake {
    std::string name;  // "the division by √d_k is missing"
    T value;
};

namespace detail {

// Within tol (absolute below 1, relative above); equal infinities are close. NaN is close to nothing —
// except, when matching a mistake (nan_matches), to NaN: an overflow gives NaN where the mistake does.
inline bool close(double a, double b, double tol, bool nan_matches = false) {
    if (a == b) return true;
    if (nan_matches && std::isnan(a) && std::isnan(b)) return true;
    return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b));  // NaN: false
}

template <class T>
std::string cell_name(const T& t, std::size_t i) {
    const auto& s = t.shape();
    if (s.size() == 1) return "(" + std::to_string(i) + ")";
    if (s.size() == 2) return "(" + std::to_string(i / s[1]) + ", " + std::to_string(i % s[1]) + ")";
    const std::size_t rows = s[1], cols = s[2];
    return "(" + std::to_string(i / (rows * cols)) + ", " + std::to_string(i / cols % rows) + ", " + std::to_string(i % cols) + ")";
}

// The flat index of the first entry that differs beyond tol, or size() when none does.
template <class T>
std::size_t first_difference(const T& mine, const T& want, double tol, bool nan_matches = false) {
    for (std::size_t i = 0; i < want.size(); ++i)
        if (!close(mine.data()[i], want.data()[i], tol, nan_matches)) return i;
    return want.size();
}

// An exception's dynamic type, readable: "std::runtime_error".
inline std::string type_name(const std::exception& e) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    const std::string out = status == 0 && name ? name : typeid(e).name();
    std::free(name);
    return out;
}

template <class T>
bool same_shape(const T& a, const T& b) {
    return a.dimension() == b.dimension() && std::equal(a.shape().begin(), a.shape().end(), b.shape().begin());
}

// The line naming the mistake, from the known mistakes whose output is yours on this input: one named only
// when this input tells it apart from the others; two or more that give the same output here are all listed,
// never the first of them alone.
inline std::string diagnosis(const std::vector<std::string>& matching) {
    if (matching.empty()) return "";
    if (matching.size() == 1) return "\n  — this is exactly what " + matching.front() + " gives";
    std::string out = "\n  — on this input, each of these mistakes gives exactly this:";
    for (const std::string& name : matching) out += "\n      " + name;
    return out;
}

}  // namespace detail

// mine against want, entry by entry, within tol (absolute below 1, relative above). `context` says where:
// the trial, the input's shape.
template <class T>
bool expect_close(const T& mine, const T& want, double tol, const std::string& context,
                  const std::vector<Mistake<T>>& mistakes = {}) {
    std::ostringstream msg;
    if (!detail::same_shape(mine, want)) {
        msg << context << ": yours has shape " << attn::shape_str(mine) << ", expected " << attn::shape_str(want);
        FAIL_CHECK(msg.str());
        return false;
    }
    const std::size_t at = detail::first_difference(mine, want, tol);
    if (at == want.size()) {
        SUCCEED(context);
        return true;
    }
    msg.precision(7);
    msg << context << ", shape " << attn::shape_str(want) << ": first difference at " << detail::cell_name(want, at)
        << ": yours " << mine.data()[at] << ", expected " << want.data()[at];
    std::vector<std::string> matching;
    for (const auto& m : mistakes)
        if (detail::same_shape(mine, m.value) && detail::first_difference(mine, m.value, tol, true) == m.value.size())
            matching.push_back(m.name);
    msg << detail::diagnosis(matching);
    FAIL_CHECK(msg.str());
    return false;
}

// Known mistakes ruled out by the inputs a test has already passed: a mistake whose output on a passed input
// differs from the answer cannot be what the learner wrote, so a later input that it happens to share an output
// with must not name it. `candidates` drops those; `rule_out` records the ones this (passed) input rules out.
template <class T>
std::vector<Mistake<T>> candidates(std::vector<Mistake<T>> mistakes, const std::vector<std::string>& ruled_out) {
    std::erase_if(mistakes, [&](const Mistake<T>& m) { return std::find(ruled_out.begin(), ruled_out.end(), m.name) != ruled_out.end(); });
    return mistakes;
}
template <class T>
void rule_out(const std::vector<Mistake<T>>& mistakes, const T& want, double tol, std::vector<std::string>& ruled_out) {
    for (const auto& m : mistakes)
        if (!detail::same_shape(m.value, want) || detail::first_difference(m.value, want, tol) != want.size()) ruled_out.push_back(m.name);
}

// One number.
inline bool expect_close(double mine, double want, double tol, const std::string& context,
                         const std::vector<Mistake<double>>& mistakes = {}) {
    if (detail::close(mine, want, tol)) {
        SUCCEED(context);
        return true;
    }
    std::ostringstream msg;
    msg.precision(10);
    msg << context << ": yours " << mine << ", expected " << want;
    std::vector<std::string> matching;
    for (const auto& m : mistakes)
        if (detail::close(mine, m.value, tol, true)) matching.push_back(m.name);
    msg << detail::diagnosis(matching);
    FAIL_CHECK(msg.str());
    return false;
}

// The contract's error: `call` must throw attn::Error (attn::require throws it), with each of `must_name` in its
// message — and not the stub's "not implemented". Anything else fails saying what happened instead: returned
// normally, the stub's message, or another exception type, named, e.g. "threw std::runtime_error (\"bad\"); the
// contract asks for attn::Error".
template <class Call>
bool expect_error(Call&& call, const std::string& context, const std::vector<std::string>& must_name = {}) {
    std::string problem;
    try {
        call();
        problem = "returned normally";
    } catch (const attn::Error& e) {
        const std::string what = e.what();
        if (what.find("not implemented") != std::string::npos) problem = "threw the stub's \"" + what + "\"";
        for (const std::string& s : must_name)
            if (problem.empty() && what.find(s) == std::string::npos)
                problem = "threw attn::Error, but its message \"" + what + "\" does not name " + s;
        if (problem.empty()) {
            SUCCEED(context);
            return true;
        }
    } catch (const std::exception& e) {
        problem = "threw " + detail::type_name(e) + " (\"" + e.what() + "\"); the contract asks for attn::Error (attn::require throws it, "
                  "or throw attn::Error(\"...\"))";
    } catch (...) {
        problem = "threw something that is not a std::exception; the contract asks for attn::Error";
    }
    FAIL_CHECK(context << ": the contract asks for an attn::Error here; yours " << problem);
    return false;
}

}  // namespace ex_test
