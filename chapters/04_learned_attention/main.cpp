// Sections 9.1 and 9.3, as the companion text "suy ra từ phép trung bình" (attention derived from
// averaging) continues: the weights of the average must be learned.
//
// They cannot be bare parameters: a learned T×T matrix is the same for every sentence. They must depend
// on what sits at both positions, and the cheapest function of two vectors is their dot product —
// which has two defects: every token scores itself highest, and the relation is symmetric. Giving each
// token two roles, a query q = x W_q and a key k = x W_k, fixes both; a third map v = x W_v decides
// what is copied. Then the test: a uniform average and one learned head, trained side by side on a
// task where word order decides the answer; and the version of it where a bag of words is enough (C34),
// each model trained until it fits its training sentences. The category version's runs are category.cpp's,
// what the learned head looks at learned_head.cpp's, C34's criterion claims.cpp's; this file runs them in the
// section's order.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "04_learned_attention/learned_attention.hpp"
#include "chapters/04_learned_attention/category.hpp"
#include "chapters/04_learned_attention/claims.hpp"
#include "chapters/04_learned_attention/learned_head.hpp"
#include "chapters/04_learned_attention/pronoun_experiments.hpp"
#include "core/rng.hpp"
#include "core/side_by_side.hpp"
#include "math/softmax.hpp"
#include "math/stats.hpp"
#include "reference/matmul.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/table.hpp"
#include "report/training.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

using namespace attn;
using namespace attn::sec04;  // this section's experiments (chapters/04_learned_attention/)

namespace {
// How many rows score their own position highest, and how far the matrix is from symmetric.
void describe(const std::string& name, const Mat& s) {
    std::size_t self = 0;
    for (std::size_t t = 0; t < s.shape(0); ++t) {
        const auto row = xt::row(s, static_cast<std::ptrdiff_t>(t));
        self += static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin()) == t;
    }
    std::cout << "  " << name << ": " << self << " of " << s.shape(0) << " rows score their own token highest; max |S - S^T| = "
              << fmt(max_abs_diff(s, Mat(xt::transpose(s))), 3) << "\n";
}
}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seed = 0;
    int n_seeds = 5;
    PronounSetup setup;
    bool mine = false;
    std::string svg_path = "04_learned_attention.svg";
    Cli cli("04_learned_attention", "Sections 9.1 and 9.3 — Learned weights: query, key and value (Attention như phép tra cứu mềm)");
    cli.add("--seed", seed, "random seed (data, initialisation, batches)");
    cli.add("--seeds", n_seeds, "C34 is decided over this many seeds, --seed and the ones after it (default 5, a few seconds a seed; "
            "one seed decides nothing)", 1, 100);
    cli.add("--steps", setup.steps, "training steps for each model on the pronoun task (the category version's: at most 5 x this, "
            "until it fits); the default learns it, 100000 take an hour", 1, 100'000);
    cli.add_output("--svg", svg_path, "where to write the learned head's attention map of a held-out sentence");
    add_checkpoint_flags(cli, setup.checkpoints);
    add_engine_flag(cli, setup.engine);
    cli.add_switch("--mine", mine, "also run your exercises 4.1-4.3 beside the reference");

    return run_program(cli, argc, argv, [&] {
        std::cout << cli.title() << "\n\n";
        setup.seed = seed;
        ClaimReport claims;
        const PronounTask task = make_pronoun_task(PronounVersion::role, seed);

        // --- dot-product scores and their two defects ----------------------------------------------------
        const std::vector<int> sentence(task.heldout.front().begin(), task.heldout.front().begin() + 12);
        Rng rng(seed, 4);
        const std::size_t d = 16;
        const Mat table = rng.normal_mat(task.vocab.size(), d);  // a random embedding, (V, d)
        Mat x = Mat::from_shape({sentence.size(), d});           // (T, d)
        for (std::size_t t = 0; t < sentence.size(); ++t) xt::row(x, static_cast<std::ptrdiff_t>(t)) = xt::row(table, sentence[t]);
        std::cout << "Scores from the tokens themselves, x_t . x_i, for \"" << task.words(sentence) << "\" (random embeddings, d = " << d << ")\n";
        const Mat s_dot = reference::matmul(x, reference::transposed(x));  // (T, T)
        describe("x_t . x_i          ", s_dot);
        std::cout << "    (a vector's dot product with itself is its squared norm, ~d; with another ~±sqrt(d); the\n"
                  << "     two \"the\" are one vector and tie) — and \"it\" would attend to \"" << task.vocab[sentence[1]]
                  << "\" exactly as much as \"" << task.vocab[sentence[1]] << "\" to \"it\"\n";
        const Mat wq = rng.normal_mat(d, d) / std::sqrt(static_cast<float>(d)), wk = rng.normal_mat(d, d) / std::sqrt(static_cast<float>(d));
        const Mat s_qk = reference::matmul(reference::matmul(x, wq), reference::transposed(reference::matmul(x, wk)));  // (T, T): q_t . k_i
        describe("q_t . k_i, W_q != W_k", s_qk);
        std::cout << "  Two learned maps, a query (what this position looks for) and a key (what it offers), break both;\n"
                  << "  a third, the value v = x W_v, decides what is copied once a key is matched.\n\n";

        // --- bare T x T weights cannot work ----------------------------------------------------------------
        std::cout << "Why not learn the T x T weights directly? Row t would be the same for every sentence: it could\n"
                  << "learn \"look back four tokens\", never \"look at the noun this word refers to\".\n\n";

        // --- uniform vs one learned head on the pronoun task (C35's verdict is 10_block's) --------------------
        std::cout << "The pronoun task: \"the {x} did not cross the {y} because it was too {adj} , so the {ref} waited .\"\n"
                  << "  tired/scared/slow/weak: ref = x; wet/wide/busy/steep: ref = y; " << task.train.size() << " training and "
                  << task.heldout.size() << " held-out sentences,\n  the held-out noun pairs seen in training only in the other order; scored at \"so the\"\n"
                  << "  both models: embeddings, the mixer, an MLP, pre-norm LayerNorms; " << setup.steps << " steps each\n";
        // C34's other seeds (the category version, below) train side by side on the other cores from here on: the
        // same bits as one after the other.
        const FitTarget target{.train_accuracy = 0.99, .check_every = 250, .max_steps = 5 * setup.steps};
        std::vector<CategorySeed> cats(static_cast<std::size_t>(n_seeds));  // [0] is --seed's, from the run shown below
        if (n_seeds > 1) std::cerr << "  C34's other seeds (" << seed + 1 << "-" << seed + cats.size() - 1 << ") train side by side with this one\n";
        SideBySide others(cats.size() - 1, [&](std::size_t i) { cats[i + 1] = category_at_seed(setup, target, seed + i + 1); });
        const PronounRun uniform = train_pronoun(task, Mixer::uniform, 1, setup, "uniform average");
        const PronounRun learned = train_pronoun(task, Mixer::learned, 1, setup, "one learned head");
        Table rt(std::cout, {{"model", 18}, {"parameters", 12, 0}, {"train acc", 11, 3}, {"held-out acc", 14, 3}, {"wrong noun", 12, 3}}, "  ");
        rt.header();
        for (const PronounRun* r : {&uniform, &learned})
            rt.row({r->name, r->params, r->train.accuracy, r->heldout.accuracy, r->heldout.wrong_noun});
        if (learned.train.accuracy < 0.9)  // (the uniform average cannot fit the role version: it does not see order)
            std::cout << "  (" << learned.name << " has not fit its own training set in " << setup.steps
                      << " steps: its held-out figure measures a plateau, not what it can learn)\n";
        // What the uniform average's answers show at this seed, from its own figures: it knows which nouns are present,
        // not which came first; whether that makes it answer with the other noun of the pair depends on the run.
        const double right = uniform.heldout.accuracy, other = uniform.heldout.wrong_noun;
        std::cout << "  Chance between the two nouns is 0.5. The uniform average knows which nouns are present, not which came\n"
                  << "  first: at this seed it answers " << fmt(right, 3) << " with the right noun and " << fmt(other, 3) << " with the other noun of the pair"
                  << (other > right ? ", so more often the wrong one" : other < right ? ", so more often the right one" : ", as often one as the other")
                  << ".\n  (C35, this comparison with one block and two over several seeds, is judged in 10_block.)\n";

        // --- the category version: a bag of words is enough (C34) ----------------------------------------------
        // A fair opponent fits its training sentences (category.hpp): train accuracy >= 0.99, checked every 250
        // steps, for at most 5 x --steps.
        const PronounTask cat = make_pronoun_task(PronounVersion::category, seed, 16);
        const CategoryRun category = run_category(cat, setup, target);
        print_category(std::cout, cat, target, category);

        // --- what the learned head looks at --------------------------------------------------------------
        show_learned_head(std::cout, learned, task, svg_path);
        const std::string curves = draw_accuracy_curves(uniform, learned, svg_path);
        std::cout << "\nwrote " << svg_path << " (the learned head's attention map for the first held-out sentence)\n"
                  << "wrote " << curves << " (held-out accuracy against training step)\n";

        if (mine) {
            std::cout << "\nYour exercises beside the reference (--mine)\n";
            const Mat ref_scores = s_qk / std::sqrt(static_cast<float>(d));
            compare_mine(std::cout, "exercise 4.1 qk_scores(x, W_q, W_k)", [&] { return ex::qk_scores(x, wq, wk); }, ref_scores, 1e-4);
            const Mat dy = rng.normal_mat(x.shape(0), d);
            const Mat dx = reference::matmul(dy, reference::transposed(wq)), dW = reference::matmul(reference::transposed(x), dy);
            compare_mine(std::cout, "exercise 4.2 linear_backward: dx", [&] { return ex::linear_backward(x, wq, dy).dx; }, dx, 1e-4);
            compare_mine(std::cout, "exercise 4.2 linear_backward: dW", [&] { return ex::linear_backward(x, wq, dy).dW; }, dW, 1e-4);
            const Vec w = softmax(Vec(xt::row(ref_scores, 5))), dw = rng.normal_vec(w.size());
            Vec ds = Vec::from_shape(w.shape());
            softmax_rows_backward(w.data(), dw.data(), ds.data(), 1, w.size());
            compare_mine(std::cout, "exercise 4.3 softmax_backward", [&] { return ex::softmax_backward(w, dw); }, ds, 1e-6);
        }

        // C34 over the seeds: this seed's models (above) and the others', each trained until it fits.
        cats[0] = category_figures(category);
        others.wait();
        std::vector<std::uint64_t> seeds;
        for (int i = 0; i < n_seeds; ++i) seeds.push_back(seed + static_cast<std::uint64_t>(i));
        add_c34_claim(claims, seeds, cats, target.max_steps);
        claims.print(std::cout);
    });
}
