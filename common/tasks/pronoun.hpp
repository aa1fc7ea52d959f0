// The pronoun task of Section 9.7 ("Encoder, decoder và encoder–decoder"): a language where the question has a right answer.
//
//   the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .
//
// Role version: x and y are drawn from one pool of 16 nouns, any noun in any slot. The adjective
// decides the referent by role: tired/scared/slow/weak describe the crosser (ref = x); wet/wide/busy/
// steep describe the crossed (ref = y). Held-out sentences use noun pairs whose *reverse* order is in
// training, so a model that knows which nouns are present but not which came first answers wrongly.
// Category version: x is an animal and y a place; the adjectives pick the referent by category,
// and a bag of words is enough (C34).
//
// A model is trained as an ordinary next-token predictor on whole sentences; it is scored on one
// position only: the token after "so the".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

enum class PronounVersion { role, category };

struct PronounTask {
    std::vector<std::string> vocab;            // token id → word
    std::vector<std::vector<int>> train, heldout;  // sentences of 18 token ids
    // the noun pair and the referent of each sentence, parallel to train / heldout
    struct Answer { int x, y, ref; };
    std::vector<Answer> train_answers, heldout_answers;
    static constexpr std::size_t kLength = 18;     // tokens per sentence
    static constexpr std::size_t kAnswerPosition = 14;  // input position of "the" whose next token is {ref}

    int id(const std::string& word) const;         // throws for an unknown word
    std::string words(const std::vector<int>& sentence) const;
};

// Deterministic given the seed. `heldout_pairs` unordered noun pairs have one order held out.
PronounTask make_pronoun_task(PronounVersion version, std::uint64_t seed, int heldout_pairs = 40);

}  // namespace attn
