#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "report/svg.hpp"

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

namespace {
// Every label's box, estimated with a conservative 0.62 em a character, lies inside the canvas. Handles the
// three ways the writer places text: x/y with text-anchor start, middle or end, and translate + rotate.
void check_labels_fit(const std::string& svg) {
    auto attr = [](const std::string& tag, const std::string& name, double fallback) {
        const std::regex re(" " + name + "=\"(-?[0-9.]+)\"");
        std::smatch m;
        return std::regex_search(tag, m, re) ? std::stod(m[1]) : fallback;
    };
    std::smatch m;
    REQUIRE(std::regex_search(svg, m, std::regex("<svg [^>]*width=\"([0-9.]+)\" height=\"([0-9.]+)\"")));
    const double W = std::stod(m[1]), H = std::stod(m[2]);
    const std::regex text_re("<text([^>]*)>([^<]*)</text>");
    int labels = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re); it != std::sregex_iterator(); ++it) {
        const std::string tag = (*it)[1], content = (*it)[2];
        std::size_t chars = 0;
        for (unsigned char c : content) chars += (c & 0xC0) != 0x80;
        const double size = attr(tag, "font-size", 12), w = 0.62 * size * static_cast<double>(chars);
        double x0, x1, y0, y1;
        std::smatch t;
        if (std::regex_search(tag, t, std::regex("translate\\((-?[0-9.]+),(-?[0-9.]+)\\) rotate\\((-?[0-9.]+)\\)"))) {
            const double x = std::stod(t[1]), y = std::stod(t[2]), a = std::stod(t[3]) * M_PI / 180;
            const bool middle = tag.find("text-anchor=\"middle\"") != std::string::npos;
            const double s0 = middle ? -w / 2 : 0, s1 = middle ? w / 2 : w;  // along the baseline
            x0 = x + std::min(s0 * std::cos(a), s1 * std::cos(a)) - size, x1 = x + std::max(s0 * std::cos(a), s1 * std::cos(a)) + size;
            y0 = y + std::min(s0 * std::sin(a), s1 * std::sin(a)) - size, y1 = y + std::max(s0 * std::sin(a), s1 * std::sin(a)) + size;
        } else {
            const double x = attr(tag, "x", 0), y = attr(tag, "y", 0);
            const std::string anchor = tag.find("text-anchor=\"end\"") != std::string::npos      ? "end"
                                       : tag.find("text-anchor=\"middle\"") != std::string::npos ? "middle"
                                                                                                 : "start";
            x0 = anchor == "start" ? x : anchor == "middle" ? x - w / 2 : x - w;
            x1 = x0 + w, y0 = y - size, y1 = y + 0.25 * size;
        }
        INFO("label '" << content << "' spans x " << x0 << "…" << x1 << ", y " << y0 << "…" << y1 << " on a " << W << " × " << H << " canvas");
        CHECK(x0 >= 0);
        CHECK(x1 <= W);
        CHECK(y0 >= 0);
        CHECK(y1 <= H);
        ++labels;
    }
    CHECK(labels > 0);
}
}  // namespace

TEST_CASE("every label fits inside its canvas, however long", "[svg]") {
    const std::string long_name = "+ LayerNorm (the full block, pre-norm)";
    std::vector<svg::Series> series;
    for (const char* name : {"no context (baseline)", "uniform causal average", "+ learned single head (residual)", long_name.c_str()})
        series.push_back({name, {0, 100, 200}, {3.0, 2.0, 1.5}});
    check_labels_fit(svg::line_plot(series, {"The ladder: training loss (mean of 25 steps), one row per rung of Sections 9.1-9.5",
                                             "step", "loss (nats per byte)", false, {{2.5, "a reference line with a label"}}}));
    const attn::Mat w = xt::ones<float>({3, 5}) / 5.0f;
    check_labels_fit(svg::heatmap(w, {"Attention at 'so the', averaged over heads — a long title for a small grid",
                                      {"2 blocks, block 2: tired", "1 block: wet", "x"},
                                      {"the", "elephant", "did not cross", "√d_k", "because-it-was-too"}}));
    check_labels_fit(svg::heatmap(w, {"t", {}, {}}));
}
