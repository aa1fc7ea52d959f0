// The verdicts, their decision over seeds, and the summary line the program tests pin.
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "report/claims.hpp"

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

namespace {
SeedFigure fig(std::string name, std::vector<double> values, double chapter = std::numeric_limits<double>::quiet_NaN()) {
    return SeedFigure{.name = std::move(name), .values = std::move(values), .chapter = chapter, .digits = 1, .unit = "%"};
}
const std::vector<std::uint64_t> five = {0, 1, 2, 3, 4};
}  // namespace

TEST_CASE("summarize: a figure holds at every seed but one with its mean beyond 3 se, its opposite likewise, else the seeds are mixed",
          "[claims]") {
    CHECK(summarize(fig("a", {1, 2, 3, 2, 1})).sign == SeedSummary::Sign::holds);
    CHECK(summarize(fig("a", {5, 6, 4, 5, -0.5})).sign == SeedSummary::Sign::holds);  // one seed against, mean far out
    CHECK(summarize(fig("a", {2.7, -1.9, 1.2, 1.8, 7.9})).sign == SeedSummary::Sign::mixed);  // 4 of 5, mean 2.3 < 3 se 4.8
    CHECK(summarize(fig("a", {1, -1, 2, -2, 3})).sign == SeedSummary::Sign::mixed);            // two against
    CHECK(summarize(fig("a", {-3, -4, -2, -3, -5})).sign == SeedSummary::Sign::opposite);
    const SeedSummary alone = summarize(fig("a", {4}));  // one seed and no spread to judge it by
    CHECK(alone.sign == SeedSummary::Sign::mixed);
    CHECK_FALSE(alone.decided);
    const SeedSummary m = summarize(fig("a", {1, 2, 3}, 10));
    CHECK(m.mean == Approx(2));
    CHECK(m.sd == Approx(1));
    CHECK(m.se == Approx(1 / std::sqrt(3.0)));
    CHECK_FALSE(m.size_agrees);  // 10 is 8 from the mean, 2 sd = 2
    CHECK(m.gap_sd == Approx(8));
    CHECK(summarize(fig("a", {1, 2, 3}, 3.5)).size_agrees);
    CHECK_FALSE(summarize(fig("a", {1, 2, 3}, 4.01)).size_agrees);  // just past 2 sd
}

TEST_CASE("summarize: one seed borrows the spread measured at its setup, and is judged by it as by its own", "[claims]") {
    SeedFigure f = fig("a", {4}, 10);
    f.one_seed_sd = 1;
    const SeedSummary m = summarize(f);
    CHECK(m.decided);
    CHECK(m.borrowed);
    CHECK(m.sign == SeedSummary::Sign::holds);  // 4 > 3 sd
    CHECK_FALSE(m.size_agrees);                  // 10 lies 6 sd away
    CHECK(m.gap_sd == Approx(6));
    f.values = {2.5};
    CHECK(summarize(f).sign == SeedSummary::Sign::mixed);  // within 3 sd of 0
    f.values = {-4};
    CHECK(summarize(f).sign == SeedSummary::Sign::opposite);
    f.values = {8.5};
    CHECK(summarize(f).size_agrees);  // 1.5 sd
}

TEST_CASE("judge over seeds: one rule — agrees, shape, differs whatever the signs, unresolved only inside the spread", "[claims]") {
    const SeedFigure up = fig("gain", {5, 6, 4, 5, 6}), down = fig("gain", {-5, -6, -4, -5, -6}), mixed = fig("gain", {3, -2, 1, 2, -1});
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {up}}).verdict == Verdict::agrees);
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {5, 6, 4, 5, 6}, 5.5)}}).verdict == Verdict::agrees);
    // the direction holds, not the chapter's size: differs, with the gap in sd
    const SeedVerdict sized = judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {5, 6, 4, 5, 6}, 23)}});
    CHECK(sized.verdict == Verdict::differs);
    CHECK(sized.why.find("gain: the chapter's +23.0 % lies 21.3 sd (0.8) from our mean +5.2") != std::string::npos);
    CHECK(sized.why.find("the directions hold") != std::string::npos);
    CHECK(sized.why.find("decided by 5 seeds") != std::string::npos);
    // with a named weaker statement, shape only where it holds
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {5, 6, 4, 5, 6}, 23)}, .weaker_name = "w", .weaker = {up}}).verdict ==
          Verdict::shape);
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {5, 6, 4, 5, 6}, 23)}, .weaker_name = "w", .weaker = {mixed}}).verdict ==
          Verdict::differs);
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {up, mixed}, .weaker_name = "w", .weaker = {up}}).verdict == Verdict::shape);
    const SeedVerdict opposite = judge(OverSeeds{.seeds = five, .as_stated = {down}});
    CHECK(opposite.verdict == Verdict::differs);
    CHECK(opposite.why.find("the opposite holds") != std::string::npos);
    // mixed signs with the chapter's size inside the spread: unresolved
    const SeedVerdict disagree = judge(OverSeeds{.seeds = five, .as_stated = {up, mixed}});
    CHECK(disagree.verdict == Verdict::unresolved);
    CHECK(disagree.why.find("gain > 0 at 3 of 5 seeds") != std::string::npos);
    CHECK(disagree.ours.find("seeds 0-4: gain: +5.0, +6.0, +4.0, +5.0, +6.0 % (mean +5.2, se 0.4)") != std::string::npos);
    CHECK(judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {3, -2, 1, 2, -1}, 2)}}).verdict == Verdict::unresolved);
    // mixed signs with the chapter's size far outside: differs, whatever the signs do
    const SeedVerdict far = judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {3, -2, 1, 2, -1}, 23.2)}});
    CHECK(far.verdict == Verdict::differs);
    CHECK(far.why.find("the chapter's +23.2 % lies") != std::string::npos);
    // one seed: nothing to judge it by, unless a spread measured at its setup is lent to it
    const SeedVerdict one = judge(OverSeeds{.seeds = {7}, .as_stated = {fig("gain", {5})}});
    CHECK(one.verdict == Verdict::unresolved);
    CHECK(one.why.find("no spread measured at this setup") != std::string::npos);
    SeedFigure lent = fig("gain", {5}, 23);
    lent.one_seed_sd = 1.5;
    const SeedVerdict borrowed = judge(OverSeeds{.seeds = {7}, .as_stated = {lent}, .one_seed_spread = "three seeds elsewhere"});
    CHECK(borrowed.verdict == Verdict::differs);  // 23 lies 12 sd from 5
    CHECK(borrowed.why.find("decided by 1 seed, judged by the spread measured at this setup over other seeds: three seeds elsewhere") !=
          std::string::npos);
    CHECK(borrowed.ours.find("gain: +5.0 % (one seed; sd at this setup 1.5; the chapter +23.0)") != std::string::npos);
    lent.chapter = 7;
    CHECK(judge(OverSeeds{.seeds = {7}, .as_stated = {lent}, .one_seed_spread = "x"}).verdict == Verdict::agrees);
    // a figure without a lent spread beside one with it: what is decided still decides
    SeedFigure off = fig("cost", {-10});
    off.one_seed_sd = 2;
    CHECK(judge(OverSeeds{.seeds = {7}, .as_stated = {off, fig("std", {3})}, .one_seed_spread = "x"}).verdict == Verdict::differs);
    CHECK(judge(OverSeeds{.seeds = {7}, .as_stated = {lent, fig("std", {3})}, .one_seed_spread = "x"}).verdict == Verdict::unresolved);
    CHECK_THROWS_WITH(judge(OverSeeds{.seeds = five, .as_stated = {fig("gain", {1, 2})}}), Catch::Contains("2 values for 5 seeds"));
}

TEST_CASE("ClaimReport: an unresolved claim prints UNRESOLVED and is counted", "[claims]") {
    ClaimReport r;
    r.add("C01", "a", "1", "1", Verdict::agrees);
    r.add("C33", "b", "2", OverSeeds{.seeds = five, .as_stated = {fig("gain", {3, -2, 1, 2, -1})}});
    std::ostringstream os;
    r.print(os);
    const std::string out = os.str();
    CHECK(out.find("C33  UNRESOLVED  b") != std::string::npos);
    CHECK(out.find("because: the seeds disagree") != std::string::npos);
    CHECK(out.find("verdicts: 1 agree, 0 shape, 0 differ, 1 unresolved — C01 agrees · C33 unresolved\n") != std::string::npos);
}
