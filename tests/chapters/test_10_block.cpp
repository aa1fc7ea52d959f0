// Claims C30, C31, C35, C36 (the pronoun task at full size) — Sections 9.5, 9.7, 9.8: the block.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "chapters/10_block/claims.hpp"
#include "chapters/10_block/gpt2_small.hpp"
#include "chapters/10_block/nsquared.hpp"
#include "program_models.hpp"  // tests/chapters/
#include "core/memory.hpp"
#include "fast/model.hpp"
#include "math/attention.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "reference/model.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

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
    // tied output, biases on q, k, v, o; the program's count (a model of shapes only, chapters/10_block/gpt2_small.cpp)
    Gpt2Count count = count_gpt2_small();
    CHECK(count.wte == 38597376u);
    CHECK(count.wpe == 786432u);
    CHECK(count.block == 7087872u);  // 12 d² + 13 d
    CHECK(count.lnf == 1536u);
    CHECK(count.total == 124439808u);
    CHECK(count.three_biases == 2304u);  // three biases dropped: 2,304 fewer per block
    // counted from tensors never written: 124 M parameters and their gradients (about 1 GB) touch next to no pages
    if (kResidentMemoryTracksAllocations) {
        const double rise_mib = static_cast<double>(measure_peak_memory([] { count_gpt2_small(); }).rise()) / (1024.0 * 1024.0);
        INFO("resident memory rose by " << rise_mib << " MiB while counting");
        CHECK(rise_mib < 64);
    }
    // the program's criterion (chapters/10_block/claims.cpp) on these counts, and on a count one off
    CHECK(c30_claim(count).verdict == Verdict::agrees);
    count.total += 1;
    CHECK(c30_claim(count).verdict == Verdict::differs);
    // an untied head would add its own (d, V) matrix and bias
    const ModelConfig tied = gpt2_config({.vocab = 100, .max_T = 8, .d_model = 32, .n_heads = 4, .n_layers = 2});
    ModelConfig untied = tied;
    untied.head = Head::untied;
    CHECK(fast::Model(untied, 0).params().count() - fast::Model(tied, 0).params().count() == 32u * 100 + 100);
}

TEST_CASE("C31: only the n x n matrices grow as n^2 — measured memory of one layer, materialised vs tiled", "[claims][C31][sec10]") {
    // Memory, not time: resident bytes are repeatable where milliseconds are not (timings are the
    // 10_block program's table, not a test's).
    std::vector<double> ns, mat, tiled;
    // the n x n matrices outweigh the n·d vectors from n ≈ 650 on (attention_layer_need_mb): rows from 512, so the
    // exponent is not the vectors' 1
    for (std::size_t n : {512u, 1024u, 2048u}) {
        const WallRow m = measure_attention_layer(n, 512, 8, AttentionKind::materialised, 1e9, 1, 0);
        const WallRow t = measure_attention_layer(n, 512, 8, AttentionKind::tiled, 1e9, 1, 0);
        CHECK(m.matrix_mb == Approx(8.0 * n * n * 4 / (1024.0 * 1024.0)));  // 8 heads · n² · 4 bytes
        INFO("n " << n << ": materialised peak " << m.peak_mb << " MiB (estimated " << m.need_mb << "), tiled " << t.peak_mb
                  << " MiB (estimated " << t.need_mb << ")");
        if (kResidentMemoryTracksAllocations) {
            // the estimate counts what the code holds: measured within a quarter of it, both ways (at 2,048, a layer
            // that kept no head's weights would rise by about 104 MiB of the 232 estimated, and fail)
            CHECK(m.peak_mb > 0.8 * m.need_mb);
            CHECK(m.peak_mb < 1.25 * m.need_mb);
            CHECK(t.peak_mb > 0.8 * t.need_mb);
            CHECK(t.peak_mb < 1.25 * t.need_mb);
            CHECK(t.peak_mb < m.peak_mb / 2);  // the tiled layer holds only its n·d vectors
        }
        ns.push_back(static_cast<double>(n)), mat.push_back(m.peak_mb), tiled.push_back(t.peak_mb);
    }
    if (kResidentMemoryTracksAllocations) {
        CHECK(fitted_exponent(ns, mat) > 1.6);   // → 2
        CHECK(fitted_exponent(ns, tiled) < 1.2);  // → 1
    } else {
        WARN("AddressSanitizer build: the measured peak memory is not checked");
    }
    // the chapter's last row: at 16,384 tokens the weights alone are 8 GiB, refused under a 4 GiB budget
    const WallRow wall = measure_attention_layer(16384, 512, 8, AttentionKind::materialised, 4096, 1, 0);
    CHECK(wall.out_of_memory);
    CHECK(wall.matrix_mb == 8192.0);
    CHECK(wall.need_mb > 8192.0 + 3 * 1024.0);  // and one head's scores, scaled scores and weights, 1 GiB each
    CHECK(attention_layer_need_mb(16384, 512, 8, AttentionKind::tiled) < 8192.0 / 16);  // the tiled layer: only its n·d vectors
}

TEST_CASE("C31's two layers compute the same function: the tiled one is SelfAttention's forward within fp32 rounding",
          "[claims][C31][sec10]") {
    for (std::size_t n : {1u, 63u, 64u, 65u, 200u}) {  // one tile, the tile's edges, several tiles
        Rng rng(7, n);
        WallLayer layer(32, 4, rng);
        const Mat x = rng.normal_mat(n, 32);
        INFO("n " << n);
        const Mat materialised = layer.forward(x, AttentionKind::materialised), tiled = layer.forward(x, AttentionKind::tiled);
        REQUIRE(tiled.shape() == materialised.shape());
        CHECK(max_abs_diff(tiled, materialised) < 2e-5);
        if (n > 1) CHECK(max_abs_diff(layer.projections(x), materialised) > 1e-3);  // one token attends to itself alone: v W_o
    }
}

TEST_CASE("fitted_exponent recovers the power of a power law, and refuses too few points", "[nsquared][sec10]") {
    CHECK(fitted_exponent({1, 2, 4, 8}, {3, 12, 48, 192}) == Approx(2.0));
    CHECK(fitted_exponent({10, 100}, {5, 50}) == Approx(1.0));
    CHECK_THROWS_WITH(fitted_exponent({1}, {1}), Catch::Contains("need two or more"));
}

TEST_CASE("Section 9.5's traced block: the reference Block's tensors, named and shaped, and only pre-norm makes that Block",
          "[sec10][reference]") {
    // 10_block's table (chapters/10_block/traced_block.cpp) prints these rows. B, T, d, h and d_ff all differ here,
    // so a row that took one for another would show: B = 3, T = 5, d = 24, h = 3 heads of d_k = 8, d_ff = 4d = 96.
    const std::size_t B = 3, T = 5, V = 11;
    const ModelConfig c = gpt2_config({.vocab = V, .max_T = T, .d_model = 24, .n_heads = 3, .n_layers = 2});
    reference::Model model(c, 0);
    CHECK_THROWS_WITH(model.block(1).trace(), Catch::Contains("no forward has run yet"));
    std::vector<int> tokens(B * T), targets(B * T);
    for (std::size_t i = 0; i < B * T; ++i) tokens[i] = static_cast<int>(i % V), targets[i] = static_cast<int>((i + 1) % V);
    model.forward(tokens, targets, B, T);
    using Shape = std::vector<std::size_t>;
    const std::vector<std::pair<std::string, Shape>> want = {
        {"x", {15, 24}}, {"LN_1(x)", {15, 24}}, {"q = n W_q + b_q", {15, 24}}, {"k, v", {15, 24}}, {"q, k, v per head", {9, 5, 8}},
        {"weights", {9, 5, 5}}, {"heads", {15, 24}}, {"a = x + heads W_o + b_o", {15, 24}}, {"hidden = gelu(n W_1 + b_1)", {15, 96}},
        {"y = a + hidden W_2 + b_2", {15, 24}}};
    for (std::size_t l : {0u, 1u}) {
        const std::vector<reference::Block::Traced> rows = model.block(l).trace();
        REQUIRE(rows.size() == want.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            CHECK(rows[i].name == want[i].first);
            CHECK(rows[i].shape == want[i].second);
            CHECK(!rows[i].meaning.empty());
        }
        const auto& w = model.attention_weights(l).shape();  // the weights the forward made
        CHECK(rows[5].shape == Shape(w.begin(), w.end()));
    }
    CHECK_THROWS_WITH(model.block(2), Catch::Contains("layer 2 of a stack of 2 blocks"));

    // post-norm, the uniform average, no FFN: the same pieces composed otherwise, not the chapter's Block
    ModelConfig post = c;
    post.norm = Norm::post;
    CHECK_THROWS_WITH(reference::Model(post, 0).block(1), Catch::Contains("block 1 is not the chapter's pre-norm Block") &&
                                                              Catch::Contains("its config has post-norm"));
    ModelConfig ladder = c;
    ladder.mixer = Mixer::uniform, ladder.d_ff = 0;
    CHECK_THROWS_WITH(reference::Model(ladder, 0).block(0),
                      Catch::Contains("block 0 is not") && Catch::Contains("a uniform average, not learned attention, no FFN (d_ff = 0)"));
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
          "[claims][C35][C36][sec10][models-of-10_block]") {
    // Full size (3,000 steps each, as 10_block): shorter runs sit on the task's 50 % plateau.
    PronounSetup setup;
    setup.progress = false;
    setup.checkpoints = test::program_models("10_block");  // under ctest, 10_block's own seed-0 models (program_models.hpp)
    const std::vector<PronounSeed> runs = run_pronoun_seeds(0, 1, setup);
    const PronounSeed& run = runs.front();
    for (const PronounFit* fit : {&run.uniform, &run.one, &run.two}) {  // each trained the setup's 3,000 steps, here or in 10_block
        INFO("steps the model trained (its checkpoint's, when loaded) against PronounSetup::steps");
        REQUIRE(fit->log.losses.size() == static_cast<std::size_t>(setup.steps));
    }
    const double uni = run.uniform.heldout.accuracy, one = run.one.heldout.accuracy, two = run.two.heldout.accuracy;
    INFO("held-out accuracy: uniform " << uni << " (wrong noun " << run.uniform.heldout.wrong_noun << "), one block " << one
                                       << ", two blocks " << two);
    // C35, what holds at every seed. The chapter: uniform 27.9 %, one block ≈ 90 %, two ≈ 100 %. Over seeds 0…4
    // (10_block --seeds 5, docs/runs/10_block-seeds5-cpu.txt): uniform 0.17–0.37, one block 1.000 at every seed, two
    // blocks 0.83–1.000; the uniform average answers the wrong noun more often than the right one at 4 of them, by a
    // mean within 3 se of 0, so not even the weaker statement holds there (differs). At the default's two seeds, 0
    // and 1, it does at both (shape). That part is not asserted on one seed here.
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
    CHECK(!c.block1_identical);  // the sentences already differ in block 1, by the program's own kIdentical
    // Per head: (h, T) rows whose mean over heads is the averaged row.
    const AdjectivePair pair = adjective_pair(make_pronoun_task(PronounVersion::role, 0));
    const Mat heads = answer_rows_per_head(*run.two_model, pair.crosser, 0);  // (4, 17)
    REQUIRE(heads.shape() == std::array<std::size_t, 2>{4, PronounTask::kLength - 1});
    CHECK(max_abs_diff(Vec(xt::mean(heads, {0})), c.block1[0]) < 1e-6);
    // The pronoun-task analogue of C37 (10_block prints it; C37 itself is the corpus, 12_language_model): two blocks
    // fit the training sentences better and the held-out ones worse.
    CHECK(run.two.train.loss < run.one.train.loss);
    CHECK(run.two.heldout.loss > run.one.heldout.loss);
}

namespace {
// One layer's rows at n = 256 … 256·2^(rows−1), each figure c·n^p.
std::vector<WallRow> power_rows(int rows, double time_p, double memory_p, double projections_p) {
    std::vector<WallRow> r;
    for (int i = 0; i < rows; ++i) {
        const double n = 256.0 * std::pow(2.0, i);
        r.push_back({.n = static_cast<std::size_t>(n), .ms_total = 1e-4 * std::pow(n, time_p), .ms_projections = 1e-3 * std::pow(n, projections_p),
                     .matrix_mb = 0, .peak_mb = 1e-5 * std::pow(n, memory_p), .out_of_memory = false, .need_mb = 0});
    }
    return r;
}

// A row at "so the" over the 17 input positions: `weights` where given, the rest of 1 spread evenly.
Vec row_with(std::initializer_list<std::pair<std::size_t, double>> weights) {
    const std::size_t T = PronounTask::kLength - 1, rest_positions = PronounTask::kAnswerPosition + 1 - weights.size();
    double rest = 1;
    for (const auto& [at, w] : weights) rest -= w;
    Vec r = xt::zeros<float>({T});
    for (std::size_t i = 0; i <= PronounTask::kAnswerPosition; ++i) r(i) = static_cast<float>(rest / rest_positions);
    for (const auto& [at, w] : weights) r(at) = static_cast<float>(w);
    return r;
}

// One seed's figures, as run_pronoun_seed records them (no models).
PronounSeed seed_with(std::uint64_t seed, PronounScore uniform, double one, double two, const Vec (&block1)[2], const Vec (&block2)[2]) {
    PronounSeed r;
    r.seed = seed;
    r.uniform.heldout = uniform, r.one.heldout.accuracy = one, r.two.heldout.accuracy = two;
    for (int s = 0; s < 2; ++s) r.c36.block1[s] = block1[s], r.c36.block2[s] = block2[s];
    r.c36.block1_diff = max_abs_diff(block1[0], block1[1]), r.c36.block2_diff = max_abs_diff(block2[0], block2[1]);
    return r;
}
}  // namespace

TEST_CASE("C31's criterion: the chapter's exponents agree, a linear matrix, superlinear projections or a quadratic tiled layer differ",
          "[claims][C31][sec10]") {
    auto c31 = [](const std::vector<WallRow>& materialised, const std::vector<WallRow>& tiled) {
        const Claim c = c31_claim(wall_exponents(materialised, tiled));
        UNSCOPED_INFO(c.ours);
        return c.verdict;
    };
    const auto chapter = power_rows(5, 1.91, 1.87, 1.0), tiled = power_rows(5, 1.9, 1.0, 1.0);  // time ~ n^1.91, memory ~ n^1.87
    CHECK(c31(chapter, tiled) == Verdict::agrees);
    CHECK(c31(power_rows(5, 1.91, 1.0, 1.0), tiled) == Verdict::differs);   // the matrix's memory linear
    CHECK(c31(power_rows(5, 1.91, 2.5, 1.0), tiled) == Verdict::differs);   // … or past quadratic
    CHECK(c31(power_rows(5, 1.2, 1.87, 1.0), tiled) == Verdict::differs);   // time barely superlinear
    CHECK(c31(power_rows(5, 1.91, 1.87, 1.5), tiled) == Verdict::differs);  // projections superlinear
    CHECK(c31(chapter, power_rows(5, 1.9, 2.0, 1.0)) == Verdict::differs);  // a tiled layer that holds the n x n matrix
    const Claim few = c31_claim(wall_exponents(power_rows(3, 1.91, 1.87, 1.0), tiled));
    CHECK(few.verdict == Verdict::differs);  // too few rows to fit an exponent over four
    CHECK_THAT(few.ours, Catch::Contains("too few rows"));
}

TEST_CASE("C35, C36's criteria: the chapter's figures agree, ours are the weaker statements, contradicting ones differ",
          "[claims][C35][C36][sec10]") {
    // The chapter at five seeds: uniform 27.9 % (answering the wrong noun of the pair), one block 92.7 %, two 100 %; block 1
    // identical for tired and wet with 0.70 on the first noun, block 2 on "tired" (1.00) and on "street" (0.49)
    const Vec chapter_block1[2] = {row_with({{kFirstNoun, 0.70}}), row_with({{kFirstNoun, 0.70}})};
    const Vec chapter_block2[2] = {row_with({{kAdjective, 1.00}}), row_with({{kSecondNoun, 0.49}, {kFirstNoun, 0.2}})};
    // Ours at seeds 0…4: one block 100 %, and a head of block 1 on the adjective, so block 1's rows differ already
    const Vec our_block1[2] = {row_with({{kAdjective, 0.5}, {kFirstNoun, 0.2}}), row_with({{kAdjective, 0.3}, {kFirstNoun, 0.2}})};
    struct Figures {
        double uniform = 0.279, wrong_noun = 0.70, one = 0.927, two = 1.0;  // held-out accuracies, the wrong noun's share
    };
    auto verdicts = [](Figures f, const Vec (&block1)[2], const Vec (&block2)[2]) {
        std::vector<PronounSeed> runs;
        for (std::uint64_t s = 0; s < 5; ++s) {
            const double jitter = 0.004 * static_cast<double>(s);  // the seeds differ a little
            runs.push_back(seed_with(s, {.accuracy = f.uniform + jitter, .wrong_noun = f.wrong_noun - jitter, .elsewhere = 0}, f.one - jitter,
                                     f.two - jitter / 2, block1, block2));
        }
        ClaimReport report;
        add_pronoun_claims(report, runs, PronounSetup{});
        REQUIRE(report.claims().size() == 2);
        for (const Claim& c : report.claims()) UNSCOPED_INFO(c.id << " " << to_string(c.verdict) << ": " << c.ours << " — " << c.why);
        return std::pair{report.claims()[0].verdict, report.claims()[1].verdict};
    };
    CHECK(verdicts({}, chapter_block1, chapter_block2) == std::pair{Verdict::agrees, Verdict::agrees});
    // one block at 100 %, not ≈ 90 %: C35's weaker statement; block 1 not identical but block 2 separating more: C36's
    CHECK(verdicts({.one = 1.0}, our_block1, chapter_block2) == std::pair{Verdict::shape, Verdict::shape});
    // each part of C35 alone: one block at 80 %, two blocks at 93 % (one at 90 %): the weaker statement
    CHECK(verdicts({.one = 0.80}, chapter_block1, chapter_block2).first == Verdict::shape);
    CHECK(verdicts({.one = 0.90, .two = 0.93}, chapter_block1, chapter_block2).first == Verdict::shape);
    // the uniform average at 48 %, not well below half; at 60 %; or right more often than wrong: C35 differs
    CHECK(verdicts({.uniform = 0.48, .wrong_noun = 0.52}, chapter_block1, chapter_block2).first == Verdict::differs);
    CHECK(verdicts({.uniform = 0.60, .wrong_noun = 0.38}, chapter_block1, chapter_block2).first == Verdict::differs);
    CHECK(verdicts({.uniform = 0.30, .wrong_noun = 0.25}, chapter_block1, chapter_block2).first == Verdict::differs);
    // … or a learned block under 30 points above it, which not even the weaker statement allows
    CHECK(verdicts({.one = 0.55}, chapter_block1, chapter_block2).first == Verdict::differs);
    CHECK(verdicts({.two = 0.55}, chapter_block1, chapter_block2).first == Verdict::differs);
    // each part of C36 alone: block 1 on the first noun in both but not identical (0.05 apart); identical but on the
    // adjective; block 2 on the first noun for tired; on the adjective for wet: the weaker statement (block 2 separates more)
    const Vec close_block1[2] = {row_with({{kFirstNoun, 0.70}}), row_with({{kFirstNoun, 0.65}})};
    CHECK(verdicts({}, close_block1, chapter_block2).second == Verdict::shape);
    const Vec same_on_adjective[2] = {row_with({{kAdjective, 0.70}}), row_with({{kAdjective, 0.70}})};
    CHECK(verdicts({}, same_on_adjective, chapter_block2).second == Verdict::shape);
    const Vec tired_on_noun[2] = {row_with({{kFirstNoun, 1.00}}), chapter_block2[1]};
    CHECK(verdicts({}, chapter_block1, tired_on_noun).second == Verdict::shape);
    const Vec wet_on_adjective[2] = {chapter_block2[0], row_with({{kAdjective, 0.6}})};
    CHECK(verdicts({}, chapter_block1, wet_on_adjective).second == Verdict::shape);
    // block 2 no more separating than block 1, and neither on the chapter's positions: C36 differs
    const Vec flat[2] = {row_with({}), row_with({})};
    CHECK(verdicts({}, our_block1, flat).second == Verdict::differs);
}
