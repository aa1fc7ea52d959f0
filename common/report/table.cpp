#include "report/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace attn {

Table::Table(std::ostream& os, std::vector<Column> columns, std::string indent)
    : os_(os), columns_(std::move(columns)), indent_(std::move(indent)) {}

namespace {
std::string pad_left(const std::string& s, int width) {
    // Width counts characters, not bytes: UTF-8 continuation bytes (10xxxxxx) take no column.
    int chars = 0;
    for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
    return chars >= width ? s : std::string(static_cast<std::size_t>(width - chars), ' ') + s;
}
}  // namespace

void Table::header() const {
    os_ << indent_;
    for (const auto& c : columns_) os_ << pad_left(c.header, c.width);
    os_ << "\n";
}

void Table::row(const std::vector<Cell>& cells) const {
    os_ << indent_;
    for (std::size_t i = 0; i < columns_.size() && i < cells.size(); ++i) {
        const Cell& cell = cells[i];
        std::string text;
        switch (cell.kind) {
            case Cell::Kind::real: text = fmt(cell.real, columns_[i].decimals); break;
            case Cell::Kind::integer: text = cell.integer >= 10000 ? fmt_count(cell.integer) : std::to_string(cell.integer); break;
            case Cell::Kind::text: text = cell.text; break;
        }
        os_ << pad_left(text, columns_[i].width);
    }
    os_ << "\n";
}

void print_matrix(std::ostream& os, const Mat& m, int decimals, const std::string& indent, int width) {
    for (std::size_t i = 0; i < m.shape(0); ++i) {
        os << indent;
        for (std::size_t j = 0; j < m.shape(1); ++j) {
            os << (j ? " " : "") << pad_left(fmt(m(i, j), decimals), width);
        }
        os << "\n";
    }
}

std::vector<double> round_preserving_sum(const Vec& v, int decimals) {
    const double unit = std::pow(10.0, decimals);
    const std::size_t n = v.size();
    std::vector<double> floors(n), rem(n);
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double scaled = static_cast<double>(v(i)) * unit;
        floors[i] = std::floor(scaled);
        rem[i] = scaled - floors[i];
        total += v(i);
    }
    long long missing = std::llround(total * unit) - static_cast<long long>(std::accumulate(floors.begin(), floors.end(), 0.0));
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rem[a] > rem[b]; });
    for (std::size_t k = 0; k < n && missing > 0; ++k, --missing) floors[order[k]] += 1;
    for (auto& f : floors) f /= unit;
    return floors;
}

std::string as_fraction(double x, int max_den) {
    for (int q = 1; q <= max_den; ++q) {
        const double p = std::round(x * q);
        if (std::fabs(p / q - x) < 1e-6) {
            return q == 1 ? std::to_string(static_cast<long long>(p))
                          : std::to_string(static_cast<long long>(p)) + "/" + std::to_string(q);
        }
    }
    return "";
}

std::string as_fraction_over(double x, int den) {
    const double p = std::round(x * den);
    if (std::fabs(p / den - x) >= 1e-6) return "";
    return std::to_string(static_cast<long long>(p)) + "/" + std::to_string(den);
}

bool agrees_at(double x, double chapter, int decimals) { return fmt(x, decimals) == fmt(chapter, decimals); }

}  // namespace attn
