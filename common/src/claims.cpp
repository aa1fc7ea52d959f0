#include "attn/claims.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attn/error.hpp"

namespace attn {

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::agrees: return "agrees";
        case Verdict::shape: return "shape";
        case Verdict::differs: return "differs";
        case Verdict::unresolved: return "unresolved";
    }
    return "?";
}

Verdict agrees_if(bool holds) { return holds ? Verdict::agrees : Verdict::differs; }

Verdict judge(Checks c) {
    if (c.as_stated) return Verdict::agrees;
    return c.weaker ? Verdict::shape : Verdict::differs;
}

namespace {
std::string num(double x, int digits, bool sign = false) {
    char buf[64];
    std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", digits, x);
    return buf;
}

std::string seed_range(const std::vector<std::uint64_t>& seeds) {
    if (seeds.empty()) return "no seeds";
    bool consecutive = true;
    for (std::size_t i = 1; i < seeds.size(); ++i) consecutive = consecutive && seeds[i] == seeds[i - 1] + 1;
    if (seeds.size() == 1) return "seed " + std::to_string(seeds[0]);
    if (consecutive) return "seeds " + std::to_string(seeds.front()) + "-" + std::to_string(seeds.back());
    std::string s = "seeds ";
    for (std::size_t i = 0; i < seeds.size(); ++i) s += (i ? "," : "") + std::to_string(seeds[i]);
    return s;
}

// " %" for "%": the unit as the project's text writes it, after a space
std::string spaced(const std::string& unit) { return unit.empty() ? unit : " " + unit; }

// "uniform / learned - 1: +8.0, +3.1, -5.2 % (mean +2.0, se 3.8; chapter +23)"
std::string figure_line(const SeedFigure& f, const SeedSummary& m) {
    std::string s = f.name + ": ";
    for (std::size_t i = 0; i < f.values.size(); ++i) s += (i ? ", " : "") + num(f.values[i], f.digits, true);
    s += spaced(f.unit) + " (mean " + num(m.mean, f.digits, true) + ", se " + num(m.se, f.digits);
    if (!std::isnan(f.chapter)) s += "; the chapter " + num(f.chapter, f.digits, true);
    return s + ")";
}

std::string sign_words(const SeedFigure& f, const SeedSummary& m) {
    const std::string count = std::to_string(m.positive) + " of " + std::to_string(m.n) + " seeds";
    switch (m.sign) {
        case SeedSummary::Sign::holds: return f.name + " > 0 at " + count;
        case SeedSummary::Sign::opposite: return f.name + " < 0: > 0 at only " + count;
        case SeedSummary::Sign::mixed: break;
    }
    return f.name + " > 0 at " + count + " (mean " + num(m.mean, f.digits, true) + spaced(f.unit) + ", 3 se " + num(3 * m.se, f.digits) + ")";
}
}  // namespace

SeedSummary summarize(const SeedFigure& f) {
    SeedSummary m;
    m.n = static_cast<int>(f.values.size());
    if (m.n == 0) return m;
    for (double v : f.values) m.mean += v, m.positive += v > 0;
    m.mean /= m.n;
    for (double v : f.values) m.sd += (v - m.mean) * (v - m.mean);
    m.sd = m.n > 1 ? std::sqrt(m.sd / (m.n - 1)) : 0.0;
    m.se = m.sd / std::sqrt(static_cast<double>(m.n));
    const int negative = static_cast<int>(std::count_if(f.values.begin(), f.values.end(), [](double v) { return v < 0; }));
    // two seeds at least: one seed's sign is no more than one seed's luck
    if (m.n >= 2 && m.positive >= m.n - 1 && m.mean > 3 * m.se) m.sign = SeedSummary::Sign::holds;
    else if (m.n >= 2 && negative >= m.n - 1 && m.mean < -3 * m.se) m.sign = SeedSummary::Sign::opposite;
    if (!std::isnan(f.chapter)) m.size_agrees = std::fabs(f.chapter - m.mean) <= 2 * m.sd;
    return m;
}

SeedVerdict judge(const OverSeeds& o) {
    require(!o.as_stated.empty(), "judge", "a claim over seeds needs at least one figure");
    for (const auto* list : {&o.as_stated, &o.weaker})
        for (const SeedFigure& f : *list)
            require(f.values.size() == o.seeds.size(), "judge",
                    f.name + ": " + std::to_string(f.values.size()) + " values for " + std::to_string(o.seeds.size()) + " seeds");
    SeedVerdict v;
    v.ours = seed_range(o.seeds) + ": ";
    bool signs = true, sizes = true, opposite = false;
    std::string failing, sizes_off;
    for (std::size_t i = 0; i < o.as_stated.size(); ++i) {
        const SeedFigure& f = o.as_stated[i];
        const SeedSummary m = summarize(f);
        v.ours += (i ? "; " : "") + figure_line(f, m);
        if (m.sign != SeedSummary::Sign::holds) signs = false, failing += (failing.empty() ? "" : "; ") + sign_words(f, m);
        if (m.sign == SeedSummary::Sign::opposite) opposite = true;
        if (!m.size_agrees)
            sizes = false, sizes_off += (sizes_off.empty() ? "" : "; ") + f.name + ": the chapter's " + num(f.chapter, f.digits, true) + spaced(f.unit) +
                                       " is not within 2 sd (" + num(2 * m.sd, f.digits) + ") of our mean " + num(m.mean, f.digits, true);
    }
    bool weaker = !o.weaker.empty();
    std::string weaker_failing;
    for (const SeedFigure& f : o.weaker) {
        const SeedSummary m = summarize(f);
        const bool printed = std::any_of(o.as_stated.begin(), o.as_stated.end(),
                                         [&](const SeedFigure& g) { return g.name == f.name && g.values == f.values; });
        if (!printed) v.ours += "; " + figure_line(f, m);
        if (m.sign != SeedSummary::Sign::holds)
            weaker = false, weaker_failing += (weaker_failing.empty() ? "" : "; ") + sign_words(f, m);
        else if (!m.size_agrees)
            weaker = false, weaker_failing += (weaker_failing.empty() ? "" : "; ") + f.name + ": the chapter's " + num(f.chapter, f.digits, true) +
                                              spaced(f.unit) + " is not within 2 sd (" + num(2 * m.sd, f.digits) + ") of our mean " + num(m.mean, f.digits, true);
    }
    const bool any_size = std::any_of(o.as_stated.begin(), o.as_stated.end(), [](const SeedFigure& f) { return !std::isnan(f.chapter); });
    const std::string rule = " (a figure holds when it is > 0 at every seed but at most one, its mean beyond 3 se)";
    if (o.seeds.size() < 2) {  // nothing to decide: one seed's signs are one seed's luck
        v.verdict = Verdict::unresolved;
        v.why = "one seed decides nothing: run --seeds 5 (or more) to decide it";
    } else if (signs && sizes) {
        v.verdict = Verdict::agrees;
        v.why = "every figure holds at " + seed_range(o.seeds) + rule + (any_size ? "; the chapter's sizes lie within 2 sd of our means" : "");
    } else if (signs && o.weaker.empty()) {  // no weaker statement named: the directions are it
        v.verdict = Verdict::shape;
        v.why = "the weaker statement holds: the direction of each figure, at " + seed_range(o.seeds) + rule + "; not the chapter's size: " + sizes_off;
    } else if (weaker) {
        v.verdict = Verdict::shape;
        v.why = "the weaker statement holds at " + seed_range(o.seeds) + ": " + o.weaker_name + rule + "; as stated it does not: " +
                (failing.empty() ? sizes_off : sizes_off.empty() ? failing : failing + "; " + sizes_off);
    } else if (opposite) {
        v.verdict = Verdict::differs;
        v.why = "the opposite holds: " + failing + (o.weaker.empty() ? "" : "; nor does the weaker statement (" + o.weaker_name + "): " + weaker_failing);
    } else if (signs) {  // the directions hold, not the sizes, and the named weaker statement does not hold either
        v.verdict = Verdict::differs;
        v.why = "the directions hold, not the chapter's size (" + sizes_off + "), nor the weaker statement (" + o.weaker_name + "): " + weaker_failing;
    } else {
        v.verdict = Verdict::unresolved;
        v.why = "the seeds disagree: " + failing + (o.weaker.empty() ? "" : "; the weaker statement (" + o.weaker_name + "): " + weaker_failing);
    }
    return v;
}

void ClaimReport::add(std::string id, std::string what, std::string chapter, const OverSeeds& seeds) {
    const SeedVerdict v = judge(seeds);
    add(Claim{std::move(id), std::move(what), std::move(chapter), v.ours, v.verdict, v.why});
}

void ClaimReport::add(Claim claim) {
    require(claim.verdict != Verdict::shape || !claim.why.empty(), "ClaimReport",
            claim.id + ": a `shape` verdict must say which weaker statement holds (Claim::why)");
    claims_.push_back(std::move(claim));
}

void ClaimReport::add(std::string id, std::string what, std::string chapter, std::string ours, Verdict verdict, std::string why) {
    add(Claim{std::move(id), std::move(what), std::move(chapter), std::move(ours), verdict, std::move(why)});
}

void ClaimReport::skip(std::string id, std::string why) { skipped_.emplace_back(std::move(id), std::move(why)); }

void ClaimReport::print(std::ostream& os) const {
    // DIFFERS in capitals: the one a reader must not miss.
    auto label = [](Verdict v) {
        return v == Verdict::agrees ? "agrees " : v == Verdict::shape ? "shape  " : v == Verdict::differs ? "DIFFERS" : "UNRESOLVED";
    };
    os << "\nClaims recomputed here (ids from CLAIMS.md)\n";
    int n[4] = {0, 0, 0, 0};
    for (const auto& c : claims_) {
        ++n[static_cast<int>(c.verdict)];
        os << "  " << c.id << "  " << label(c.verdict) << "  " << c.what << "\n";
        os << "              chapter: " << c.chapter << "\n";
        os << "              ours:    " << c.ours << "\n";
        if (!c.why.empty()) {
            os << "              " << (c.verdict == Verdict::agrees ? "within:  " : c.verdict == Verdict::shape ? "holds:   " : "because: ")
               << c.why << "\n";
        }
    }
    for (const auto& [id, why] : skipped_) os << "  " << id << "  skipped  " << why << "\n";
    os << "  verdicts: " << n[0] << " agree, " << n[1] << " shape, " << n[2] << " differ";
    if (n[3] > 0) os << ", " << n[3] << " unresolved";
    if (!skipped_.empty()) os << ", " << skipped_.size() << " skipped";
    const char* sep = " — ";
    for (const auto& c : claims_) {
        os << sep << c.id << " " << to_string(c.verdict);
        sep = " · ";
    }
    os << "\n";
}

}  // namespace attn
