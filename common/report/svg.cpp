#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "report/table.hpp"

namespace attn::svg {

namespace {
std::string esc(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}
std::string num(double x) { return fmt(x, 2); }

// A conservative width for a label: 0.65 em a character (sans-serif averages about 0.5), counting code
// points, not bytes ("√" is one character). The margins below are sized with it so that no label is cut.
double text_width(const std::string& s, double font_px) {
    std::size_t chars = 0;
    for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
    return 0.65 * font_px * static_cast<double>(chars);
}
double widest(const std::vector<std::string>& labels, double font_px) {
    double w = 0;
    for (const auto& l : labels) w = std::max(w, text_width(l, font_px));
    return w;
}

// White (0) to deep blue (1).
std::string colour(double v) {
    v = std::clamp(v, 0.0, 1.0);
    const int r = static_cast<int>(std::lround(255 - v * (255 - 8)));
    const int g = static_cast<int>(std::lround(255 - v * (255 - 48)));
    const int b = static_cast<int>(std::lround(255 - v * (255 - 107)));
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
    return buf;
}
}  // namespace

std::string heatmap(const Mat& w, const Heatmap& o) {
    const std::size_t rows = w.shape(0), cols = w.shape(1);
    const double cell = rows > 24 || cols > 24 ? 14 : 44;
    // Margins from the labels: row labels end 6 px left of the grid; column labels rise at 60° from 6 px above it.
    const double sin60 = std::sqrt(3.0) / 2, col_w = widest(o.col_labels, 12);
    const double left = o.row_labels.empty() ? 20 : std::max(40.0, 16 + widest(o.row_labels, 12));
    const double top = o.col_labels.empty() ? 40 : std::max(60.0, 40 + 6 + col_w * sin60);
    const double grid_right = left + cell * static_cast<double>(cols);
    const double width = std::max({grid_right + 20, grid_right - cell / 2 + col_w / 2 + 10, 20 + text_width(o.title, 14)});
    const double height = top + cell * static_cast<double>(rows) + 20;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"10\" y=\"22\" font-size=\"14\">" << esc(o.title) << "</text>\n";
    for (std::size_t j = 0; j < cols && j < o.col_labels.size(); ++j) {
        const double x = left + cell * (static_cast<double>(j) + 0.5);
        s << "<text transform=\"translate(" << num(x) << "," << num(top - 6) << ") rotate(-60)\">"
          << esc(o.col_labels[j]) << "</text>\n";
    }
    for (std::size_t i = 0; i < rows; ++i) {
        const double y = top + cell * static_cast<double>(i);
        if (i < o.row_labels.size()) {
            s << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y + cell * 0.6) << "\" text-anchor=\"end\">"
              << esc(o.row_labels[i]) << "</text>\n";
        }
        for (std::size_t j = 0; j < cols; ++j) {
            const double v = w(i, j);
            const double x = left + cell * static_cast<double>(j);
            s << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(cell) << "\" height=\""
              << num(cell) << "\" fill=\"" << colour(v) << "\" stroke=\"#ddd\"><title>(" << i << ", " << j
              << ") " << fmt(v, 3) << "</title></rect>\n";
            if (o.annotate && cell >= 40) {
                s << "<text x=\"" << num(x + cell / 2) << "\" y=\"" << num(y + cell * 0.6)
                  << "\" text-anchor=\"middle\" font-size=\"11\" fill=\"" << (v > 0.5 ? "white" : "#333") << "\">"
                  << fmt(v, 2) << "</text>\n";
            }
        }
    }
    s << "</svg>\n";
    return s.str();
}

std::string line_plot(const std::vector<Series>& series, const LinePlot& o) {
    // The plot is 400 × 310; the legend's column is as wide as its longest name, the canvas as wide as the title.
    std::vector<std::string> names;
    for (const auto& se : series) names.push_back(se.name);
    const double left = 70, top = 40, bottom = 50, pw_fixed = 400, H = 400;
    const double right = std::max(170.0, 40 + widest(names, 12) + 10);
    const double W = std::max(left + pw_fixed + right, left + text_width(o.title, 14) + 10);
    double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
    auto tx = [&](double x) { return o.log2_x ? std::log2(x) : x; };
    for (const auto& se : series) {
        for (std::size_t i = 0; i < se.x.size(); ++i) {
            x0 = std::min(x0, tx(se.x[i]));
            x1 = std::max(x1, tx(se.x[i]));
            y0 = std::min(y0, se.y[i]);
            y1 = std::max(y1, se.y[i]);
        }
    }
    for (const auto& [y, label] : o.hlines) y1 = std::max(y1, y);
    if (!(x1 > x0)) x1 = x0 + 1;
    if (!(y1 > y0)) y1 = y0 + 1;
    // Round ticks: a step of 1, 2 or 5 times a power of ten giving at most six intervals.
    const double raw = (y1 - y0) / 5, mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag : 10 * mag;
    y0 = std::floor(y0 / step) * step;
    y1 = std::ceil(y1 * 1.02 / step) * step;
    const double pw = pw_fixed, ph = H - top - bottom;
    auto px = [&](double x) { return left + (tx(x) - x0) / (x1 - x0) * pw; };
    auto py = [&](double y) { return top + (1 - (y - y0) / (y1 - y0)) * ph; };

    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(W) << "\" height=\"" << num(H)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    s << "<text x=\"" << num(left) << "\" y=\"24\" font-size=\"14\">" << esc(o.title) << "</text>\n";
    s << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw) << "\" height=\"" << num(ph)
      << "\" fill=\"none\" stroke=\"#999\"/>\n";
    const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
    for (double y = y0; y <= y1 + step / 2; y += step) {
        s << "<text x=\"" << num(left - 6) << "\" y=\"" << num(py(y) + 4) << "\" text-anchor=\"end\">"
          << fmt(y, decimals) << "</text>\n";
        s << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + pw) << "\" y1=\"" << num(py(y)) << "\" y2=\""
          << num(py(y)) << "\" stroke=\"#eee\"/>\n";
    }
    // x ticks: at the first series' points when there are few (d_k = 4, 16, …), else at round steps
    std::vector<double> xticks;
    if (!series.empty() && (o.log2_x || series.front().x.size() <= 12)) {
        xticks = series.front().x;
    } else {
        const double xr = (x1 - x0) / 5, xm = std::pow(10.0, std::floor(std::log10(xr)));
        const double xs = xr <= xm ? xm : xr <= 2 * xm ? 2 * xm : xr <= 5 * xm ? 5 * xm : 10 * xm;
        for (double x = std::ceil(x0 / xs) * xs; x <= x1 + xs / 2; x += xs) xticks.push_back(x);
    }
    for (double x : xticks) {
        s << "<text x=\"" << num(px(x)) << "\" y=\"" << num(top + ph + 18) << "\" text-anchor=\"middle\">"
          << fmt(x, x == std::floor(x) ? 0 : 2) << "</text>\n";
    }
    s << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(H - 10) << "\" text-anchor=\"middle\">"
      << esc(o.x_label) << "</text>\n";
    s << "<text transform=\"translate(18," << num(top + ph / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << esc(o.y_label) << "</text>\n";
    for (const auto& [y, label] : o.hlines) {
        s << "<line x1=\"" << num(left) << "\" x2=\"" << num(left + pw) << "\" y1=\"" << num(py(y)) << "\" y2=\""
          << num(py(y)) << "\" stroke=\"#888\" stroke-dasharray=\"2,3\"/>\n";
        s << "<text x=\"" << num(left + 6) << "\" y=\"" << num(py(y) - 5) << "\" fill=\"#666\">" << esc(label)
          << "</text>\n";
    }
    for (std::size_t k = 0; k < series.size(); ++k) {
        const auto& se = series[k];
        s << "<polyline fill=\"none\" stroke=\"" << se.colour << "\" stroke-width=\"2\""
          << (se.dashed ? " stroke-dasharray=\"6,4\"" : "") << " points=\"";
        for (std::size_t i = 0; i < se.x.size(); ++i) s << (i ? " " : "") << num(px(se.x[i])) << "," << num(py(se.y[i]));
        s << "\"/>\n";
        for (std::size_t i = 0; i < se.x.size() && se.x.size() <= 24; ++i) {  // markers only when they stay readable
            s << "<circle cx=\"" << num(px(se.x[i])) << "\" cy=\"" << num(py(se.y[i])) << "\" r=\"3\" fill=\""
              << se.colour << "\"><title>" << esc(se.name) << ": " << fmt(se.y[i], 3) << "</title></circle>\n";
        }
        const double ly = top + 20 + 20 * static_cast<double>(k);
        s << "<line x1=\"" << num(left + pw + 10) << "\" x2=\"" << num(left + pw + 34) << "\" y1=\"" << num(ly - 4)
          << "\" y2=\"" << num(ly - 4) << "\" stroke=\"" << se.colour << "\" stroke-width=\"2\""
          << (se.dashed ? " stroke-dasharray=\"6,4\"" : "") << "/>\n";
        s << "<text x=\"" << num(left + pw + 40) << "\" y=\"" << num(ly) << "\">" << esc(se.name) << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

std::string sibling(const std::string& path, const std::string& suffix) {
    const bool has_ext = path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0;
    return (has_ext ? path.substr(0, path.size() - 4) : path) + suffix + ".svg";
}

void write_file(const std::string& path, const std::string& content) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw Error("svg::write_file: cannot open '" + path + "' for writing");
    f << content;
    if (!f) throw Error("svg::write_file: writing '" + path + "' failed");
}

}  // namespace attn::svg
