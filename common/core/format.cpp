#include "core/format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn {

std::string fmt(double x, int decimals) {
    if (std::isnan(x)) return "NaN";  // printf says "nan" or "-nan" depending on the sign bit
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    std::string s = buf;
    if (s.rfind("-0", 0) == 0 && std::strtod(buf, nullptr) == 0.0) s.erase(0, 1);  // no "-0.000"
    return s;
}

std::string fmt_hex_byte(unsigned char b) {
    static const char* const hex = "0123456789abcdef";
    return {hex[b >> 4], hex[b & 0xf]};
}

std::string fmt_count(long long n) {
    std::string digits = std::to_string(n < 0 ? -n : n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (n < 0 ? "-" : "") + out;
}

std::string fmt_sci(double x, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", digits, x);
    return buf;
}

std::string fmt_vec(const std::vector<double>& v, int decimals) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i) s += fmt(v[i], decimals) + (i + 1 < v.size() ? ", " : "");
    return s + ")";
}

std::string fmt_vec(const Vec& v, int decimals) { return fmt_vec(std::vector<double>(v.begin(), v.end()), decimals); }

}  // namespace attn
