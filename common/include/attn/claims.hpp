// The claims summary every program ends with: each claim of the chapter it recomputed (ids from
// shared/CLAIMS.md), the chapter's value beside ours, and whether they agree. The test suite asserts
// the same claims; this is the learner's view of them.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace attn {

class ClaimReport {
public:
    void add(std::string id, std::string what, std::string chapter, std::string ours, bool agrees);
    void skip(std::string id, std::string why);  // a claim this run's flags do not reach
    void print(std::ostream& os) const;
    bool all_agree() const;

private:
    struct Claim {
        std::string id, what, chapter, ours;
        bool agrees;
    };
    std::vector<Claim> claims_;
    std::vector<std::pair<std::string, std::string>> skipped_;
};

}  // namespace attn
