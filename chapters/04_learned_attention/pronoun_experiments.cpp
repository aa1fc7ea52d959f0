#include "chapters/04_learned_attention/pronoun_experiments.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/rng.hpp"
#include "core/side_by_side.hpp"
#include "gpu/placement.hpp"
#include "report/table.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/optim.hpp"

namespace attn::sec04 {

ModelConfig pronoun_block_config(const PronounTask& task, const PronounSetup& setup, std::size_t n_layers, Mixer mixer,
                                 std::size_t n_heads) {
    ModelConfig c = gpt2_config({.vocab = task.vocab.size(), .max_T = PronounTask::kLength - 1, .d_model = setup.d_model,
                                 .n_heads = n_heads, .n_layers = n_layers});
    c.d_ff = setup.d_ff, c.head = Head::untied, c.mixer = mixer;
    return c;
}

PronounFitUntil fit_pronoun_until(LanguageModel& model, const PronounTask& task, const PronounSetup& setup,
                                  const FitTarget& target, const std::string& name) {
    require(target.check_every > 0 && target.max_steps > 0, "fit_pronoun_until", "check_every and max_steps must be positive");
    // fit_pronoun's loop (the same batches for one seed), up to max_steps, ending once the training sentences fit.
    TrainConfig tc = train_config(setup, name);
    tc.steps = target.max_steps;
    tc.stop_check_every = target.check_every;
    tc.stop_when = [&] { return score_pronoun(model, task.train, task.train_answers).accuracy >= target.train_accuracy; };
    PronounFitUntil r;
    r.fit = fit_pronoun(model, task, tc);
    r.steps = static_cast<int>(r.fit.log.losses.size());
    r.reached = r.fit.log.stopped;
    return r;
}

Mat answer_rows_per_head(reference::Model& model, const std::vector<int>& sentence, std::size_t layer) {
    answer_attention(model, sentence, layer);  // one forward of the sentence (and a check of `layer`)
    const Tensor3& w = model.attention_weights(layer);  // (h, T, T): one sentence
    Mat rows = xt::view(w, xt::all(), PronounTask::kAnswerPosition, xt::all());  // (h, T)
    return rows;
}

AdjectivePair adjective_pair(const PronounTask& task) {
    AdjectivePair p{task.heldout.front(), task.heldout.front()};
    p.crosser[kAdjective] = task.id("tired"), p.crossed[kAdjective] = task.id("wet");
    p.crosser[PronounTask::kAnswerPosition + 1] = p.crosser[kFirstNoun];   // ref = x
    p.crossed[PronounTask::kAnswerPosition + 1] = p.crossed[kSecondNoun];  // ref = y
    return p;
}

C36Parts check_c36(reference::Model& two_blocks, const AdjectivePair& pair) {
    const std::size_t blocks = two_blocks.config().n_layers;
    require(blocks == 2, "check_c36", "needs a two-block model, got " + std::to_string(blocks));
    C36Parts c;
    auto argmax = [](const Vec& v) { return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin()); };
    for (int s = 0; s < 2; ++s) {
        const std::vector<int>& sentence = s == 0 ? pair.crosser : pair.crossed;
        c.block1[s] = answer_attention(two_blocks, sentence, 0);
        c.block2[s] = answer_attention(two_blocks, sentence, 1);
        c.block1_argmax[s] = argmax(c.block1[s]), c.block2_argmax[s] = argmax(c.block2[s]);
    }
    c.block1_diff = static_cast<double>(xt::amax(xt::abs(c.block1[0] - c.block1[1]))());
    c.block2_diff = static_cast<double>(xt::amax(xt::abs(c.block2[0] - c.block2[1]))());
    c.block1_identical = c.block1_diff < 0.01;
    c.block1_first_noun = c.block1_argmax[0] == kFirstNoun && c.block1_argmax[1] == kFirstNoun;
    c.block2_adjective = c.block2_argmax[0] == kAdjective;
    c.block2_other_noun = c.block2_argmax[1] == kSecondNoun;
    return c;
}

std::vector<PronounSeed> run_pronoun_seeds(std::uint64_t first, std::size_t n, const PronounSetup& base) {
    struct Kind {
        std::size_t layers;
        Mixer mixer;
        const char* name;
        PronounFit PronounSeed::*fit;
        std::unique_ptr<reference::Model> PronounSeed::*model;
    };
    // The longest first, so that no core is left with one long model at the end: two blocks take about twice what
    // one block takes, the uniform average the least.
    const Kind kinds[3] = {{2, Mixer::learned, "two blocks", &PronounSeed::two, &PronounSeed::two_model},
                           {1, Mixer::learned, "one block", &PronounSeed::one, &PronounSeed::one_model},
                           {1, Mixer::uniform, "uniform average", &PronounSeed::uniform, &PronounSeed::uniform_model}};
    std::vector<PronounSeed> runs(n);
    std::vector<PronounTask> tasks;
    for (std::size_t i = 0; i < n; ++i) {
        runs[i].seed = first + i;
        tasks.push_back(make_pronoun_task(PronounVersion::role, runs[i].seed));
    }
    // Each model of each seed is a job of its own, side by side on the cores (the same bits as one after the
    // other, core/side_by_side.hpp); on a GPU, whose one device they would share, one after the other.
    side_by_side(3 * n, [&](std::size_t job) {
        const Kind& kind = kinds[job / n];
        PronounSeed& r = runs[job % n];
        const PronounTask& task = tasks[job % n];
        PronounSetup setup = base;
        setup.seed = r.seed;
        const ModelConfig config = pronoun_block_config(task, setup, kind.layers, kind.mixer);
        std::unique_ptr<LanguageModel> model = make_model(config, r.seed, setup.device, setup.engine);
        r.*kind.fit = fit_pronoun(*model, task, setup, std::string(kind.name) + ", seed " + std::to_string(r.seed));
        r.*kind.model = as_reference_model(std::move(model), config);  // C36 reads the trained model's attention maps
    }, base.device == Device::gpu ? 1 : 0);
    for (std::size_t i = 0; i < n; ++i) runs[i].c36 = check_c36(*runs[i].two_model, adjective_pair(tasks[i]));
    return runs;
}

void print_pronoun_seeds(std::ostream& os, const std::vector<PronounSeed>& runs) {
    os << "\n  " << runs.size() << " seeds (each its own held-out pairs, initialisation and batches): held-out accuracy, and C36's\n"
       << "  four parts on the two-block model (block 1 the same for both sentences within 0.01, block 1 on the first noun,\n"
       << "  block 2 on the adjective for tired, on the other noun for wet)\n";
    Table st(os, {{"seed", 6, 0}, {"uniform", 9, 3}, {"one block", 11, 3}, {"two blocks", 12, 3}, {"b1 same", 9},
                  {"b1 noun 1", 11}, {"b2 adj", 8}, {"b2 noun 2", 11}}, "  ");
    st.header();
    auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
    for (const PronounSeed& s : runs)
        st.row({s.seed, s.uniform.heldout.accuracy, s.one.heldout.accuracy, s.two.heldout.accuracy, yes(s.c36.block1_identical),
                yes(s.c36.block1_first_noun), yes(s.c36.block2_adjective), yes(s.c36.block2_other_noun)});
    for (const char* what : {"mean", "min", "max"}) {
        std::vector<Cell> row = {what};
        for (PronounFit PronounSeed::*fit : {&PronounSeed::uniform, &PronounSeed::one, &PronounSeed::two}) {
            std::vector<double> acc;
            for (const PronounSeed& s : runs) acc.push_back((s.*fit).heldout.accuracy);
            const double v = std::string(what) == "min"   ? *std::min_element(acc.begin(), acc.end())
                             : std::string(what) == "max" ? *std::max_element(acc.begin(), acc.end())
                                                          : std::accumulate(acc.begin(), acc.end(), 0.0) / static_cast<double>(acc.size());
            row.push_back(v);
        }
        st.row(row);
    }
    auto count = [&](bool C36Parts::*part) {
        return std::to_string(std::count_if(runs.begin(), runs.end(), [&](const PronounSeed& s) { return s.c36.*part; }));
    };
    const auto ordered = std::count_if(runs.begin(), runs.end(), [](const PronounSeed& s) {
        return s.two.heldout.accuracy >= s.one.heldout.accuracy;
    });
    os << "  of " << runs.size() << " seeds: two blocks >= one block at " << ordered << "; C36 block 1 the same for both sentences at "
       << count(&C36Parts::block1_identical) << ", block 1 on the first noun at " << count(&C36Parts::block1_first_noun)
       << ", block 2 on the adjective (tired) at " << count(&C36Parts::block2_adjective) << ", block 2 on the other noun (wet) at "
       << count(&C36Parts::block2_other_noun) << "\n";
}

}  // namespace attn::sec04
