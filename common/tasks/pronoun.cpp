#include "tasks/pronoun.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace attn {

namespace {
// The role version draws from the first 8 of each (16 nouns, as in the chapter); the category version
// uses all 16 animals and 16 places, so that each noun is seen with many partners.
const std::vector<std::string> kAnimals = {"animal", "dog", "cat", "horse", "fox", "deer", "goat", "child",
                                           "cow", "sheep", "wolf", "bear", "duck", "pig", "mouse", "hen"};
const std::vector<std::string> kPlaces = {"street", "river", "road", "bridge", "field", "square", "canal", "track",
                                          "lane", "stream", "path", "ditch", "yard", "lawn", "creek", "ramp"};
const std::vector<std::string> kCrosser = {"tired", "scared", "slow", "weak"};  // describe x
const std::vector<std::string> kCrossed = {"wet", "wide", "busy", "steep"};     // describe y
const std::vector<std::string> kFrame = {"the", "did", "not", "cross", "because", "it", "was", "too", ",", "so", "waited", "."};
}  // namespace

int PronounTask::id(const std::string& word) const {
    const auto it = std::find(vocab.begin(), vocab.end(), word);
    require(it != vocab.end(), "PronounTask::id", "'" + word + "' is not in the vocabulary");
    return static_cast<int>(it - vocab.begin());
}

std::string PronounTask::words(const std::vector<int>& sentence) const {
    std::string s;
    for (int t : sentence) s += (s.empty() ? "" : " ") + vocab.at(t);
    return s;
}

PronounTask make_pronoun_task(PronounVersion version, std::uint64_t seed, int heldout_pairs) {
    PronounTask task;
    for (const auto* list : {&kFrame, &kAnimals, &kPlaces, &kCrosser, &kCrossed})
        task.vocab.insert(task.vocab.end(), list->begin(), list->end());
    std::vector<std::string> nouns(kAnimals.begin(), kAnimals.begin() + 8);
    nouns.insert(nouns.end(), kPlaces.begin(), kPlaces.begin() + 8);

    // The ordered pairs (x, y) of the version: any two nouns (role) or an animal then a place (category).
    std::vector<std::pair<int, int>> pairs;
    if (version == PronounVersion::role) {
        for (const auto& a : nouns)
            for (const auto& b : nouns)
                if (a != b) pairs.emplace_back(task.id(a), task.id(b));
    } else {
        for (const auto& a : kAnimals)
            for (const auto& b : kPlaces) pairs.emplace_back(task.id(a), task.id(b));
    }
    Rng rng(seed, 0x9a0);
    const auto order = rng.permutation(pairs.size());
    std::set<std::pair<int, int>> held;
    for (std::size_t i : order) {
        if (static_cast<int>(held.size()) >= heldout_pairs) break;
        const auto [x, y] = pairs[i];
        // Role version: hold out (x, y) only if its reverse stays in training.
        if (version == PronounVersion::role && held.count({y, x})) continue;
        held.insert({x, y});
    }
    require(static_cast<int>(held.size()) == heldout_pairs, "make_pronoun_task",
            "cannot hold out " + std::to_string(heldout_pairs) + " pairs");

    auto sentence = [&](int x, int y, const std::string& adj, int ref) {
        std::vector<int> s;
        s.push_back(task.id("the"));
        s.push_back(x);
        for (const char* w : {"did", "not", "cross", "the"}) s.push_back(task.id(w));
        s.push_back(y);
        for (const char* w : {"because", "it", "was", "too"}) s.push_back(task.id(w));
        s.push_back(task.id(adj));
        for (const char* w : {",", "so", "the"}) s.push_back(task.id(w));
        s.push_back(ref);
        for (const char* w : {"waited", "."}) s.push_back(task.id(w));
        return s;
    };
    for (const auto& [x, y] : pairs) {
        const bool is_held = held.count({x, y}) > 0;
        for (const auto* adjs : {&kCrosser, &kCrossed}) {
            for (const auto& adj : *adjs) {
                const int ref = adjs == &kCrosser ? x : y;
                (is_held ? task.heldout : task.train).push_back(sentence(x, y, adj, ref));
                (is_held ? task.heldout_answers : task.train_answers).push_back({x, y, ref});
            }
        }
    }
    return task;
}

}  // namespace attn
