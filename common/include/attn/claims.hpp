// The claims summary every program ends with: each claim of the chapter it recomputed (ids from
// CLAIMS.md), the chapter's value beside ours, and one of three verdicts:
//   agrees   the chapter's statement holds as stated, within a tolerance whose reason is given;
//   shape    only a named weaker statement holds — the summary says which, and why;
//   differs  it does not hold; the summary says what we measured instead.
// The test suite pins every verdict (tests/programs/CMakeLists.txt); this is the learner's view of them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace attn {

enum class Verdict { agrees, shape, differs };

const char* to_string(Verdict v);  // "agrees", "shape", "differs"

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

class ClaimReport {
public:
    // Throws attn::Error for a `shape` verdict without its `why`.
    void add(Claim claim);
    void add(std::string id, std::string what, std::string chapter, std::string ours, Verdict verdict, std::string why = {});
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
