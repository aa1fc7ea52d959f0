// Exercises 9.1–9.3 (Section 9.6). Built against exercises/ (yours) and solutions/ (the answers).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "09_positions/positions.hpp"
#include "core/rng.hpp"
#include "expect.hpp"
#include "fast/matmul.hpp"
#include "property.hpp"
#include "report/table.hpp"

using attn::Mat;

namespace {
// The (T, d) table whose column pair (2t, 2t+1) of row i is (f(angle), g(angle)), angle = i · freq(t, col):
// the answer and its known mistakes.
Mat table(std::size_t T, std::size_t d, const std::function<double(std::size_t, std::size_t)>& angle, bool swapped = false) {
    Mat p = Mat::from_shape({T, d});
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t col = 0; col < d; ++col) {
            const double a = angle(i, col);
            p(i, col) = static_cast<float>((col % 2 == 0) != swapped ? std::sin(a) : std::cos(a));
        }
    return p;
}
double pair_angle(std::size_t i, std::size_t col, std::size_t d) {
    return static_cast<double>(i) / std::pow(10000.0, 2.0 * static_cast<double>(col / 2) / static_cast<double>(d));
}

// RoPE in double: pair (a, b) of row i (a column index, b its partner) rotated by sign · pos(i) · 10000^(−2t/d)
enum class Pairs { adjacent, halves };
enum class Freq { per_pair, without_2 };
Mat rope(const Mat& x, std::size_t first, double sign = 1, Pairs pairs = Pairs::adjacent, Freq freq = Freq::per_pair, bool use_first = true) {
    const std::size_t T = x.shape(0), d = x.shape(1);
    Mat y = Mat::from_shape({T, d});
    for (std::size_t i = 0; i < T; ++i)
        for (std::size_t t = 0; t < d / 2; ++t) {
            const std::size_t a = pairs == Pairs::adjacent ? 2 * t : t, b = pairs == Pairs::adjacent ? 2 * t + 1 : t + d / 2;
            const double e = freq == Freq::per_pair ? 2.0 * static_cast<double>(t) : static_cast<double>(t);
            const double theta = sign * static_cast<double>((use_first ? first : 0) + i) * std::pow(10000.0, -e / static_cast<double>(d));
            const double x0 = x(i, a), x1 = x(i, b);
            y(i, a) = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
            y(i, b) = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
        }
    return y;
}

// −m (t − i) on and below the diagonal, 0 above; or, with `above`, −m |t − i| everywhere
Mat alibi(std::size_t T, double m, bool above = false) {
    Mat b = xt::zeros<float>({T, T});
    for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < T; ++i)
            if (i <= t || above) b(t, i) = static_cast<float>(-m * std::fabs(static_cast<double>(t) - static_cast<double>(i)));
    return b;
}
}  // namespace

// Varies: (T, d) = (50, 16), (7, 2) (one pair), (12, 6), (30, 64), (1, 4) (one position: row 0 alone), so T,
// d and the number of pairs all change; every cell, the last pair's columns included.
TEST_CASE("Exercise 9.1: sinusoidal_table — the 2017 paper's position table", "[ex9.1][sec09]") {
    for (auto [T, d] : {std::pair<std::size_t, std::size_t>{50, 16}, {7, 2}, {12, 6}, {30, 64}, {1, 4}}) {
        const std::string context = "T = " + std::to_string(T) + ", d = " + std::to_string(d);
        const auto right = [d = d](std::size_t i, std::size_t col) { return pair_angle(i, col, d); };
        // float rounding of an angle up to 50 moves its sine by ~4e-6
        if (!ex_test::expect_close(ex::sinusoidal_table(T, d), table(T, d, right), 1e-5, context,
                                   {{"the frequency from the column instead of the pair (10000^(col/d))",
                                     table(T, d, [d = d](std::size_t i, std::size_t col) { return static_cast<double>(i) / std::pow(10000.0, static_cast<double>(col) / static_cast<double>(d)); })},
                                    {"sin and cos swapped (cos in the even columns)", table(T, d, right, true)},
                                    {"integer division in 2t / d (every frequency 1)",
                                     table(T, d, [d = d](std::size_t i, std::size_t col) { return static_cast<double>(i) / std::pow(10000.0, static_cast<double>(2 * (col / 2) / d)); })}}))
            break;
    }
}

// Varies: random T 1..9, d 2..12, first_position 0..19; one pair (d = 2) at first_position 0 and one row;
// first_position 100000 (where an angle in float loses ~1e-2 rad); the relative-position property of the scores.
TEST_CASE("Exercise 9.2: rope_rotate — rotations whose scores depend on the offset only", "[ex9.2][sec09]") {
    attn::Rng rng(902);
    for (int trial = 0; trial < 5; ++trial) {
        const std::size_t T = 1 + rng.below(9), d = 2 * (1 + rng.below(6)), first = rng.below(20);
        const Mat x = rng.normal_mat(T, d);
        if (!ex_test::expect_close(ex::rope_rotate(x, first), rope(x, first), 1e-5,
                                   "trial " + std::to_string(trial) + ", x " + attn::shape_str(x) + ", first_position " + std::to_string(first),
                                   {{"rotating by −θ (the sine's sign flipped)", rope(x, first, -1)},
                                    {"pairing column t with t + d/2 (the other RoPE layout) instead of 2t with 2t+1", rope(x, first, 1, Pairs::halves)},
                                    {"10000^(−t/d) instead of 10000^(−2t/d) (the 2 left out)", rope(x, first, 1, Pairs::adjacent, Freq::without_2)},
                                    {"ignoring first_position (row i at position i)", rope(x, first, 1, Pairs::adjacent, Freq::per_pair, false)}}))
            return;
    }
    for (const auto& [T, d, first] : {std::array<std::size_t, 3>{1, 2, 0}, {3, 2, 5}, {2, 10, 100000}}) {
        const Mat x = rng.normal_mat(T, d);
        if (!ex_test::expect_close(ex::rope_rotate(x, first), rope(x, first), 1e-5,
                                   "x " + attn::shape_str(x) + ", first_position " + std::to_string(first) + (first > 1000 ? " (angles in double)" : ""),
                                   {{"ignoring first_position (row i at position i)", rope(x, first, 1, Pairs::adjacent, Freq::per_pair, false)}}))
            return;
    }
    const Mat q = rng.normal_mat(1, 8), k = rng.normal_mat(1, 8);
    auto score = [&](std::size_t t, std::size_t i) { return static_cast<double>(attn::fast::matmul_nt(ex::rope_rotate(q, t), ex::rope_rotate(k, i))(0, 0)); };
    ex_test::expect_close(score(10, 7), score(3, 0), 1e-4, "q at 10 · k at 7 against q at 3 · k at 0 (both 3 apart)");
}

// Varies: T 1..7 (T = 1: a single 0), n_heads 4, 6, 8, 12, 16 (whole and fractional exponents), the head j
// from 1 (the first) to n_heads (the last); every cell, the last row (the largest distance) included.
TEST_CASE("Exercise 9.3: alibi_bias — each head's linear distance penalty, for any number of heads", "[ex9.3][sec09]") {
    // 8 and 4 heads give whole exponents; 12, 6 and 16 do not, which is where integer division shows
    for (auto [T, h, j] : {std::array<std::size_t, 3>{5, 8, 1}, {6, 4, 3}, {6, 12, 5}, {7, 12, 1}, {4, 6, 4}, {6, 16, 3}, {5, 8, 8}, {3, 6, 6}, {1, 8, 2}}) {
        const double m = std::pow(2.0, -8.0 * static_cast<double>(j) / static_cast<double>(h));
        if (!ex_test::expect_close(ex::alibi_bias(T, h, j), alibi(T, m), 1e-6,
                                   "T = " + std::to_string(T) + ", head " + std::to_string(j) + " of " + std::to_string(h) + " (slope " + attn::fmt(m, 5) + ")",
                                   {{"8 j / h in integer arithmetic (truncated before the power of 2)", alibi(T, std::pow(2.0, -static_cast<double>(8 * j / h)))},
                                    {"8 / h in integer arithmetic, then times j (truncated)", alibi(T, std::pow(2.0, -static_cast<double>(8 / h * j)))},
                                    {"the bias with the wrong sign (+m (t − i))", alibi(T, -m)},
                                    {"filling above the diagonal too (−m |t − i|)", alibi(T, m, true)},
                                    {"the head index taken as 0-based (slope 2^(−8 (j − 1) / h))", alibi(T, std::pow(2.0, -8.0 * static_cast<double>(j - 1) / static_cast<double>(h)))}}))
            break;
    }
}

// ---- Properties over the contracts' whole domain (tests/exercises/property.hpp) ----------------------------
namespace {
namespace prop = ex_test::prop;
Mat table_in_float(std::size_t T, std::size_t d) {  // the angle i · ω_t in float: at position 5·10^4 it is off by ~0.004
    return table(T, d, [d](std::size_t i, std::size_t col) {
        const float omega = static_cast<float>(std::pow(10000.0, -2.0 * static_cast<double>(col / 2) / static_cast<double>(d)));
        return static_cast<double>(static_cast<float>(i) * omega);
    });
}
}  // namespace

// T from 0, d even from 0 (short tables of any width, and long ones — up to 65,536 positions — of width 2 or 4,
// where an angle in float goes wrong), odd d (the error). Within 2e-6 of sin and cos of the double angle.
TEST_CASE("Exercise 9.1: sinusoidal_table — property: every T and even d, far positions, the error", "[ex9.1][sec09][property]") {
    prop::check("sinusoidal_table over T 0..65536, d 0..32", [](prop::Case& c) {
        const bool far = *rc::gen::inRange(0, 5) == 0;
        const std::size_t T = far ? prop::size(20000, 65536) : prop::size(0, 40), d = far ? 2 * prop::size(1, 2) : 2 * prop::size(0, 16);
        const bool odd = *rc::gen::inRange(0, 5) == 0;
        const std::size_t dd = odd ? d + 1 : d;
        c.input = "T = " + std::to_string(T) + ", d = " + std::to_string(dd);
        if (odd) return prop::error_expected("sinusoidal_table", [&] { (void)ex::sinusoidal_table(T, dd); }, c.input);
        return prop::compare("sinusoidal_table", ex::sinusoidal_table(T, d),
                             table(T, d, [d](std::size_t i, std::size_t col) { return pair_angle(i, col, d); }), 2e-6, c.input,
                             {{"the angle i · ω_t computed in float", table_in_float(T, d)}});
    });
}

// x up to 100 (T from 0, d even from 0), first_position up to 10^6, odd d (the error). Within 2e-6 of the
// rotation in double, relative to max(1, the pair's size).
TEST_CASE("Exercise 9.2: rope_rotate — property: any x and first position, far positions, the error", "[ex9.2][sec09][property]") {
    prop::check("rope_rotate over T 0..6, d 0..12, first_position up to 1e6", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 6), d = 2 * prop::size(0, 6);
        const std::size_t first = *rc::gen::element<std::size_t>(0, 1, 1000, 100000) + prop::size(0, *rc::gen::element<std::size_t>(10, 1000000));
        const bool odd = *rc::gen::inRange(0, 5) == 0;
        const Mat x = prop::mat(T, odd ? d + 1 : d, prop::range({1, 100}));
        c.input = "x " + prop::show(x) + ", first_position = " + std::to_string(first);
        if (odd) return prop::error_expected("rope_rotate", [&] { (void)ex::rope_rotate(x, first); }, c.input);
        Mat scale = Mat::from_shape(x.shape());
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t j = 0; j < d; j += 2) scale(i, j) = scale(i, j + 1) = static_cast<float>(std::hypot(x(i, j), x(i, j + 1)));
        return prop::compare("rope_rotate", ex::rope_rotate(x, first), rope(x, first), 2e-6, c.input,
                             {{"the rotation clockwise (−θ)", rope(x, first, -1)},
                              {"the first position ignored (row i at position i)", rope(x, first, 1, Pairs::adjacent, Freq::per_pair, false)}},
                             &scale);
    });
}

// T from 0, n_heads 1..16, every head 1..n_heads, and heads outside it (0, n_heads + 1, n_heads = 0: the error).
// Within 1e-6 (relative above 1) of −2^(−8j/n) (t − i) in double.
TEST_CASE("Exercise 9.3: alibi_bias — property: every head of every head count, the error", "[ex9.3][sec09][property]") {
    prop::check("alibi_bias over T 0..40, n_heads 0..16", [](prop::Case& c) {
        const std::size_t T = prop::size(0, 40), n = prop::size(1, 16);
        const int broken = *rc::gen::inRange(0, 6);  // 0..2 fit; 3: head 0; 4: head n_heads + 1; 5: n_heads = 0
        const std::size_t heads = broken == 5 ? 0 : n, head = broken == 3 ? 0 : broken == 4 ? n + 1 : broken == 5 ? 1 : prop::size(1, n);
        c.input = "T = " + std::to_string(T) + ", n_heads = " + std::to_string(heads) + ", head = " + std::to_string(head);
        if (broken >= 3) return prop::error_expected("alibi_bias", [&] { (void)ex::alibi_bias(T, heads, head); }, c.input);
        const auto bias_with = [&](double m) {
            Mat b = xt::zeros<float>({T, T});
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t i = 0; i <= t; ++i) b(t, i) = static_cast<float>(-m * static_cast<double>(t - i));
            return b;
        };
        return prop::compare("alibi_bias", ex::alibi_bias(T, heads, head), bias_with(std::pow(2.0, -8.0 * static_cast<double>(head) / static_cast<double>(heads))),
                             1e-6, c.input,
                             {{"8 j / n_heads in integers (truncated)", bias_with(std::pow(2.0, -static_cast<double>(8 * head / heads)))},
                              {"head j counted from 0 (slope 2^(−8(j−1)/n))", bias_with(std::pow(2.0, -8.0 * static_cast<double>(head - 1) / static_cast<double>(heads)))}});
    });
}
