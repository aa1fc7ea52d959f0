// Claims C14, C34, C35 — the pronoun task (Sections 9.1, 9.3, 9.7): trained models, asserted in shape.
// The models train at the programs' default size (3,000 steps, ~9 s each): shorter runs sit on a
// plateau at 50 % for a seed-dependent while, so a shorter test would assert the plateau, not the claim.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>

#include "attn/pronoun.hpp"
#include "attn/train.hpp"

using namespace attn;

TEST_CASE("The pronoun task: 16 nouns, held-out pairs whose reverse order is in training", "[claims][C35][sec04]") {
    const PronounTask task = make_pronoun_task(PronounVersion::role, 0);
    CHECK(task.heldout.size() == 40 * 8);
    CHECK(task.train.size() == (16 * 15 - 40) * 8);
    std::set<std::pair<int, int>> trained;
    for (const auto& b : task.train_answers) trained.insert({b.x, b.y});
    for (const auto& a : task.heldout_answers) {
        INFO(task.vocab[a.x] << " / " << task.vocab[a.y]);
        CHECK(trained.count({a.y, a.x}) == 1);  // the reverse order was trained
        CHECK(trained.count({a.x, a.y}) == 0);  // this order never was
    }
    CHECK(task.words(task.heldout.front()).rfind("the ", 0) == 0);
    const PronounTask again = make_pronoun_task(PronounVersion::role, 0);
    CHECK(again.heldout == task.heldout);  // deterministic given the seed
}

TEST_CASE("C35, C14, C34: uniform vs one learned head vs four heads, and the category version", "[claims][C14][C34][C35][sec04][sec05]") {
    const PronounTask role = make_pronoun_task(PronounVersion::role, 0);
    PronounSetup setup;  // the programs' defaults
    setup.progress = false;
    const PronounRun uniform = train_pronoun(role, Mixer::uniform, 1, setup, "uniform");
    const PronounRun one = train_pronoun(role, Mixer::learned, 1, setup, "one head");
    const PronounRun four = train_pronoun(role, Mixer::learned, 4, setup, "four heads");
    INFO("held-out: uniform " << uniform.heldout.accuracy << " (wrong noun " << uniform.heldout.wrong_noun << "), one head "
                              << one.heldout.accuracy << ", four heads " << four.heldout.accuracy);
    // C35: the uniform average lands below chance and answers the wrong noun of the right pair more
    // often than the right one; one learned head clearly beats it; one block (four heads) is near 90 %.
    CHECK(uniform.heldout.accuracy < 0.45);
    CHECK(uniform.heldout.wrong_noun > uniform.heldout.accuracy);
    CHECK(one.heldout.accuracy > 0.6);  // clearly above chance (0.5)
    CHECK(one.heldout.accuracy > uniform.heldout.accuracy + 0.15);
    CHECK(four.heldout.accuracy > 0.85);
    // C14: same parameters, several softmax rows per position: four heads beat one.
    CHECK(four.params == one.params);
    CHECK(four.heldout.accuracy > one.heldout.accuracy + 0.1);
    // C34: when the answer is a category, a bag of words is enough.
    const PronounTask category = make_pronoun_task(PronounVersion::category, 0, 16);
    const PronounRun bag = train_pronoun(category, Mixer::uniform, 1, setup, "uniform, category");
    INFO("category version, uniform: " << bag.heldout.accuracy);
    CHECK(bag.heldout.accuracy > 0.8);
    CHECK(bag.heldout.accuracy > uniform.heldout.accuracy + 0.3);
}

TEST_CASE("A training run is reproducible bit for bit", "[train][sec04]") {
    const PronounTask role = make_pronoun_task(PronounVersion::role, 3);
    PronounSetup setup;
    setup.steps = 40;
    setup.seed = 3;
    setup.progress = false;
    const PronounRun a = train_pronoun(role, Mixer::learned, 2, setup, "a");
    const PronounRun b = train_pronoun(role, Mixer::learned, 2, setup, "b");
    REQUIRE(a.log.losses.size() == 40);
    CHECK(a.log.losses == b.log.losses);
    auto pa = a.model->params().all().begin();
    for (const auto& pb : b.model->params().all()) {
        CHECK(std::memcmp(pa->value.data(), pb.value.data(), pb.value.size() * sizeof(float)) == 0);
        ++pa;
    }
    setup.seed = 4;  // and another seed trains differently, so the check above can fail
    const PronounRun c = train_pronoun(role, Mixer::learned, 2, setup, "c");
    CHECK(c.log.losses != a.log.losses);
}
