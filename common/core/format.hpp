// Numbers as the programs print them: fixed decimals without "-0.000", NaN and inf spelled one way on
// every platform, scientific notation, thousands separators, a byte in hex, and rows in parentheses.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

std::string fmt(double x, int decimals);                  // fixed: fmt(0.4011, 3) == "0.401"
std::string fmt_sci(double x, int digits = 2);            // "5.96e-08"
std::string fmt_count(long long n);                       // "1,048,576"
std::string fmt_hex_byte(unsigned char b);               // two lowercase hex digits: fmt_hex_byte(0xe2) == "e2"
std::string fmt_vec(const Vec& v, int decimals);          // "(0.401, 0.198, 0.401)"
std::string fmt_vec(const std::vector<double>& v, int decimals);

}  // namespace attn
