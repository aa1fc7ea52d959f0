#include <catch2/catch.hpp>

#include <regex>

#include "attn/error.hpp"
#include "attn/svg.hpp"

using namespace attn;
using Catch::Matchers::Contains;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
}
}  // namespace

TEST_CASE("heatmap draws one square per entry, with its value", "[svg]") {
    const Mat w = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.0f}};
    const std::string s = svg::heatmap(w, {"A <test>", {"r0", "r1"}, {"c0", "c1", "c2"}});
    CHECK(s.rfind("<svg", 0) == 0);
    CHECK(count(s, "<rect x=") == 6);
    CHECK_THAT(s, Contains("A &lt;test&gt;") && Contains(">0.50<") && Contains(">r1<"));
}

TEST_CASE("line_plot draws each series and the reference lines", "[svg]") {
    const std::string s = svg::line_plot({{"a", {4, 16, 64}, {3.6, 3.7, 3.6}}, {"b", {4, 16, 64}, {2.8, 1.4, 0.6}, "#d62728"}},
                                         {"t", "d_k", "H", true, {{4.159, "ln 64"}}});
    CHECK(count(s, "<polyline") == 2);
    CHECK(count(s, "<circle") == 6);
    CHECK_THAT(s, Contains("ln 64"));
}

TEST_CASE("sibling names a second picture beside the first", "[svg]") {
    CHECK(svg::sibling("out/a.svg", "_loss") == "out/a_loss.svg");
    CHECK(svg::sibling("plot", "_rope") == "plot_rope.svg");
}

TEST_CASE("write_file names a path it cannot write", "[svg][errors]") {
    CHECK_THROWS_WITH(svg::write_file("/nonexistent-dir/x.svg", "x"), Contains("/nonexistent-dir/x.svg"));
}
