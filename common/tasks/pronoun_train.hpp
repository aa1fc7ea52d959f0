// The pronoun task (tasks/pronoun.hpp) as an experiment: a model trained on it with the training loop
// (train/train.hpp), scored by where its argmax lands, and the attention row its answer reads.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/language_model.hpp"
#include "core/tensor.hpp"
#include "reference/model.hpp"
#include "tasks/pronoun.hpp"
#include "train/train.hpp"

namespace attn {

// The pronoun task's score: the argmax at "so the" over the whole vocabulary.
struct PronounScore {
    double accuracy = 0;    // the right noun
    double wrong_noun = 0;  // the other noun of the pair: knows which nouns are there, not their order
    double elsewhere = 0;   // anything else
    double loss = 0;        // the mean cross-entropy over every next token of the sentences, from the same forward
};
PronounScore score_pronoun(LanguageModel& model, const std::vector<std::vector<int>>& sentences,
                           const std::vector<PronounTask::Answer>& answers);

// The attention row at "so the" for one sentence in one block (layer 0 is the first), averaged over
// heads: (T,) weights over positions.
Vec answer_attention(reference::Model& model, const std::vector<int>& sentence, std::size_t layer = 0);

// One model trained on the pronoun task and scored: the experiment of Sections 9.1, 9.3 and 9.7.
struct PronounSetup {
    int steps = 3000;
    std::size_t batch = 32;
    std::size_t d_model = 64, d_ff = 128;  // every model has the same per-position MLP before its readout
    Norm norm = Norm::pre;                 // pre-norm LayerNorms: the same for every model, and stable training
    float lr = 1e-3f;
    int warmup = 0;                        // steps of linear learning-rate warmup
    float clip = 1.0f;                     // global gradient-norm clipping (0 = none)
    std::uint64_t seed = 0;                // initialisation and batches
    bool progress = true;
    Checkpoints checkpoints = {};          // --save, --every, --resume
    Device device = Device::cpu;           // --device: where the models train (gpu/placement.hpp)
    Engine engine = Engine::reference;     // --engine: the sections train on the code a learner reads (train/engine.hpp)
};
struct PronounRun {
    std::string name;
    std::unique_ptr<reference::Model> model;  // the trained model, on the reference engine (train/engine.hpp)
    std::size_t params = 0;
    PronounScore train, heldout;
    TrainResult log;
};
// A model of `config` (seeded with setup.seed) trained on the task with fit_pronoun, counted and scored.
PronounRun train_pronoun(const PronounTask& task, const ModelConfig& config, const PronounSetup& setup, const std::string& name);
// The same for the chapter's small pronoun model: embeddings, `mixer` with `n_heads`, setup.d_ff, setup.norm.
PronounRun train_pronoun(const PronounTask& task, Mixer mixer, std::size_t n_heads, const PronounSetup& setup,
                         const std::string& name);

// Any model on the pronoun task: trained with setup's steps, batch, lr and seed (held-out accuracy every
// 100 steps in log.evals), then scored on the training and held-out sentences (each score with its mean loss).
struct PronounFit {
    TrainResult log;
    PronounScore train, heldout;
};
PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, const PronounSetup& setup, const std::string& name);
// The same with the loop's settings given (e.g. a stop_when): held-out accuracy is recorded every 100 steps.
PronounFit fit_pronoun(LanguageModel& model, const PronounTask& task, TrainConfig config);

}  // namespace attn
