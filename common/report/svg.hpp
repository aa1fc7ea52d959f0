// A small SVG writer for the two pictures a learner would rather look at than read: heatmaps
// (attention maps) and line plots (entropy against d_k, loss curves). Output is plain text, fixed by
// its inputs, so two runs with one seed write byte-identical files.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn::svg {

// A (rows, cols) matrix of values in [0, 1] (attention weights) as a grid of grey-to-blue squares,
// each labelled with its value when the grid is small enough to read.
struct Heatmap {
    std::string title;
    std::vector<std::string> row_labels, col_labels;  // may be empty
    bool annotate = true;                              // print the value in each cell
};
std::string heatmap(const Mat& weights, const Heatmap& opts);

struct Series {
    std::string name;
    std::vector<double> x, y;
    std::string colour = "#1f77b4";
    bool dashed = false;
};
struct LinePlot {
    std::string title, x_label, y_label;
    bool log2_x = false;  // d_k = 4, 16, 64, … evenly spaced
    std::vector<std::pair<double, std::string>> hlines = {};  // reference lines, e.g. ln 64
};
std::string line_plot(const std::vector<Series>& series, const LinePlot& opts);

// A second picture beside the first: sibling("out/a.svg", "_loss") == "out/a_loss.svg".
std::string sibling(const std::string& path, const std::string& suffix);

// Writes `content` to `path`; throws attn::Error naming the path if it cannot.
void write_file(const std::string& path, const std::string& content);

}  // namespace attn::svg
