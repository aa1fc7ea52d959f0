// The three verdicts and the summary line the program tests pin.
#include <sstream>

#include <catch2/catch.hpp>

#include "attn/claims.hpp"
#include "attn/error.hpp"

using namespace attn;

TEST_CASE("judge: as stated agrees, only the weaker statement is shape, neither differs", "[claims]") {
    CHECK(judge({.as_stated = true, .weaker = true}) == Verdict::agrees);
    CHECK(judge({.as_stated = false, .weaker = true}) == Verdict::shape);
    CHECK(judge({.as_stated = false, .weaker = false}) == Verdict::differs);
    CHECK(agrees_if(true) == Verdict::agrees);
    CHECK(agrees_if(false) == Verdict::differs);
}

TEST_CASE("ClaimReport: a shape verdict must name its weaker statement", "[claims]") {
    ClaimReport r;
    CHECK_THROWS_AS(r.add("C99", "x", "chapter", "ours", Verdict::shape), Error);
    CHECK_NOTHROW(r.add("C99", "x", "chapter", "ours", Verdict::shape, "the order holds, not the size"));
}

TEST_CASE("ClaimReport: the summary counts each verdict and lists them in order", "[claims]") {
    ClaimReport r;
    r.add("C01", "a", "1", "1", Verdict::agrees);
    r.add("C02", "b", "2", "1.5", Verdict::shape, "smaller, as stated, but not by half");
    r.add("C03", "c", "3", "4", Verdict::differs);
    r.skip("C04", "needs --full");
    std::ostringstream os;
    r.print(os);
    const std::string out = os.str();
    CHECK(out.find("C02  shape    b") != std::string::npos);
    CHECK(out.find("holds:   smaller, as stated") != std::string::npos);
    CHECK(out.find("C03  DIFFERS  c") != std::string::npos);
    CHECK(out.find("verdicts: 1 agree, 1 shape, 1 differ, 1 skipped — C01 agrees · C02 shape · C03 differs\n") != std::string::npos);
}
