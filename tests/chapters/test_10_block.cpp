// Claims C30, C31, C35, C36 (the pronoun task at full size) — Sections 9.5, 9.7, 9.8: the block.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

#include "attn/attention.hpp"
#include "attn/softmax.hpp"
#include "attn/train.hpp"
#include "attn/model.hpp"
#include "attn/stats.hpp"
#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/10_block/claims.hpp"
#include "chapters/10_block/nsquared.hpp"

using namespace attn;
using namespace attn::sec10;  // chapters/10_block/
using namespace attn::sec04;  // chapters/04_learned_attention/

// Under AddressSanitizer freed blocks sit in a quarantine and every allocation carries redzones, so the
// process's resident memory no longer follows what one layer holds: the peak-memory shapes are checked
// only in an ordinary build (the sanitize preset still runs everything else in these tests).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kResidentMemoryTracksAllocations = false;
#else
constexpr bool kResidentMemoryTracksAllocations = true;
#endif

TEST_CASE("C30: GPT-2 small, counted from a model's tensors, has 124,439,808 parameters", "[claims][C30][sec10]") {
    // tied output, biases on q, k, v, o
    const ModelConfig c = gpt2_config({.vocab = 50257, .max_T = 1024, .d_model = 768, .n_heads = 12, .n_layers = 12});
    Model model(c, 0);
    Parameters& p = model.params();
    CHECK(p["wte"].value.size() == 38597376u);
    CHECK(p["wpe"].value.size() == 786432u);
    for (std::size_t l : {0u, 11u}) CHECK(model.block(l).param_count() == 7087872u);  // 12 d² + 13 d
    CHECK(p.count({"lnf.gain", "lnf.bias"}) == 1536u);
    CHECK(p.count() == 124439808u);
    CHECK(p.count({"block0.b_q", "block0.b_k", "block0.b_v"}) == 2304u);  // three biases dropped: 2,304 fewer per block
    // the program's criterion (chapters/10_block/claims.cpp) on these counts, and on a count one off
    Gpt2Count count{.block = model.block(0).param_count(), .wte = p["wte"].value.size(), .wpe = p["wpe"].value.size(),
                    .lnf = p.count({"lnf.gain", "lnf.bias"}), .total = p.count(),
                    .three_biases = p.count({"block0.b_q", "block0.b_k", "block0.b_v"})};
    CHECK(c30_claim(count).verdict == Verdict::agrees);
    count.total += 1;
    CHECK(c30_claim(count).verdict == Verdict::differs);
    // an untied head would add its own (d, V) matrix and bias
    const ModelConfig tied = gpt2_config({.vocab = 100, .max_T = 8, .d_model = 32, .n_heads = 4, .n_layers = 2});
    ModelConfig untied = tied;
    untied.head = Head::untied;
    CHECK(Model(untied, 0).params().count() - Model(tied, 0).params().count() == 32u * 100 + 100);
}

TEST_CASE("C31: only the n x n matrices grow as n^2 — measured memory of one layer, materialised vs tiled", "[claims][C31][sec10]") {
    // Memory, not time: resident bytes are repeatable where milliseconds are not (timings are the
    // 10_block program's table, not a test's).
    std::vector<double> ns, mat, tiled;
    for (std::size_t n : {256u, 512u, 1024u}) {
        const WallRow m = measure_attention_layer(n, 512, 8, AttentionKind::materialised, 1e9, 1, 0);
        const WallRow t = measure_attention_layer(n, 512, 8, AttentionKind::tiled, 1e9, 1, 0);
        CHECK(m.matrix_mb == Approx(8.0 * n * n * 4 / (1024.0 * 1024.0)));  // 8 heads · n² · 4 bytes
        INFO("n " << n << ": materialised peak " << m.peak_mb << " MiB, tiled " << t.peak_mb << " MiB");
        if (kResidentMemoryTracksAllocations) {
            CHECK(m.peak_mb >= 2 * m.matrix_mb);  // scores and weights both exist at once
            CHECK(t.peak_mb < m.peak_mb / 2);     // the tiled layer holds only its n·d vectors
        }
        ns.push_back(static_cast<double>(n)), mat.push_back(m.peak_mb), tiled.push_back(t.peak_mb);
    }
    if (kResidentMemoryTracksAllocations) {
        CHECK(fitted_exponent(ns, mat) > 1.6);   // → 2
        CHECK(fitted_exponent(ns, tiled) < 1.2);  // → 1
    } else {
        WARN("AddressSanitizer build: the measured peak memory is not checked");
    }
    // the chapter's last row: 16,384 tokens would need two 8 GiB matrices; refused under a 4 GiB budget
    const WallRow wall = measure_attention_layer(16384, 512, 8, AttentionKind::materialised, 4096, 1, 0);
    CHECK(wall.out_of_memory);
    CHECK(wall.matrix_mb == 8192.0);
    CHECK(wall.need_mb > 16384.0);
    CHECK(attention_layer_need_mb(16384, 512, 8, AttentionKind::tiled) < 200.0);  // the tiled layer needs only its n·d vectors
}

TEST_CASE("fitted_exponent recovers the power of a power law, and refuses too few points", "[nsquared][sec10]") {
    CHECK(fitted_exponent({1, 2, 4, 8}, {3, 12, 48, 192}) == Approx(2.0));
    CHECK(fitted_exponent({10, 100}, {5, 50}) == Approx(1.0));
    CHECK_THROWS_WITH(fitted_exponent({1}, {1}), Catch::Contains("need two or more"));
}

TEST_CASE("Section 9.7: encoder, decoder and cross-attention have the shapes of their sequences", "[claims][sec10]") {
    const Mat src = {{1, 0}, {0, 1}, {1, 1}, {0, 0}, {2, 1}}, tgt = {{1, 2}, {0, 1}, {1, 0}};  // T_src = 5, T_tgt = 3
    const AttentionSteps cross = attention(tgt, src, src);
    CHECK(cross.weights.shape() == std::array<std::size_t, 2>{3, 5});  // (T_target, T_source)
    CHECK(cross.out.shape() == std::array<std::size_t, 2>{3, 2});
    CHECK(cross.weights(0, 4) > 0.0f);  // a target token sees every source token, including the last
    const Mask causal = causal_mask(3);
    const AttentionSteps decoder = attention(tgt, tgt, tgt, &causal);
    CHECK(decoder.weights(0, 1) == 0.0f);
    CHECK(decoder.weights(0, 0) == 1.0f);
    const AttentionSteps encoder = attention(src, src, src);
    CHECK(encoder.weights(0, 4) > 0.0f);  // unmasked: the first token sees the last
}

TEST_CASE("C35, C36: the uniform average, one block and two on the pronoun task — held-out answers, the maps at so the",
          "[claims][C35][C36][sec10]") {
    // Full size (3,000 steps each, as 10_block): shorter runs sit on the task's 50 % plateau.
    PronounSetup setup;
    setup.progress = false;
    const PronounSeed run = run_pronoun_seed(0, setup);
    const double uni = run.uniform.heldout.accuracy, one = run.one.heldout.accuracy, two = run.two.heldout.accuracy;
    INFO("held-out accuracy: uniform " << uni << " (wrong noun " << run.uniform.heldout.wrong_noun << "), one block " << one
                                       << ", two blocks " << two);
    // C35, what holds at every seed. The chapter: uniform 27.9 %, one block ≈ 90 %, two ≈ 100 %. 10_block decides
    // it over seeds 0…4: uniform 0.17–0.37, one block 1.000 at every seed, two blocks 0.956–1.000; the uniform
    // average answers the wrong noun more often than the right one at only 3 of them, so not even the weaker
    // statement holds there (differs), and that part is not asserted on one seed here.
    CHECK(uni < kWellBelowHalf);                     // well below 50 % (the program's criterion, claims.hpp)
    CHECK(one > uni + 0.3);                          // both learned blocks far above the bag of words
    CHECK(two > uni + 0.3);
    CHECK(one > 0.95);  // not ≈ 90 %: the chapter's one-block figure is not reproduced (seeds 0…4: 1.000)
    // C36 does not reproduce (10_block, over seeds 0…4: differs). The chapter's block 1 is identical for tired and wet, with most
    // weight on the first noun; ours has a head that attends to the adjective itself, so its rows differ between
    // the sentences — at seeds 0…4, block 1 identical at 0 of 5, on the first noun at 0, block 2 on the adjective
    // at 0, on the other noun at 1. What the test holds is the measurement itself: the parts are computed from
    // the rows it reports, and block 1's rows differ.
    const C36Parts& c = run.c36;
    INFO("block 1 argmax " << c.block1_argmax[0] << ", " << c.block1_argmax[1] << " (diff " << c.block1_diff << "); block 2 argmax "
                           << c.block2_argmax[0] << ", " << c.block2_argmax[1] << " (diff " << c.block2_diff << ")");
    for (int s = 0; s < 2; ++s) {
        CHECK(xt::sum(c.block1[s])() == Approx(1.0).margin(1e-5));  // a row of weights over positions 0…14
        CHECK(xt::sum(c.block2[s])() == Approx(1.0).margin(1e-5));
        CHECK(c.block1[s](PronounTask::kAnswerPosition + 1) == 0.0f);  // causal: nothing after "so the"
    }
    CHECK(c.block1_identical == (c.block1_diff < kIdentical));
    CHECK(!c.all());
    CHECK(c.block1_diff > 0.05);  // the sentences already differ in block 1
    // Per head: (h, T) rows whose mean over heads is the averaged row.
    const AdjectivePair pair = adjective_pair(make_pronoun_task(PronounVersion::role, 0));
    const Mat heads = answer_rows_per_head(*run.two_model, pair.crosser, 0);  // (4, 17)
    REQUIRE(heads.shape() == std::array<std::size_t, 2>{4, PronounTask::kLength - 1});
    CHECK(max_abs_diff(Vec(xt::mean(heads, {0})), c.block1[0]) < 1e-6);
    // The pronoun-task analogue of C37 (10_block prints it; C37 itself is the corpus, 12_language_model): two blocks
    // fit the training sentences better and the held-out ones worse.
    CHECK(run.two.train_loss < run.one.train_loss);
    CHECK(run.two.heldout_loss > run.one.heldout_loss);
}
