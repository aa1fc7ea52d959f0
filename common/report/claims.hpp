// The claims summary every program ends with: each claim of the chapter it recomputed (ids from
// CLAIMS.md), the chapter's value beside ours, and one of these verdicts:
//   agrees      the chapter's statement holds as stated, within a tolerance whose reason is given;
//   shape       only a named weaker statement holds — the summary says which, and why;
//   differs     it does not hold; the summary says what we measured instead;
//   unresolved  a trained claim whose seeds disagree while the chapter's sizes lie inside our spread: neither
//               the statement nor its opposite holds at (nearly) every seed. Never a pass for the chapter.
// The test suite pins every verdict (tests/programs/CMakeLists.txt); this is the learner's view of them.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace attn {

enum class Verdict { agrees, shape, differs, unresolved };

const char* to_string(Verdict v);  // "agrees", "shape", "differs", "unresolved"

// agrees when the statement holds as stated, otherwise differs.
Verdict agrees_if(bool holds);

// The chapter's statement, and the weaker one a `shape` verdict names.
struct Checks {
    bool as_stated = false;  // the chapter's statement holds
    bool weaker = false;     // the named weaker statement holds
};
// as_stated → agrees; else weaker → shape; else differs.
Verdict judge(Checks c);

struct Claim {
    std::string id;       // "C12"
    std::string what;     // the statement, in a line
    std::string chapter;  // the chapter's figures
    std::string ours;     // ours
    Verdict verdict = Verdict::differs;
    // agrees: why the tolerance is what it is (optional); shape: the weaker statement that holds, and why
    // only it (required); differs: what the evidence is (optional).
    std::string why;
};

// --- Trained claims, decided over seeds ---------------------------------------------------------------------
// One rule decides every trained claim (README, "What a program prints"):
//   - a figure's tolerance is its spread over the seeds of this run (the sample sd), measured at this setup on this
//     corpus; a run of one seed borrows the spread measured at its setup over the seeds that exist (one_seed_sd,
//     named by OverSeeds::one_seed_spread), and with none to borrow it decides nothing;
//   - a figure holds when it is > 0 at every seed but at most one and its mean lies beyond 3 se of 0 (its opposite
//     likewise); its size agrees when the chapter's value lies within 2 sd of our mean;
//   - agrees: every figure holds, every size agrees. shape: not so, but a named weaker statement holds. differs:
//     a chapter's size lies outside 2 sd of our mean (whatever the signs do: the line gives the gap in sd), or the
//     opposite holds. unresolved: only where the seeds disagree and every chapter's size lies inside our spread.
// Each verdict's line says how many seeds decided it.

// One figure of a trained claim, at each seed: its sign says whether the statement holds at that seed (> 0: it
// does), its size by how much, e.g. the uniform model's held-out perplexity over the learned one's, minus 1.
struct SeedFigure {
    std::string name = {};            // "uniform / learned perplexity - 1"
    std::vector<double> values = {};  // one per seed
    // The chapter's value of the same figure, where its size is part of the claim (NaN: the sign alone is).
    double chapter = std::numeric_limits<double>::quiet_NaN();
    int digits = 1;            // how the values print
    std::string unit = {};     // "%" or ""
    // At one seed: the sd this figure has from seed to seed at this setup, measured elsewhere (OverSeeds::
    // one_seed_spread says where). NaN: none measured, and one seed decides nothing.
    double one_seed_sd = std::numeric_limits<double>::quiet_NaN();
    // The statement is the chapter's size alone (e.g. "matches": a ratio less 1 near 0), not a sign: it holds
    // wherever it is decided, and agrees when the chapter's value lies within 2 sd of our mean.
    bool size_only = false;
};

// The chapter gives no size for this figure: its sign alone is the statement.
inline constexpr double kNoSize = std::numeric_limits<double>::quiet_NaN();

// f(r) for each seed's results r, as one figure (what every trained claim builds its figures with).
template <class R, class F>
SeedFigure figure_over(const std::vector<R>& per_seed, std::string name, F f, double chapter = kNoSize, std::string unit = "%", int digits = 1) {
    SeedFigure g{.name = std::move(name), .values = {}, .chapter = chapter, .digits = digits, .unit = std::move(unit)};
    for (const R& r : per_seed) g.values.push_back(f(r));
    return g;
}

// f as a figure whose statement is its size alone (SeedFigure::size_only).
inline SeedFigure size_only(SeedFigure f) {
    f.size_only = true;
    return f;
}

// f with the chapter's size dropped: its sign alone (a weaker statement's copy of a sized figure).
inline SeedFigure sign_only(SeedFigure f) {
    f.chapter = kNoSize;
    return f;
}

// What the seeds say of one figure, by the rule above.
struct SeedSummary {
    enum class Sign { holds, opposite, mixed } sign = Sign::mixed;
    int positive = 0, n = 0;
    double mean = 0, sd = 0, se = 0;
    bool decided = false;     // a spread to judge by: two seeds or more, or one with a borrowed sd
    bool borrowed = false;    // the sd is one_seed_sd, not measured over this run's seeds
    bool size_agrees = true;  // true where the chapter gives no size (or nothing is decided)
    double gap_sd = 0;        // |chapter - mean| / sd where the chapter gives a size
};
SeedSummary summarize(const SeedFigure& f);

// A trained claim: `as_stated` are the figures whose signs and sizes the chapter's statement makes; `weaker`,
// those of the named weaker statement (their signs, and sizes where given). The verdict is the rule above.
struct OverSeeds {
    std::vector<std::uint64_t> seeds = {};
    std::vector<SeedFigure> as_stated = {};
    std::string weaker_name = {};  // the weaker statement, in words ("" when there is none)
    std::vector<SeedFigure> weaker = {};
    // At one seed: where the figures' one_seed_sd come from ("the ladder's 3 seeds at --full: ...").
    std::string one_seed_spread = {};
};
struct SeedVerdict {
    Verdict verdict = Verdict::unresolved;
    std::string ours;  // each figure at each seed, its mean and standard error
    std::string why;   // computed from the run: which figure held, which did not, and how
};
SeedVerdict judge(const OverSeeds& o);

class ClaimReport {
public:
    // Throws attn::Error for a `shape` verdict without its `why`.
    void add(Claim claim);
    void add(std::string id, std::string what, std::string chapter, std::string ours, Verdict verdict, std::string why = {});
    // a trained claim decided over seeds (judge above): its verdict, its figures as `ours`, its computed why
    void add(std::string id, std::string what, std::string chapter, const OverSeeds& seeds);
    void skip(std::string id, std::string why);  // a claim this run's flags do not reach
    // Each claim; then "verdicts: 3 agree, 1 shape, 0 differ — C01 agrees · C02 shape · …", the line
    // tools/claims_md.py reads and the program tests pin.
    void print(std::ostream& os) const;
    const std::vector<Claim>& claims() const { return claims_; }

private:
    std::vector<Claim> claims_;
    std::vector<std::pair<std::string, std::string>> skipped_;
};

}  // namespace attn
