#include "report/claims.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"

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
    if (m.n == 1)  // one seed: its sd is borrowed from the seeds run at this setup, or there is none
        s += spaced(f.unit) + (m.borrowed ? " (one seed; sd at this setup " + num(m.sd, f.digits) : std::string(" (one seed"));
    else
        s += spaced(f.unit) + " (mean " + num(m.mean, f.digits, true) + ", se " + num(m.se, f.digits);
    if (!std::isnan(f.chapter)) s += "; the chapter " + num(f.chapter, f.digits, true);
    return s + ")";
}

std::string sign_words(const SeedFigure& f, const SeedSummary& m) {
    const std::string count = std::to_string(m.positive) + " of " + std::to_string(m.n) + (m.n == 1 ? " seed" : " seeds");
    if (!m.decided) return f.name + ": one seed, and no spread measured at this setup to judge it by";
    switch (m.sign) {
        case SeedSummary::Sign::holds: return f.name + " > 0 at " + count;
        case SeedSummary::Sign::opposite: return f.name + " < 0: > 0 at only " + count;
        case SeedSummary::Sign::mixed: break;
    }
    return f.name + " > 0 at " + count + " (mean " + num(m.mean, f.digits, true) + spaced(f.unit) + ", 3 se " + num(3 * m.se, f.digits) + ")";
}

// "gain: the chapter's +23.0 % lies 6.1 sd (2.8) from our mean +5.2"
std::string size_words(const SeedFigure& f, const SeedSummary& m) {
    const std::string gap = std::isinf(m.gap_sd) ? "infinitely many" : num(m.gap_sd, 1);
    return f.name + ": the chapter's " + num(f.chapter, f.digits, true) + spaced(f.unit) + " lies " + gap + " sd (" + num(m.sd, f.digits) +
           ") from our mean " + num(m.mean, f.digits, true) + ", beyond the tolerance of 2 sd";
}

void append(std::string& list, const std::string& item) {
    if (!item.empty()) list += (list.empty() ? "" : "; ") + item;
}
}  // namespace

SeedSummary summarize(const SeedFigure& f) {
    SeedSummary m;
    m.n = static_cast<int>(f.values.size());
    if (m.n == 0) return m;
    for (double v : f.values) m.mean += v, m.positive += v > 0;
    m.mean /= m.n;
    if (m.n > 1) {
        for (double v : f.values) m.sd += (v - m.mean) * (v - m.mean);
        m.sd = std::sqrt(m.sd / (m.n - 1));
        m.decided = true;
    } else if (std::isfinite(f.one_seed_sd) && f.one_seed_sd > 0) {  // one seed, judged by a spread measured over others
        m.sd = f.one_seed_sd;
        m.decided = m.borrowed = true;
    }
    if (!m.decided) return m;  // one seed and nothing to judge it by: its sign is one seed's luck
    m.se = m.sd / std::sqrt(static_cast<double>(m.n));
    const int negative = static_cast<int>(std::count_if(f.values.begin(), f.values.end(), [](double v) { return v < 0; }));
    if (f.size_only) m.sign = SeedSummary::Sign::holds;  // no sign is stated: its size decides
    else if (m.positive >= m.n - 1 && m.mean > 3 * m.se) m.sign = SeedSummary::Sign::holds;
    else if (negative >= m.n - 1 && m.mean < -3 * m.se) m.sign = SeedSummary::Sign::opposite;
    if (!std::isnan(f.chapter)) {
        const double gap = std::fabs(f.chapter - m.mean);
        m.gap_sd = m.sd > 0 ? gap / m.sd : gap > 0 ? std::numeric_limits<double>::infinity() : 0.0;
        m.size_agrees = gap <= 2 * m.sd;
    }
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
    bool signs = true, sizes = true, opposite = false, decided = true;
    std::string failing, sizes_off;
    for (std::size_t i = 0; i < o.as_stated.size(); ++i) {
        const SeedFigure& f = o.as_stated[i];
        const SeedSummary m = summarize(f);
        v.ours += (i ? "; " : "") + figure_line(f, m);
        decided = decided && m.decided;
        if (m.sign != SeedSummary::Sign::holds) signs = false, append(failing, sign_words(f, m));
        if (m.sign == SeedSummary::Sign::opposite) opposite = true;
        if (!m.size_agrees) sizes = false, append(sizes_off, size_words(f, m));
    }
    bool weaker = !o.weaker.empty();
    std::string weaker_failing;
    for (const SeedFigure& f : o.weaker) {
        const SeedSummary m = summarize(f);
        const bool printed = std::any_of(o.as_stated.begin(), o.as_stated.end(),
                                         [&](const SeedFigure& g) { return g.name == f.name && g.values == f.values; });
        if (!printed) v.ours += "; " + figure_line(f, m);
        decided = decided && m.decided;
        if (m.sign != SeedSummary::Sign::holds) weaker = false, append(weaker_failing, sign_words(f, m));
        else if (!m.size_agrees) weaker = false, append(weaker_failing, size_words(f, m));
    }
    const bool any_size = std::any_of(o.as_stated.begin(), o.as_stated.end(), [](const SeedFigure& f) { return !std::isnan(f.chapter); });
    const std::string rule = " (a figure holds when it is > 0 at every seed but at most one, its mean beyond 3 se)";
    // how many seeds decided it, and by which spread
    const std::string n = std::to_string(o.seeds.size());
    const std::string by = o.seeds.size() == 1 ? (o.one_seed_spread.empty() ? std::string("1 seed, and no spread measured at this setup")
                                                                             : "decided by 1 seed, judged by the spread measured at this setup over other "
                                                                               "seeds: " + o.one_seed_spread)
                                               : "decided by " + n + " seeds, judged by their own spread";
    if (signs && sizes) {
        v.verdict = Verdict::agrees;
        v.why = "every figure holds at " + seed_range(o.seeds) + rule + (any_size ? "; the chapter's sizes lie within 2 sd of our means" : "");
    } else if (weaker) {
        v.verdict = Verdict::shape;
        std::string off = sizes_off;
        append(off, failing);
        v.why = "the weaker statement holds at " + seed_range(o.seeds) + ": " + o.weaker_name + rule + "; as stated it does not: " + off;
    } else if (!sizes) {
        v.verdict = Verdict::differs;
        v.why = "not the chapter's size: " + sizes_off + (signs ? "; the directions hold" : failing.empty() ? "" : "; and " + failing) +
                (o.weaker.empty() ? "" : "; nor does the weaker statement (" + o.weaker_name + "): " + weaker_failing);
    } else if (opposite) {
        v.verdict = Verdict::differs;
        v.why = "the opposite holds: " + failing + (o.weaker.empty() ? "" : "; nor does the weaker statement (" + o.weaker_name + "): " + weaker_failing);
    } else {
        v.verdict = Verdict::unresolved;
        v.why = (decided ? "the seeds disagree: " : "not decided: ") + failing + (any_size && decided ? ", and the chapter's sizes lie inside our spread" : "") +
                (o.weaker.empty() ? "" : "; the weaker statement (" + o.weaker_name + "): " + weaker_failing) +
                (decided ? "" : "; run --seeds 3 (or more) to decide it");
    }
    v.why += "; " + by;
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
