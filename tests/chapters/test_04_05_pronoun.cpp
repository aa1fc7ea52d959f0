// Claims C14, C34, C35 — the pronoun task (Sections 9.1, 9.3, 9.7): trained models, asserted in shape.
// The models train at the programs' default size (3,000 steps, ~9 s each): shorter runs sit on a
// plateau at 50 % for a seed-dependent while, so a shorter test would assert the plateau, not the claim.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>

#include "chapters/04_learned_attention/category.hpp"
#include "chapters/04_learned_attention/claims.hpp"
#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/05_multi_head/one_vs_four.hpp"
#include "program_models.hpp"  // tests/chapters/
#include "fast/model.hpp"
#include "reference/model.hpp"
#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

using namespace attn;
using namespace attn::sec04;  // chapters/04_learned_attention/

namespace {
// 05_multi_head decides C14 over five seeds (chapters/05_multi_head/claims.hpp); one seed decides nothing, so this
// test asks one seed for a clear gap: seeds 0…4 give four − one = 0.26–0.45.
constexpr double kC14TestMargin = 0.1;
}  // namespace

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

TEST_CASE("C35 (in part): the uniform average vs one learned head on the role version", "[claims][C35][sec04][models-of-04_learned_attention]") {
    const PronounTask role = make_pronoun_task(PronounVersion::role, 0);
    PronounSetup setup;  // the programs' defaults
    setup.progress = false;
    setup.checkpoints = test::program_models("04_learned_attention");  // under ctest, the program's own models (its names below)
    const PronounRun uniform = train_pronoun(role, Mixer::uniform, 1, setup, "uniform average");
    const PronounRun one = train_pronoun(role, Mixer::learned, 1, setup, "one learned head");
    for (const PronounRun* run : {&uniform, &one}) {  // each trained the setup's 3,000 steps, here or in the program
        INFO(run->name << ": steps trained (its checkpoint's, when loaded) against PronounSetup::steps");
        REQUIRE(run->log.losses.size() == static_cast<std::size_t>(setup.steps));
    }
    INFO("held-out: uniform " << uniform.heldout.accuracy << " (wrong noun " << uniform.heldout.wrong_noun << "), one head "
                              << one.heldout.accuracy);
    // The uniform average lands below chance and answers the wrong noun of the right pair more often than the
    // right one; one learned head clearly beats it.
    CHECK(uniform.heldout.accuracy < 0.45);
    CHECK(uniform.heldout.wrong_noun > uniform.heldout.accuracy);
    CHECK(one.heldout.accuracy > 0.6);  // clearly above chance (0.5)
    CHECK(one.heldout.accuracy > uniform.heldout.accuracy + 0.15);
}

TEST_CASE("C14: one head without W_o vs four heads with W_o, d^2 + d parameters apart (the chapter's comparison)",
          "[claims][C14][sec05][models-of-05_multi_head]") {
    const PronounTask role = make_pronoun_task(PronounVersion::role, 0);
    PronounSetup setup;  // 05_multi_head's defaults
    setup.progress = false;
    setup.checkpoints = test::program_models("05_multi_head");  // under ctest, the program's own seed-0 models
    const sec05::OneVsFour runs = sec05::train_one_vs_four(role, setup);  // the program's two models
    for (const PronounRun* run : {&runs.one, &runs.four}) {  // each trained the setup's 3,000 steps, here or in the program
        INFO(run->name << ": steps trained (its checkpoint's, when loaded) against PronounSetup::steps");
        REQUIRE(run->log.losses.size() == static_cast<std::size_t>(setup.steps));
    }
    const std::size_t d = setup.d_model;
    CHECK(runs.four.params - runs.one.params == d * d + d);  // W_o and b_o: 4,160 at d = 64 (16,512 at the chapter's 128)
    INFO("held-out: one head " << runs.one.heldout.accuracy << ", four heads " << runs.four.heldout.accuracy);
    CHECK(sec05::heldout_gap(runs) > 100 * kC14TestMargin);
}

TEST_CASE("C34: the category version — trained until each fits, the uniform average solves it and a block solves it too",
          "[claims][C34][sec04]") {
    const PronounTask category = make_pronoun_task(PronounVersion::category, 0, 16);
    PronounSetup setup;  // 04_learned_attention's defaults
    setup.progress = false;
    const FitTarget target{.train_accuracy = 0.99, .check_every = 250, .max_steps = 5 * setup.steps};
    const CategoryRun run = run_category(category, setup, target);  // the program's two models
    const PronounFitUntil &bag = run.bag, &block = run.block;
    INFO("uniform: " << bag.steps << " steps, train " << bag.fit.train.accuracy << ", held-out " << bag.fit.heldout.accuracy);
    INFO("one block: " << block.steps << " steps, train " << block.fit.train.accuracy << ", held-out " << block.fit.heldout.accuracy);
    // both fit their training sentences: the comparison is between models that learned what they were shown
    CHECK(bag.reached);
    CHECK(block.reached);
    CHECK(bag.fit.train.accuracy >= 0.99);
    CHECK(block.fit.train.accuracy >= 0.99);
    // the bag of words solves it (C34's first half, the program's tolerance) ...
    CHECK(bag.fit.heldout.accuracy >= 1 - kSolvesTol);
    // ... but does not beat a block that fits (the chapter's "bag of words wins" does not reproduce)
    CHECK(block.fit.heldout.accuracy >= bag.fit.heldout.accuracy);
}

TEST_CASE("fit_pronoun_until stops at the target, or at its cap", "[train][sec04][bits]") {
    const PronounTask category = make_pronoun_task(PronounVersion::category, 0, 16);
    PronounSetup setup;
    setup.progress = false;
    fast::Model a(pronoun_block_config(category, setup, 1, Mixer::uniform), 0);
    const PronounFitUntil capped = fit_pronoun_until(a, category, setup, {.train_accuracy = 1.01, .check_every = 10, .max_steps = 30}, "a");
    CHECK(!capped.reached);  // an accuracy above 1 is never reached
    CHECK(capped.steps == 30);
    CHECK(capped.fit.log.losses.size() == 30);
    fast::Model b(pronoun_block_config(category, setup, 1, Mixer::uniform), 0);
    const PronounFitUntil at_once = fit_pronoun_until(b, category, setup, {.train_accuracy = 0.0, .check_every = 10, .max_steps = 30}, "b");
    CHECK(at_once.reached);  // any accuracy is >= 0: it stops at the first check
    CHECK(at_once.steps == 10);
    CHECK(at_once.fit.log.losses == std::vector<double>(capped.fit.log.losses.begin(), capped.fit.log.losses.begin() + 10));
}

TEST_CASE("score_pronoun's loss is the mean next-token cross-entropy of the sentences it scores", "[train][sec04]") {
    const PronounTask role = make_pronoun_task(PronounVersion::role, 2);
    PronounSetup setup;
    reference::Model model(pronoun_block_config(role, setup, 1, Mixer::learned), 2);
    const PronounScore s = score_pronoun(model, role.heldout, role.heldout_answers);
    // the same cross-entropy from a forward of its own, and by hand from that forward's logits
    std::vector<std::size_t> rows(role.heldout.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::vector<int> tokens, targets;
    make_batch(role.heldout, rows, tokens, targets);
    const std::size_t T = role.heldout.front().size() - 1;
    CHECK(s.loss == model.forward(tokens, targets, rows.size(), T));
    double by_hand = 0;
    const Mat& logits = model.logits();  // (B·T, V)
    for (std::size_t n = 0; n < targets.size(); ++n) {
        double m = -1e300, z = 0;
        for (std::size_t j = 0; j < logits.shape(1); ++j) m = std::max(m, static_cast<double>(logits(n, j)));
        for (std::size_t j = 0; j < logits.shape(1); ++j) z += std::exp(static_cast<double>(logits(n, j)) - m);
        by_hand += m + std::log(z) - logits(n, static_cast<std::size_t>(targets[n]));
    }
    CHECK(s.loss == Approx(by_hand / static_cast<double>(targets.size())).epsilon(1e-5));
    CHECK(s.loss > 0.5 * std::log(static_cast<double>(role.vocab.size())));  // untrained: near log V, far from 0
}

TEST_CASE("A training run is reproducible bit for bit", "[train][sec04][bits]") {
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

TEST_CASE("C34's criterion: the chapter's figures agree, a tie is the weaker statement, a bag that does not solve it differs",
          "[claims][C34][sec04]") {
    const std::vector<std::uint64_t> seeds = {0, 1, 2, 3, 4};
    auto c34 = [&](std::vector<CategorySeed> per_seed) {
        ClaimReport report;
        add_c34_claim(report, seeds, per_seed, 15000);
        REQUIRE(report.claims().size() == 1);
        const Claim& c = report.claims().front();
        UNSCOPED_INFO(c.ours << " — " << c.why);
        return c.verdict;
    };
    auto at_every_seed = [](CategorySeed c) { return std::vector<CategorySeed>(5, c); };
    // the chapter: uniform 100 %, one block 91.7 %, both fit
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = true, .bag = 1.0, .block = 0.917})) == Verdict::agrees);
    // ours at seeds 0…4: both 100 %: the bag solves it and does not win
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = true, .bag = 1.0, .block = 1.0})) == Verdict::shape);
    // a bag that does not solve it, or that never fit its training sentences
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = true, .bag = 0.9, .block = 1.0})) == Verdict::differs);
    CHECK(c34(at_every_seed({.bag_fits = false, .block_fits = true, .bag = 1.0, .block = 0.917})) == Verdict::differs);
    // a block that never fit is no opponent: the bag's win does not count
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = false, .bag = 1.0, .block = 0.917})) == Verdict::shape);
    // within the tolerance: 96 % solves it, 94 % does not
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = true, .bag = 1 - kSolvesTol + 0.01, .block = 0.9})) == Verdict::agrees);
    CHECK(c34(at_every_seed({.bag_fits = true, .block_fits = true, .bag = 1 - kSolvesTol - 0.01, .block = 0.9})) == Verdict::differs);
}
