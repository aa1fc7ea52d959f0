#include "attn/claims.hpp"

namespace attn {

void ClaimReport::add(std::string id, std::string what, std::string chapter, std::string ours, bool agrees) {
    claims_.push_back({std::move(id), std::move(what), std::move(chapter), std::move(ours), agrees});
}

void ClaimReport::print(std::ostream& os) const {
    os << "\nClaims recomputed here (ids from CLAIMS.md)\n";
    for (const auto& c : claims_) {
        os << "  " << c.id << "  " << (c.agrees ? "agrees " : "DIFFERS") << "  " << c.what << "\n";
        os << "              chapter: " << c.chapter << "\n";
        os << "              ours:    " << c.ours << "\n";
    }
    for (const auto& [id, why] : skipped_) os << "  " << id << "  skipped  " << why << "\n";
    os << "  " << (all_agree() ? (skipped_.empty() ? "all claims agree" : "all claims checked agree") : "some claims differ — see above")
       << "\n";
}

void ClaimReport::skip(std::string id, std::string why) { skipped_.emplace_back(std::move(id), std::move(why)); }

bool ClaimReport::all_agree() const {
    for (const auto& c : claims_) {
        if (!c.agrees) return false;
    }
    return true;
}

}  // namespace attn
