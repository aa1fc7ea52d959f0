// Printing in the chapter's layouts: right-aligned fixed-width tables, matrices as rows of numbers,
// vectors as "(0.401, 0.198, 0.401)". Everything printed is a computed number formatted here.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "core/tensor.hpp"

namespace attn {

// One cell: a number printed with the column's decimals, an integer, or text.
struct Cell {
    enum class Kind { real, integer, text } kind;
    double real = 0;
    long long integer = 0;
    std::string text;
    Cell(double v) : kind(Kind::real), real(v) {}
    Cell(float v) : kind(Kind::real), real(v) {}
    Cell(int v) : kind(Kind::integer), integer(v) {}
    Cell(long long v) : kind(Kind::integer), integer(v) {}
    Cell(std::size_t v) : kind(Kind::integer), integer(static_cast<long long>(v)) {}
    Cell(std::string v) : kind(Kind::text), text(std::move(v)) {}
    Cell(const char* v) : kind(Kind::text), text(v) {}
};

struct Column {
    std::string header;
    int width;         // characters, right-aligned
    int decimals = 3;  // for real cells
};

class Table {
public:
    Table(std::ostream& os, std::vector<Column> columns, std::string indent = "");
    void header() const;
    void row(const std::vector<Cell>& cells) const;

private:
    std::ostream& os_;
    std::vector<Column> columns_;
    std::string indent_;
};

// Rows of a matrix, each entry in `width` characters: "  1.000 0.000 0.000".
void print_matrix(std::ostream& os, const Mat& m, int decimals = 3, const std::string& indent = "  ",
                  int width = 0);

// Round to `decimals` so that the rounded entries still sum to the rounded total (largest-remainder
// rounding). Plain rounding of softmax weights can leave a row that sums to 0.99; the chapter's rows
// are rounded this way, e.g. (0.160, 0.0145, 0.793, 0.032) → (0.16, 0.02, 0.79, 0.03).
std::vector<double> round_preserving_sum(const Vec& v, int decimals);

// The simplest fraction p/q (q ≤ max_den) within 1e-6 of x, as "5/3"; empty when there is none.
std::string as_fraction(double x, int max_den = 12);
// x as a fraction over a given denominator, "2/6"; empty when x·den is not an integer (within 1e-6).
std::string as_fraction_over(double x, int den);

// Does x, rounded to `decimals`, print as `chapter`? The agreement test of a claim at printed precision.
bool agrees_at(double x, double chapter, int decimals);

}  // namespace attn
