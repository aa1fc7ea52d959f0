// The pronoun task's experiments (Sections 9.1, 9.3 and 9.7), shared by 04_learned_attention, 05_multi_head and
// 10_block: the models, a training run that goes on until the model fits its training sentences, the attention
// rows of every head at "so the", and the per-seed record of C35 and C36.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "reference/model.hpp"
#include "tasks/pronoun.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec04 {

// The block of 10_block on the pronoun task: GPT-2's shape at setup.d_model wide, `n_heads` heads, FFN
// setup.d_ff, pre-norm, biases, untied output; `mixer` = uniform turns the attention into the causal average.
ModelConfig pronoun_block_config(const PronounTask& task, const PronounSetup& setup, std::size_t n_layers,
                                 Mixer mixer = Mixer::learned, std::size_t n_heads = 4);

// When a run stops: once the training sentences are answered this well (checked every check_every steps), or
// at max_steps. The point is a fair opponent: a model stuck on the task's 50 % plateau says nothing about
// what it can learn.
struct FitTarget {
    double train_accuracy = 0.99;
    int check_every = 250;
    int max_steps = 15000;
};
struct PronounFitUntil {
    PronounFit fit;
    int steps = 0;         // steps taken
    bool reached = false;  // the training accuracy reached the target before max_steps
};
// The loop of train_lm (the same batches, AdamW and clipping for one seed) with that stop; held-out accuracy
// every 100 steps in fit.log.evals.
PronounFitUntil fit_pronoun_until(LanguageModel& model, const PronounTask& task, const PronounSetup& setup,
                                  const FitTarget& target, const std::string& name);

// The attention row at "so the" (input position 14) of every head of block `layer`, for one sentence: (h, T).
Mat answer_rows_per_head(reference::Model& model, const std::vector<int>& sentence, std::size_t layer);

// Two sentences that differ only in the adjective: the first held-out sentence's nouns with "tired" (a crosser
// adjective: ref = x) and with "wet" (a crossed adjective: ref = y) — the chapter's pair.
struct AdjectivePair {
    std::vector<int> crosser, crossed;
};
AdjectivePair adjective_pair(const PronounTask& task);

// Positions in a sentence (PronounTask's template).
inline constexpr std::size_t kFirstNoun = 1, kSecondNoun = 6, kAdjective = 11;

// C36 on one two-block model, heads averaged as in the chapter:
//   block 1 identical for the two sentences (every weight within 0.01: the chapter prints two decimals),
//   block 1's largest weight on the first noun in both,
//   block 2's largest weight on the adjective for the crosser sentence, on the other noun (y) for the crossed one.
struct C36Parts {
    Vec block1[2], block2[2];  // (T,) rows at "so the", averaged over heads: [0] crosser, [1] crossed
    double block1_diff = 0, block2_diff = 0;  // max |crosser − crossed| of each block's row
    std::size_t block1_argmax[2] = {0, 0}, block2_argmax[2] = {0, 0};
    bool block1_identical = false, block1_first_noun = false, block2_adjective = false, block2_other_noun = false;
    bool all() const { return block1_identical && block1_first_noun && block2_adjective && block2_other_noun; }
};
C36Parts check_c36(reference::Model& two_blocks, const AdjectivePair& pair);

// One seed of the role version (task split, initialisation and batches): the uniform average, one block and two
// blocks, all of pronoun_block_config, trained setup.steps each; and C36 on the two-block model.
struct PronounSeed {
    std::uint64_t seed = 0;
    PronounFit uniform, one, two;
    std::unique_ptr<reference::Model> uniform_model, one_model, two_model;  // read on the reference engine
    C36Parts c36;
};
// run_pronoun_seeds(first, n, setup) runs seeds first, first + 1, …, n of them (setup.seed is not read), every
// model a job of its own side by side on the cores: the same bits as one seed after the other.
std::vector<PronounSeed> run_pronoun_seeds(std::uint64_t first, std::size_t n, const PronounSetup& setup);

// The sweep's table: held-out accuracy of the three models and C36's four parts per seed, their mean, min and max,
// and how many seeds satisfy each part (and two blocks >= one).
void print_pronoun_seeds(std::ostream& os, const std::vector<PronounSeed>& runs);

}  // namespace attn::sec04
