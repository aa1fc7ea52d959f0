// Claims C12, C14, C24, C29, C33, C37 — the trained language models (12_language_model), asserted in
// shape: who beats whom. Each runs its experiment at the --quick size (seconds) on the generated stories
// (`12_language_model --quick --corpus stories`), seed 0, where these effects show within seconds: the tests
// prove the experiments can see them. What the program finds on the chapter's text, tiny Shakespeare, its
// default, is pinned by "programs: 12_language_model_runs" and explained in CLAIMS.md; the tokenizer's
// figures on it are asserted here. The tolerances sit beside each check with their reason.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "chapters/08_normalization/warmup.hpp"
#include "chapters/12_language_model/claims.hpp"
#include "chapters/12_language_model/depth.hpp"
#include "chapters/12_language_model/explorer.hpp"
#include "chapters/12_language_model/judge.hpp"
#include "chapters/12_language_model/ladder.hpp"
#include "chapters/12_language_model/position_extrapolation.hpp"
#include "chapters/12_language_model/scale_ablation.hpp"
#include "chapters/12_language_model/sizes.hpp"
#include "reference/model.hpp"
#include "report/table.hpp"
#include "text/sample.hpp"
#include "train/engine.hpp"

#include <nlohmann/json.hpp>

using namespace attn;
using namespace attn::sec12;  // chapters/12_language_model/
using namespace attn::sec08;  // chapters/08_normalization/
namespace c95 = attn::sec08::chapter95;  // C24's criterion, with its reasons

namespace {
const Corpus& stories() {
    static const Corpus c = make_corpus(generate_stories(0, 1'000'000), "generated stories (seed 0)");
    return c;
}
LmSetup quick(const std::string& experiment) {
    LmSetup s = lm_setup(experiment, LmSize::quick);
    s.progress = false;
    return s;
}
}  // namespace

TEST_CASE("The chapter's corpus: tiny Shakespeare through BPE-1024 gives about 459,760 tokens, 2.43 characters each", "[claims][setup][sec12]") {
    // The chapter: 1,115,394 characters, a byte-level BPE with a vocabulary of 1024, 459,760 tokens, 2.43
    // characters a token. Its tokenizer is the kind GPT-2 uses (cut into words first), not given in code:
    // details such as ties and the word pattern's corners move the count by tenths of a percent, so ±1 % on
    // the tokens and ±0.02 on the characters a token. Without the cut the count is 3.3 % lower (444,677,
    // 2.51): that fails here.
    const Corpus c = named_corpus("shakespeare", {.tokenizer = Tokenizer::bpe, .vocab = 1024});
    CHECK(c.characters == 1'115'394);
    CHECK(c.bytes == 1'115'394);
    CHECK(c.vocab_size() == 1024);
    const double tokens = static_cast<double>(c.train.size() + c.heldout.size());
    INFO("ours: " << tokens << " tokens, " << c.characters / tokens << " characters a token");
    CHECK(tokens == Approx(459'760).epsilon(0.01));
    CHECK(c.characters / tokens == Approx(2.43).margin(0.02));
    // 90/10 by bytes: the held-out tenth holds about a tenth of the tokens.
    CHECK(static_cast<double>(c.heldout.size()) / tokens == Approx(0.1).margin(0.01));
}

TEST_CASE("C33, C14: the ladder, from a no-context baseline to a full block", "[claims][C33][C14][sec12]") {
    const LmSetup s = quick("ladder");
    const std::vector<LadderRun> rungs = run_ladder(stories(), s);
    REQUIRE(rungs.size() == 9);
    std::vector<LmRun> runs;
    for (const LadderRun& r : rungs) runs.push_back(r.run);
    auto ppl = [&](std::size_t i) { return runs[i].heldout.perplexity; };
    enum { base, uniform, positions, residual, replacing, added, heads, ffn, layernorm };
    INFO("baseline " << ppl(base) << ", uniform " << ppl(uniform) << ", + positions " << ppl(positions) << ", + residual "
                     << ppl(residual) << ", replacing " << ppl(replacing) << ", added " << ppl(added) << ", 4 heads " << ppl(heads)
                     << ", + FFN " << ppl(ffn) << ", + LayerNorm " << ppl(layernorm));
    // Averaging drowns the current token: much worse than no context at all. The chapter: 4x; here only the
    // weaker 1.5x holds (1.91x at seed 0): the verdict is `shape`, as 12_language_model --quick prints.
    CHECK(ppl(uniform) > 1.5 * ppl(base));
    CHECK(ppl(uniform) < 4 * ppl(base));
    // Positions go into the sum and the sum forgets them: within 10 % (the chapter: 2.14 points of 188).
    CHECK(std::fabs(ppl(positions) - ppl(uniform)) < 0.1 * ppl(uniform));
    // The residual keeps the token: back to about the baseline, within 25 % (the chapter: +1.2 %).
    CHECK(std::fabs(ppl(residual) / ppl(base) - 1) < 0.25);
    // The head added beats the head replacing (by 21-25 % at seeds 0-4), and the FFN helps (16-25 %): at every seed.
    CHECK(ppl(added) < ppl(replacing));
    CHECK(ppl(ffn) < ppl(heads));
    // Not asserted on one seed: learned beats uniform, four heads beat one, LayerNorm helps on top of the FFN. At this
    // size their margins change sign from seed to seed (12_language_model --quick prints each seed's and decides them
    // over five: claims.hpp's judge).
    // Parameters counted from the tensors: each rung adds exactly its pieces.
    const std::size_t V = stories().vocab_size(), d = s.d_model, T = s.T;
    CHECK(runs[base].params == V * d + d * V + V);                  // wte, W_out, b_out
    CHECK(runs[uniform].params == runs[base].params + 2 * d * d);    // W_v, W_o
    CHECK(runs[positions].params == runs[uniform].params + T * d);   // wpe
    CHECK(runs[residual].params == runs[positions].params);          // an addition has no parameters
    CHECK(runs[replacing].params == runs[residual].params + d * d);  // W_q, W_k; one head has no W_o
    CHECK(runs[added].params == runs[replacing].params);             // an addition has no parameters
    CHECK(runs[heads].params == runs[added].params + d * d + d);     // C14: heads split the width; W_o and b_o mix them
    CHECK(runs[ffn].params == runs[heads].params + 8 * d * d + 5 * d);
    CHECK(runs[layernorm].params == runs[ffn].params + 6 * d);       // three LayerNorms, gain and bias
    // Every rung wrote 200 printable characters after the same prompt.
    for (const LadderRun& r : rungs) {
        INFO(r.run.name << ": " << printable(r.sample));
        CHECK(count_characters(r.sample) == 200);
        CHECK(r.prompt == rungs.front().prompt);
        CHECK(printable(r.sample).find('\n') == std::string::npos);
    }
    CHECK(rungs[base].sample != rungs[layernorm].sample);
}

TEST_CASE("The explorer page holds the trained model's own attention weights and surprise, for a passage", "[sec12][explorer]") {
    // The ladder's full block at --quick, trained 30 steps by the fast engine; the page's numbers come from the
    // plain engine on a copy of its weights. Against the trained model's own tensors: the weights within 1e-6
    // (two engines' float sums), the surprise within 1e-4 nats, the likeliest token the same.
    LmSetup s = quick("ladder");
    s.steps = 30;
    const LadderRung rung = ladder_rungs(stories().vocab_size(), s).back();
    REQUIRE(explored(rung.config));
    fast::Model model(rung.config, 3);
    train_lm_on_corpus(model, stories(), s, rung.name);
    const Passages passages = explorer_passages(stories(), s.T, 2);
    REQUIRE(passages.tokens.size() == 2);
    REQUIRE(passages.tokens[1].size() == s.T + 1);
    const explorer::ModelView view = explorer::read(model, rung.config, rung.name, passages.tokens);
    const std::string html = explorer::html({"t", "s", stories().pieces, passages.tokens, passages.names, {view}, true, -1, ""});
    const std::string open = "<script id=\"data\" type=\"application/json\">";
    const std::size_t from = html.find(open) + open.size();
    const nlohmann::json data = nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
    REQUIRE(data["T"] == s.T);

    const std::size_t p = 1, T = s.T, h = rung.config.n_heads;
    const std::vector<int>& passage = passages.tokens[p];
    model.forward(std::vector<int>(passage.begin(), passage.end() - 1), std::vector<int>(passage.begin() + 1, passage.end()), 1, T);
    const Tensor3& own = model.attention_weights(0);  // (h, T, T)
    const nlohmann::json& reading = data["models"][0]["readings"][p];
    REQUIRE(reading["w"].size() == h);
    double worst = 0;
    for (std::size_t k = 0; k < h; ++k) {
        const std::vector<float> shown = explorer::unpack_weights(reading["w"][k].get<std::string>(), T, true);
        for (std::size_t i = 0; i < T; ++i)
            for (std::size_t j = 0; j < T; ++j) worst = std::max(worst, static_cast<double>(std::fabs(shown[i * T + j] - own(k, i, j))));
    }
    INFO("the largest gap between the page's weights and the trained model's: " << worst);
    CHECK(worst < 1e-6);
    const Mat& logits = model.logits();  // (T, V)
    for (std::size_t i = 0; i < T; ++i) {
        double top = -INFINITY, sum = 0;
        std::size_t best = 0;
        for (std::size_t v = 0; v < logits.shape(1); ++v)
            if (logits(i, v) > top) top = logits(i, v), best = v;
        for (std::size_t v = 0; v < logits.shape(1); ++v) sum += std::exp(logits(i, v) - top);
        const double loss = std::log(sum) + top - logits(i, static_cast<std::size_t>(passage[i + 1]));
        INFO("token " << i);
        CHECK(reading["loss"][i].get<double>() == Approx(loss).margin(1e-3));  // stored to 3 decimals
        CHECK(view.readings[p].loss[i] == Approx(loss).margin(1e-4));
        CHECK(reading["top"][i][0][0].get<std::size_t>() == best);
    }
}

TEST_CASE("The explorer page at --full stays under 5 MB: three passages of 128 tokens, every head of every rung shown", "[sec12][explorer]") {
    // The sizes the --full ladder gives (a BPE of 1024, context 128, its rungs' heads), with uniform causal rows:
    // the page's size does not depend on the weights' values, only on how many there are.
    const LmSetup s = lm_setup("ladder", LmSize::full);
    const std::size_t T = s.T, V = 1024;
    std::vector<std::string> pieces(V, "ab");
    explorer::Page page{"t", "s", pieces, {}, {}, {}, true, -1, ""};
    for (std::size_t p = 0; p < 3; ++p) {
        page.passages.push_back(std::vector<int>(T + 1, static_cast<int>(p)));
        page.passage_names.push_back("passage " + std::to_string(p));
    }
    std::size_t heads = 0;
    for (const LadderRung& rung : ladder_rungs(V, s)) {
        if (!explored(rung.config)) continue;
        const std::size_t h = rung.config.mixer == Mixer::learned ? rung.config.n_heads : 1;
        heads += h;
        Tensor3 w = xt::zeros<float>({h, T, T});
        for (std::size_t k = 0; k < h; ++k)
            for (std::size_t i = 0; i < T; ++i)
                for (std::size_t j = 0; j <= i; ++j) w(k, i, j) = 1.0f / static_cast<float>(i + 1);
        explorer::Reading r{w, std::vector<float>(T, 2.345f), std::vector<std::vector<explorer::Guess>>(T, std::vector<explorer::Guess>(5, {1000, 0.1234f}))};
        page.models.push_back({rung.name, {r, r, r}});
    }
    const std::size_t bytes = explorer::html(page).size();
    INFO(page.models.size() << " rungs, " << heads << " heads: " << bytes << " bytes");
    CHECK(page.models.size() == 6);  // the uniform average, one head replacing and added, 4 heads, + FFN, + LayerNorm
    CHECK(bytes < 5'000'000);
}

TEST_CASE("C14: four heads with W_o add d^2 + d parameters to one head without it (16,512 at d = 128)", "[claims][C14][sec12]") {
    LmSetup s = quick("ladder");
    s.d_model = 128;
    const std::vector<LadderRung> rungs = ladder_rungs(1024, s);
    const fast::Model one(rungs[5].config, 0), four(rungs[6].config, 0);  // "one head, added", "4 heads"
    fast::Model a = one, b = four;
    CHECK(b.params().count() - a.params().count() == 16'512);
    CHECK(!rungs[5].config.output_projection);
    CHECK((rungs[6].config.output_projection && rungs[6].config.output_bias && !rungs[6].config.biases));
}

TEST_CASE("The ladder's samples are the same for the same seed, and other for another", "[sec12][sample]") {
    LmSetup s = quick("ladder");
    s.steps = 10, s.eval_windows = 4;
    const SampleSetup short_sample{.characters = 40};
    const std::vector<LadderRun> a = run_ladder(stories(), s, short_sample), b = run_ladder(stories(), s, short_sample);
    s.seed = 1;
    const std::vector<LadderRun> c = run_ladder(stories(), s, short_sample);
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(a[i].run.name);
        CHECK(a[i].sample == b[i].sample);
        CHECK(count_characters(a[i].sample) == 40);
    }
    CHECK(a.back().sample != c.back().sample);
}

TEST_CASE("C12: without the division by sqrt(d_k), the chapter's two settings", "[claims][C12][sec12]") {
    const std::vector<std::size_t> widths = scale_widths(LmSize::quick);
    const std::vector<ScaleRun> runs = run_scale(stories(), quick("ladder"), quick("scale"), widths);
    REQUIRE(runs.size() == 4);
    const ScaleRun &small_s = runs[0], &small_u = runs[1], &big_s = runs[2], &big_u = runs[3];
    // The small row is the ladder's 4-head rung (d_k = 32 / 4 = 8 at --quick); the large, one head of 256.
    REQUIRE((small_s.scaled && !small_u.scaled && small_s.n_heads == 4 && small_s.d_k == 8));
    REQUIRE((big_s.d_k == 256 && big_s.n_heads == 1 && !big_u.scaled));
    const double c_small = small_u.run.heldout.perplexity / small_s.run.heldout.perplexity - 1;
    const double c_big = big_u.run.heldout.perplexity / big_s.run.heldout.perplexity - 1;
    INFO("cost " << c_small << " at d_k 8, " << c_big << " at 256; unscaled std at 256 " << big_u.init.score_std << " -> "
                 << big_u.end.score_std << ", rows > 0.99 " << big_u.end.one_hot << "; scaled std " << big_s.end.score_std);
    // No LayerNorm before the projections: q and k entries start with variance about 2 (embedding plus position,
    // each N(0, 1), through fan-in weights), so the unscaled scores start with std about 2 sqrt(d_k) = 32 at 256,
    // the scaled ones about 2: within 15 % over 16 windows (measured 34.2 and 2.14).
    CHECK(big_u.init.score_std == Approx(32.0).epsilon(0.15));
    CHECK(big_s.init.score_std == Approx(2.0).epsilon(0.15));
    // Much is lost at the large width: over 15 %.
    CHECK(c_big > 0.15);
    // At 256 the unscaled head runs away: its score std grows, entropy near 0, most rows one-hot (> 0.99 on one
    // token); the scaled head stays soft.
    CHECK(big_u.end.score_std > big_u.init.score_std);
    CHECK(big_u.end.entropy < 0.1);
    CHECK(big_u.end.one_hot > 0.5);
    CHECK(big_s.end.one_hot < 0.05);
    CHECK(big_s.end.score_std < 0.5 * big_u.end.score_std);
    // The weaker statement (the verdict `shape`): the cost grows with the width.
    CHECK(c_big > c_small);
    // Where ours differs from the chapter: at the small width dropping the division still costs (15.0 % at seed 0,
    // 8.4-15.0 % over seeds 0-4; the chapter: nothing, which here means within 5 %, two sd of that spread), and
    // fewer than 99 % of the unscaled rows are one-hot (87.7-90.9 %; the chapter: 99.9 %).
    CHECK(c_small > 0.05);
    CHECK(big_u.end.one_hot < 0.99);
}

TEST_CASE("C24: 12 blocks — post-norm without warmup fails, pre-norm needs none (warmup's rescue is decided over seeds)", "[claims][C24][sec12]") {
    const std::vector<WarmupRun> runs = run_warmup(stories(), quick("norm"), warmup_setup(LmSize::quick));
    REQUIRE(runs.size() == 4);
    REQUIRE((runs[2].norm == Norm::post && runs[2].warmup == 0 && runs[3].warmup > 0));
    const WarmupVerdict v = warmup_verdict(runs, WarmupCriterion::rescue_only);
    INFO("pre-norm " << v.pre << " / " << v.pre_warmup << " with warmup; post-norm " << v.post << " / " << v.post_warmup << " with warmup");
    // Several times worse without warmup (the chapter: 8x; a collapse to about the unigram model here).
    CHECK(v.post > c95::kSeveralTimes * v.pre);
    // Pre-norm trains the same with or without warmup, within the bound from the seed spread.
    CHECK(std::fabs(v.pre_warmup / v.pre - 1) < c95::kNeedsNone);
    // Not asserted on one seed: whether warmup rescues post-norm. At this size it does at 3 of seeds 0-4 under the AVX2
    // kernels (at all 5 under AVX-512): 12_language_model --quick prints each seed's figures and decides over them.
}

TEST_CASE("C29: positions past the training window — learned and sinusoidal collapse, RoPE degrades, ALiBi holds",
          "[claims][C29][sec12]") {
    const LmSetup s = quick("positions");
    const std::vector<PositionRun> runs = run_positions(stories(), s);
    REQUIRE(runs.size() == 4);
    auto at = [&](std::size_t kind, std::size_t m) { return runs[kind].at[m].perplexity; };
    enum { learned, sinusoidal, rope, alibi };
    std::string table;
    for (const PositionRun& r : runs)
        table += r.run.name + ": " + std::to_string(r.at[0].perplexity) + ", " + std::to_string(r.at[1].perplexity) + ", " +
                 std::to_string(r.at[2].perplexity) + "; ";
    INFO(table);
    REQUIRE(runs[alibi].lengths == std::vector<std::size_t>{s.T, 2 * s.T, 4 * s.T});
    // Learned rows past the window were never trained, and sinusoids were never read there: both collapse.
    CHECK(at(learned, 2) > 3 * at(learned, 0));
    CHECK(at(sinusoidal, 2) > 3 * at(sinusoidal, 0));
    // ALiBi improves at 2x; at 4x it holds within 5 % (the chapter: improves, 44.95 -> 42.49). Both at seeds 0-4.
    CHECK(at(alibi, 1) < at(alibi, 0));
    CHECK(at(alibi, 2) < 1.05 * at(alibi, 0));
    // Where ours differs from the chapter at every seed 0-4: learned positions are not the best at the training
    // length (2.86 against RoPE's 1.88 at seed 0). Not asserted on one seed: whether RoPE degrades less than
    // learned and sinusoidal positions (it does at 2 of seeds 0-4).
    CHECK(at(learned, 0) > std::min({at(sinusoidal, 0), at(rope, 0), at(alibi, 0)}));
}

TEST_CASE("C37: two blocks against one on the whole training split — no overfitting at the --quick budget", "[claims][C37][sec12]") {
    const std::vector<DepthRun> runs = run_depth(stories(), quick("depth"));
    REQUIRE(runs.size() == 2);
    const DepthRun &one = runs[0], &two = runs[1];
    INFO("train " << two.train.perplexity << " vs " << one.train.perplexity << ", held-out " << two.run.heldout.perplexity << " vs "
                  << one.run.heldout.perplexity);
    CHECK(two.run.params > one.run.params);
    // On the whole training split at the ladder's --quick budget (400 steps of 16 x 32 tokens: a fifth of one pass
    // over 900,132 tokens) nothing overfits: each model's held-out perplexity is within 5 % of its training one
    // (measured 1.2 % and 1.1 %), and two blocks have not yet caught up with one even on the training data
    // (3.56 vs 3.38 at seed 0). The chapter's gap needs its 60 passes: 12_language_model --quick skips the claim.
    CHECK(std::fabs(one.run.heldout.perplexity / one.train.perplexity - 1) < 0.05);
    CHECK(std::fabs(two.run.heldout.perplexity / two.train.perplexity - 1) < 0.05);
    CHECK(two.train.perplexity > one.train.perplexity);
}

TEST_CASE("Learned positions past the training window keep their initial rows, shrunk only by weight decay", "[sec12][positions]") {
    const std::size_t window = 8, max_T = 32;
    ModelConfig c{.vocab = stories().vocab_size(), .max_T = max_T, .d_model = 16, .n_heads = 2};
    fast::Model model(c, 1);
    const Mat before = model.params()["wpe"].value;
    TrainConfig tc;
    tc.steps = 20, tc.batch = 4, tc.progress = false;
    train_on_tokens(model, stories().train, window, tc);
    const Mat& after = model.params()["wpe"].value;
    const double shrink = std::pow(1.0 - tc.opt.lr * tc.opt.weight_decay, tc.steps);
    for (std::size_t t = 0; t < max_T; ++t) {
        const double ratio = static_cast<double>(after(t, 0)) / before(t, 0);
        INFO("row " << t);
        if (t < window) CHECK(std::fabs(ratio - shrink) > 1e-4);  // trained
        else CHECK(ratio == Approx(shrink).epsilon(1e-5));      // untouched but for the decay
    }
}

TEST_CASE("The experiments are bit-for-bit reproducible given the seed", "[sec12][train]") {
    // Short runs of every kind of model the experiments train: the ladder's, RoPE and ALiBi, a Transformer stack.
    auto short_setup = [](const std::string& experiment, std::uint64_t seed) {
        LmSetup s = quick(experiment);
        s.steps = 15, s.eval_windows = 8, s.seed = seed;
        return s;
    };
    auto same = [](const LmRun& a, const LmRun& b) {
        return a.log.losses == b.log.losses && a.heldout.loss == b.heldout.loss;
    };
    const std::vector<PositionRun> p1 = run_positions(stories(), short_setup("positions", 5));
    const std::vector<PositionRun> p2 = run_positions(stories(), short_setup("positions", 5));
    for (std::size_t i = 0; i < p1.size(); ++i) {
        INFO(p1[i].run.name);
        CHECK(same(p1[i].run, p2[i].run));
        CHECK(p1[i].at[2].loss == p2[i].at[2].loss);
    }
    WarmupSetup w = warmup_setup(LmSize::quick);
    w.n_layers = 2, w.warmup = 5;
    const std::vector<WarmupRun> n1 = run_warmup(stories(), short_setup("norm", 5), w);
    const std::vector<WarmupRun> n2 = run_warmup(stories(), short_setup("norm", 5), w);
    for (std::size_t i = 0; i < n1.size(); ++i) CHECK(same(n1[i].run, n2[i].run));
    // Another seed trains differently, so the checks above can fail.
    const std::vector<PositionRun> p3 = run_positions(stories(), short_setup("positions", 6));
    CHECK_FALSE(same(p1[0].run, p3[0].run));
}

// --- The criteria of claims.cpp, which the program's summary uses, on tables whose verdict is known -----------------
namespace {
// The chapter's ladder (Sections 9.1-9.5), rung by rung: baseline 59.71; the uniform average 4x that; positions
// 2.14 points lower; the residual 60.45; one head replacing 55.45 and added 46.45 (14 below the residual, 9 below
// replacing); four heads 3 points lower; the FFN and then LayerNorm 1.8 points lower again.
const std::vector<double> kChapterLadder = {59.71, 4 * 59.71, 4 * 59.71 - 2.14, 60.45, 55.45, 46.45, 43.45, 41.0, 39.2};

// The table at three seeds, each rung moved by -1, 0 or +1 % in an order of its own: a spread like training's.
LadderResults three_seeds(std::vector<double> table, std::size_t d = 128, std::size_t extra = 128 * 128 + 128) {
    const int moves[3][9] = {{-1, 0, 1, 1, 0, -1, 0, 1, -1}, {0, 1, -1, 0, -1, 1, 1, -1, 0}, {1, -1, 0, -1, 1, 0, -1, 0, 1}};
    LadderResults r{.seeds = {0, 1, 2}, .perplexity = {}, .d_model = d, .n_heads = 4, .extra_params = extra, .setup = "(a table)"};
    for (const auto& m : moves) {
        std::vector<double> p;
        for (std::size_t i = 0; i < table.size(); ++i) p.push_back(table[i] * (1 + 0.01 * m[i]));
        r.perplexity.push_back(p);
    }
    return r;
}

std::vector<Verdict> verdicts(const ClaimReport& report) {
    std::vector<Verdict> v;
    for (const Claim& c : report.claims()) v.push_back(c.verdict);
    return v;
}
}  // namespace

TEST_CASE("C33, C14's criteria: the chapter's own ladder agrees, a ladder that contradicts it differs", "[claims][C33][C14][sec12]") {
    const std::vector<Verdict> all_agree(4, Verdict::agrees);
    ClaimReport chapter;
    add_ladder_claims(chapter, three_seeds(kChapterLadder));
    for (const Claim& c : chapter.claims()) INFO(c.id << " " << c.what << ": " << to_string(c.verdict) << " — " << c.ours << " — " << c.why);
    CHECK(verdicts(chapter) == all_agree);

    // Averaging no worse than no context: the first C33 claim's opposite holds.
    std::vector<double> flat = kChapterLadder;
    flat[Rung::uniform] = flat[Rung::positions] = 0.9 * flat[Rung::base];
    ClaimReport no_drowning;
    add_ladder_claims(no_drowning, three_seeds(flat));
    CHECK(no_drowning.claims()[0].verdict == Verdict::differs);

    // A uniform average only 2x worse: the weaker statement (worse by half at least) holds, the 4x does not.
    std::vector<double> half = kChapterLadder;
    half[Rung::uniform] = 2 * half[Rung::base], half[Rung::positions] = half[Rung::uniform] - 1;
    ClaimReport weaker;
    add_ladder_claims(weaker, three_seeds(half));
    CHECK(weaker.claims()[0].verdict == Verdict::shape);

    // Four heads worse than one: the second C33 claim and C14 differ.
    std::vector<double> worse_heads = kChapterLadder;
    worse_heads[Rung::heads] = 1.1 * worse_heads[Rung::added];
    ClaimReport heads;
    add_ladder_claims(heads, three_seeds(worse_heads));
    CHECK(heads.claims()[1].verdict == Verdict::differs);
    CHECK(heads.claims()[3].verdict == Verdict::differs);

    // C14's parameter count is part of the claim: one parameter off and the chapter's own gain does not agree.
    ClaimReport miscounted;
    add_ladder_claims(miscounted, three_seeds(kChapterLadder, 128, 128 * 128 + 129));
    CHECK(miscounted.claims()[3].verdict == Verdict::differs);
    CHECK_THAT(miscounted.claims()[3].ours, Catch::Contains("NOT"));
}

TEST_CASE("C37's criterion: the chapter's figures agree, both directions at other sizes are the weaker statement, no held-out gap differs, too few passes skip it",
          "[claims][C37][sec12]") {
    auto run = [](double train, double heldout) {
        DepthRun r;
        r.train.perplexity = train, r.run.heldout.perplexity = heldout;
        return r;
    };
    // three seeds, each perplexity moved by -1, 0 or +1 %: a spread like training's
    auto seeds3 = [&](DepthRun one, DepthRun two) {
        std::vector<DepthPair> v;
        for (double m : {-0.01, 0.0, 0.01})
            v.push_back({run(one.train.perplexity * (1 + m), one.run.heldout.perplexity * (1 - m)),
                         run(two.train.perplexity * (1 - m), two.run.heldout.perplexity * (1 + m))});
        return v;
    };
    const std::vector<std::uint64_t> three = {0, 1, 2};
    const DepthRun one = run(18.77, 38.07), two = run(14.49, 40.57);  // the chapter's, at about 60 passes
    ClaimReport chapter, no_gap, not_fit, few, small_gap;
    add_depth_claim(chapter, seeds3(one, two), three, 60, "a setup");
    REQUIRE(chapter.claims().size() == 1);
    CHECK(chapter.claims()[0].verdict == Verdict::agrees);
    add_depth_claim(no_gap, seeds3(one, run(14.49, 37.0)), three, 60, "a setup");  // fits better, but no overfitting: not even the weaker statement
    CHECK(no_gap.claims()[0].verdict == Verdict::differs);
    add_depth_claim(not_fit, seeds3(one, run(19.5, 40.57)), three, 60, "a setup");
    CHECK(not_fit.claims()[0].verdict == Verdict::differs);
    // both gaps in the chapter's direction, the training one a third of the chapter's: its size differs
    add_depth_claim(small_gap, seeds3(one, run(17.0, 40.57)), three, 60, "a setup");
    CHECK(small_gap.claims()[0].verdict == Verdict::shape);
    CHECK_THAT(small_gap.claims()[0].why, Catch::Contains("lies") && Catch::Contains("sd"));
    add_depth_claim(few, seeds3(one, two), three, kOverfitPasses - 0.5, "a setup");
    CHECK(few.claims().empty());
    // one seed: decided by the spread lent to it, and only then
    ClaimReport alone, lent, lent_off;
    add_depth_claim(alone, {{one, two}}, {0}, 60, "a setup");
    CHECK(alone.claims()[0].verdict == Verdict::unresolved);
    const Borrowed spread{.log_ratio_sd = 0.01, .source = "a spread"};
    add_depth_claim(lent, {{one, two}}, {0}, 60, "a setup", spread);
    CHECK(lent.claims()[0].verdict == Verdict::agrees);
    CHECK_THAT(lent.claims()[0].why, Catch::Contains("decided by 1 seed") && Catch::Contains("a spread"));
    add_depth_claim(lent_off, {{one, run(14.49, 37.0)}}, {0}, 60, "a setup", spread);
    CHECK(lent_off.claims()[0].verdict == Verdict::differs);
}

TEST_CASE("One seed at --full borrows the ladder's spread: the chapter's own figures agree, a figure far off differs", "[claims][sec12]") {
    LadderResults one = three_seeds(kChapterLadder);
    one.seeds = {0}, one.perplexity = {kChapterLadder};
    ClaimReport none;
    add_ladder_claims(none, one);  // no spread lent: one seed decides nothing
    for (const Claim& c : none.claims()) CHECK(c.verdict == Verdict::unresolved);
    one.spread = {.log_ratio_sd = 0.01, .source = "a spread"};
    ClaimReport chapter;
    add_ladder_claims(chapter, one);
    for (const Claim& c : chapter.claims()) INFO(c.id << ": " << c.ours << " — " << c.why);
    CHECK(verdicts(chapter) == std::vector<Verdict>(4, Verdict::agrees));
    // four heads no better than one: at 1 seed with a 1 % spread, the chapter's 6.5 % lies far outside
    one.perplexity[0][Rung::heads] = one.perplexity[0][Rung::added];
    ClaimReport flat;
    add_ladder_claims(flat, one);
    CHECK(flat.claims()[1].verdict == Verdict::differs);
    CHECK(flat.claims()[3].verdict == Verdict::differs);
    // post-norm with warmup 6x pre-norm (the chapter: level with it): C24 differs at one seed
    ClaimReport norm;
    add_norm_claim(norm, {sec08::WarmupVerdict{.pre = 49.82, .pre_warmup = 41.4, .post = 320, .post_warmup = 306.08}}, {0}, "a setup", 12,
                   {.log_ratio_sd = 0.02, .source = "a spread"});
    CHECK(norm.claims()[0].verdict == Verdict::differs);
}

TEST_CASE("The spread a run of one seed borrows at --full is the committed ladder seeds' (12_language_model --judge)", "[claims][sec12]") {
    // claims.hpp's constant is measured from docs/runs, not chosen: a new ladder seed there moves it, and this fails
    // until the constant says what the files say.
    const LadderSpread measured = ladder_spread(read_run_files(ATTN_RUNS_DIR));
    INFO("measured over " << measured.seeds << " ladder seeds: " << measured.log_ratio_sd);
    CHECK(measured.seeds == kFullSpreadSeeds);
    CHECK(std::fabs(measured.log_ratio_sd - kFullLogRatioSd) < 5e-6);
    // and a run of one seed at --full is judged by it, saying so
    CHECK(borrowed_spread(LmSize::full).log_ratio_sd == kFullLogRatioSd);
    CHECK(std::isnan(borrowed_spread(LmSize::quick).log_ratio_sd));
    CHECK(std::isnan(ladder_borrowed(1, 0.02).log_ratio_sd));  // one seed measures no spread
}

TEST_CASE("12_language_model --judge reads a committed run's tables back, and names the file and the line it cannot read", "[claims][sec12]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "attn_judge_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // the committed seed-0 ladder, whole, and the same file cut inside its table
    std::ifstream in(std::string(ATTN_RUNS_DIR) + "/ladder-full-cpu.txt");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    REQUIRE(lines.size() > 20);
    std::ofstream(dir / "ladder-full-cpu.txt") << [&] { std::string t; for (const auto& l : lines) t += l + "\n"; return t; }();
    const std::vector<RunFile> runs = read_run_files(dir.string());
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].seed == 0);
    ClaimReport one;
    std::ostringstream os;
    judge_runs(os, runs, one);
    REQUIRE(one.claims().size() == 4);  // C33 three times and C14, from the ladder alone
    CHECK_THAT(one.claims()[0].what, Catch::Contains("ladder-full-cpu.txt (seed 0)"));
    CHECK(one.claims()[3].verdict == Verdict::unresolved);  // one ladder seed: no spread measured, nothing decided
    CHECK_THAT(os.str(), Catch::Contains("no spread is measured"));
    {  // seed 2's training run scored the whole held-out tenth, seeds 0 and 1 its first 256 windows: not pooled
        std::ifstream whole(std::string(ATTN_RUNS_DIR) + "/ladder-seed2-whole-tenth.txt");
        REQUIRE(whole);
        std::ofstream(dir / "ladder-full-cpu-seed2.txt") << whole.rdbuf();
        ClaimReport mixed;
        std::ostringstream ignored;
        CHECK_THROWS_WITH(judge_runs(ignored, read_run_files(dir.string()), mixed), Catch::Contains("different setups"));
        fs::remove(dir / "ladder-full-cpu-seed2.txt");
    }
    std::size_t table = 0;
    while (lines[table].find("held-out ppl") == std::string::npos) ++table;
    // a run of --seeds 2 in one file: its "at each seed" table gives both seeds, decided together
    {
        std::ofstream two(dir / "ladder-full-cpu.txt");
        for (std::size_t i = 0; i <= table + 9; ++i) two << lines[i] << "\n";
        two << "  Held-out perplexity at each seed:\n                       model   seed 0   seed 5\n";
        for (std::size_t i = table + 1; i <= table + 9; ++i) {
            const std::string name = lines[i].substr(0, 28);
            const double p = std::stod(lines[i].substr(lines[i].find('.') - 3, 6));
            two << name << "   " << fmt(p, 2) << "   " << fmt(p * (i % 2 ? 1.01 : 0.99), 2) << "\n";
        }
        for (std::size_t i = table + 10; i < lines.size(); ++i) two << lines[i] << "\n";
    }
    ClaimReport both;
    judge_runs(os, read_run_files(dir.string()), both);
    REQUIRE(both.claims().size() == 4);
    CHECK_THAT(both.claims()[3].why, Catch::Contains("decided by 2 seeds"));
    CHECK_THAT(both.claims()[3].what, Catch::Contains("(seeds 0-5)"));
    std::ofstream cut(dir / "ladder-full-cpu.txt");
    for (std::size_t i = 0; i <= table + 3; ++i) cut << lines[i] << "\n";
    cut << "\n";
    cut.close();
    ClaimReport none;
    CHECK_THROWS_WITH(judge_runs(os, read_run_files(dir.string()), none),
                      Catch::Contains("ladder-full-cpu.txt, line " + std::to_string(table + 1)) && Catch::Contains("9 rows expected"));
    fs::remove_all(dir);
}
