#include "attn/claims.hpp"

#include "attn/error.hpp"

namespace attn {

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::agrees: return "agrees";
        case Verdict::shape: return "shape";
        case Verdict::differs: return "differs";
    }
    return "?";
}

Verdict agrees_if(bool holds) { return holds ? Verdict::agrees : Verdict::differs; }

Verdict judge(Checks c) {
    if (c.as_stated) return Verdict::agrees;
    return c.weaker ? Verdict::shape : Verdict::differs;
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
    auto label = [](Verdict v) { return v == Verdict::agrees ? "agrees " : v == Verdict::shape ? "shape  " : "DIFFERS"; };
    os << "\nClaims recomputed here (ids from CLAIMS.md)\n";
    int n[3] = {0, 0, 0};
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
    if (!skipped_.empty()) os << ", " << skipped_.size() << " skipped";
    const char* sep = " — ";
    for (const auto& c : claims_) {
        os << sep << c.id << " " << to_string(c.verdict);
        sep = " · ";
    }
    os << "\n";
}

}  // namespace attn
