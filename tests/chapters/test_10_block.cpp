// Claims C30, C31 (and C35–C37 at the pronoun task's full size) — Sections 9.5, 9.7, 9.8: the block.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

#include "attn/attention.hpp"
#include "attn/softmax.hpp"
#include "attn/train.hpp"
#include "attn/model.hpp"
#include "chapters/10_block/nsquared.hpp"

using namespace attn;

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

TEST_CASE("C35, C36, C37: one block and two on the pronoun task — held-out answers, the maps at so the, train vs held-out",
          "[claims][C35][C36][C37][sec10]") {
    // Full size (3,000 steps each, as 10_block): shorter runs sit on the task's 50 % plateau.
    const PronounTask task = make_pronoun_task(PronounVersion::role, 0);
    PronounSetup setup;
    setup.progress = false;
    PronounFit fit[2];
    std::unique_ptr<Model> models[2];
    for (std::size_t L = 1; L <= 2; ++L) {
        ModelConfig c = gpt2_config({.vocab = task.vocab.size(), .max_T = PronounTask::kLength - 1, .d_model = setup.d_model, .n_heads = 4,
                                     .n_layers = L});
        c.d_ff = setup.d_ff, c.head = Head::untied;
        models[L - 1] = std::make_unique<Model>(c, 0);
        fit[L - 1] = fit_pronoun(*models[L - 1], task, setup, "pronoun");
    }
    INFO("held-out accuracy " << fit[0].heldout.accuracy << " (one block), " << fit[1].heldout.accuracy << " (two)");
    INFO("train loss " << fit[0].train_loss << " vs " << fit[1].train_loss << "; held-out loss " << fit[0].heldout_loss << " vs " << fit[1].heldout_loss);
    // C35 in shape: a learned block answers most held-out pairs (the chapter: ≈ 90 % one block, ≈ 100 % two;
    // ours: 100 % and 91 % at seed 0 — the order of the two is not reproduced).
    CHECK(fit[0].heldout.accuracy > 0.8);
    CHECK(fit[1].heldout.accuracy > 0.8);
    // C37: two blocks fit the training sentences better and the held-out ones worse
    CHECK(fit[1].train_loss < fit[0].train_loss);
    CHECK(fit[1].heldout_loss > fit[0].heldout_loss);
    // C36 does not reproduce: the chapter's block 1 puts its largest weight at "so the" on the first noun
    // (position 1) in both sentences. Measured with 10_block --seed 0…4 (block 1's argmax for the crosser and
    // the crossed sentence): 1 and 11, 11 and 6, 11 and 6, 11 and 11, 6 and 6 — the first noun in both at no
    // seed of five (before the vectorised GELU: at seed 0 only, which this test used to assert). What holds at
    // every seed is weaker: block 1 looks at a content word — a noun (1, 6) or the adjective (11) — never at the
    // function words between them. 10_block prints DIFFERS for C36, pinned in tests/programs/CMakeLists.txt.
    std::vector<int> crosser = task.heldout.front(), crossed = crosser;
    crosser[11] = task.id("tired"), crossed[11] = task.id("wet");
    for (const auto* sentence : {&crosser, &crossed}) {
        const Vec row = answer_attention(*models[1], *sentence, 0);
        const auto argmax = std::max_element(row.begin(), row.end()) - row.begin();
        INFO("block 1's largest weight at position " << argmax);
        CHECK((argmax == 1 || argmax == 6 || argmax == 11));
    }
}
