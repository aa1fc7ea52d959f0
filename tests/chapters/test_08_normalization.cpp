// Claims C22–C24 — Section 9.5: where the LayerNorm sits (pre-norm vs post-norm).
#include <catch2/catch.hpp>

#include <cmath>

#include "attn/corpus.hpp"
#include "attn/rng.hpp"
#include "chapters/08_normalization/norm_placement.hpp"
#include "chapters/08_normalization/warmup.hpp"

using namespace attn;
namespace c95 = attn::chapter95;  // C24's criterion, with its reasons

TEST_CASE("C22: a pre-norm block with silent sub-layers is the identity — a post-norm one normalises every row", "[claims][C22][sec08]") {
    Rng rng(22);
    for (float scale : {1.0f, 10.0f}) {
        const Mat x = rng.normal_mat(12, 32) * scale + scale;  // (B·T, d), rows far from mean 0 and std 1
        const BlockStructure pre = zeroed_block_structure(Norm::pre, x, 2, 6, 4, 0);
        const BlockStructure post = zeroed_block_structure(Norm::post, x, 2, 6, 4, 0);
        INFO("input scale " << scale);
        CHECK(pre.identity_error == 0.0);     // x + 0 + 0, bit for bit: the residual path is never normalised
        CHECK(pre.max_row_mean > 0.1 * scale);  // …so the input's offset survives
        CHECK(post.identity_error > 0.5);     // LN(LN(x)) is not x
        CHECK(post.max_row_mean < 1e-5);      // every row leaves with mean 0 …
        CHECK(post.min_row_std == Approx(1.0).margin(1e-3));  // … and std 1, whatever its scale coming in
        CHECK(post.max_row_std == Approx(1.0).margin(1e-3));
    }
    // x must hold B·T rows
    CHECK_THROWS_WITH(zeroed_block_structure(Norm::pre, rng.normal_mat(11, 32), 2, 6, 4, 0),
                      Catch::Contains("x is (11, 32) for B·T = 2·6"));
}

TEST_CASE("C23: at initialisation, post-norm's last/first gradient ratio is larger than pre-norm's (12 blocks)", "[claims][C23][sec08]") {
    // The chapter: 1.32 (pre) and 1.65 (post). Ours, on the generated stories, is below 1 for both (about
    // 0.85 and 0.95 at this size); the shape — post-norm leaning more towards the last blocks — holds for
    // every seed group we tried, which this test samples three of.
    const Corpus corpus = make_corpus(generate_stories(0, 100000), "stories");
    const ModelSize stack{.vocab = corpus.vocab_size(), .max_T = 16, .d_model = 128, .n_heads = 4, .n_layers = 12};
    for (std::uint64_t seed : {0u, 100u, 200u}) {
        const GradientProfile pre = init_gradient_profile(norm_stack(stack, Norm::pre), corpus.train, 8, 16, seed, 4);
        const GradientProfile post = init_gradient_profile(norm_stack(stack, Norm::post), corpus.train, 8, 16, seed, 4);
        INFO("seeds " << seed << "…" << seed + 3 << ": pre " << pre.ratio << ", post " << post.ratio);
        CHECK(post.ratio > pre.ratio);
        REQUIRE(pre.per_block.size() == 12);
        for (std::size_t l = 0; l < 12; ++l) CHECK(post.per_block[l] > pre.per_block[l]);  // post-norm's are larger throughout
    }
}

TEST_CASE("C24 at 08_normalization's --quick size (60 steps): post-norm is worse and warmup helps, but the claim does not hold yet",
          "[claims][C24][sec08]") {
    // The --quick size of 08_normalization (60 steps, 12 of warmup), judged by C24's one criterion (warmup.hpp), the
    // verdict both programs print. At 60 steps pre-norm has barely started to learn (perplexity 7.8, against 2.0 after
    // 200), so post-norm's collapse is only 2.5–2.9x pre-norm's and warmup brings it to 1.4–1.9x (seeds 0–3): the
    // program prints DIFFERS for C24 at this size, and this test pins that verdict so a change shows in review. The
    // claim as stated is asserted where it holds: 08_normalization's default run (200 steps; "programs:
    // 08_normalization_runs", 10.1x and 1.20x) and 12_language_model's --quick norm experiment (C24 [sec12]).
    const Corpus corpus = make_corpus(generate_stories(0, 300000), "stories");
    const LmSetup setup{.d_model = 128, .T = 16, .batch = 8, .n_heads = 4, .steps = 60, .lr = 3e-3f, .clip = 0, .eval_windows = 64,
                        .seed = 0, .progress = false};
    const WarmupVerdict v = warmup_verdict(run_warmup(corpus, setup, {.n_layers = 12, .warmup = 12}), WarmupCriterion::rescue_only);
    INFO("pre " << v.pre << ", pre+warmup " << v.pre_warmup << ", post " << v.post << ", post+warmup " << v.post_warmup);
    CHECK(v.post > 2 * v.pre);             // worse without warmup (2.5–2.9x over seeds 0–3) …
    CHECK(v.post_warmup < v.post);         // … and warmup helps
    CHECK_FALSE(v.several_times_worse);    // but not yet "several times" (3x) worse: the verdict is DIFFERS
    CHECK_FALSE(v.agrees());
}
