// Formatting in the chapter's layouts.
#include <catch2/catch.hpp>

#include <sstream>

#include "report/table.hpp"

using namespace attn;

TEST_CASE("fmt, fmt_sci, fmt_count, fmt_hex_byte, fmt_vec", "[table]") {
    CHECK(fmt(0.40111, 3) == "0.401");
    CHECK(fmt(-0.0001, 3) == "0.000");  // no "-0.000"
    CHECK(fmt_sci(5.960464477539063e-08) == "5.96e-08");
    CHECK(fmt_count(124439808) == "124,439,808");
    CHECK(fmt_count(999) == "999");
    CHECK(fmt_count(-1000) == "-1,000");
    CHECK(fmt_hex_byte(0x00) == "00");
    CHECK(fmt_hex_byte(0x0a) == "0a");
    CHECK(fmt_hex_byte(0xe2) == "e2");
    CHECK(fmt_hex_byte(0xff) == "ff");
    CHECK(fmt_vec(Vec{0.401f, 0.198f, 0.401f}, 3) == "(0.401, 0.198, 0.401)");
}

TEST_CASE("Table right-aligns to the chapter's columns", "[table]") {
    std::ostringstream os;
    Table t(os, {{"d", 6, 0}, {"Var(q.k)", 13, 3}, {"std", 12, 3}, {"sqrt(d)", 10, 3}});
    t.header();
    t.row({4, 3.975, 1.994, 2.0});
    CHECK(os.str() == "     d     Var(q.k)         std   sqrt(d)\n"
                      "     4        3.975       1.994     2.000\n");
}

TEST_CASE("print_matrix prints rows of fixed decimals", "[table]") {
    std::ostringstream os;
    print_matrix(os, Mat{{1.0f, 0.0f}, {0.5f, 0.5f}}, 3);
    CHECK(os.str() == "  1.000 0.000\n  0.500 0.500\n");
}

TEST_CASE("round_preserving_sum keeps a probability row summing to 1", "[table]") {
    // softmax(8 · (0.2, −0.1, 0.4, 0)) = (0.1601, 0.0145, 0.7930, 0.0323): plain rounding sums to 0.99.
    const Vec p = {0.1601f, 0.0145f, 0.7930f, 0.0323f};
    CHECK(fmt_vec(p, 2) == "(0.16, 0.01, 0.79, 0.03)");
    CHECK(fmt_vec(round_preserving_sum(p, 2), 2) == "(0.16, 0.02, 0.79, 0.03)");
    const Vec q = {0.2645f, 0.1959f, 0.3230f, 0.2165f};
    CHECK(fmt_vec(round_preserving_sum(q, 2), 2) == "(0.26, 0.20, 0.32, 0.22)");
}

TEST_CASE("as_fraction finds the chapter's fractions", "[table]") {
    CHECK(as_fraction(5.0 / 3) == "5/3");
    CHECK(as_fraction(7.0 / 6) == "7/6");
    CHECK(as_fraction(2.0) == "2");
    CHECK(as_fraction(0.123456) == "");
    CHECK(as_fraction_over(1.0 / 3, 6) == "2/6");
    CHECK(agrees_at(0.40111, 0.401, 3));
    CHECK_FALSE(agrees_at(0.4016, 0.401, 3));
}
