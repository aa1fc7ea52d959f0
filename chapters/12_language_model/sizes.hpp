// The sizes of 12_language_model's experiments, each a few models trained on a corpus (text/corpus.hpp)
// with the library's own forward/backward passes and scored by held-out perplexity:
//
//   ladder      ladder.hpp                    Sections 9.1–9.5: from no context to the full block (C33, C14)
//   scale       scale_ablation.hpp            Section 9.2: attention with and without the division by √d_k (C12)
//   norm        08_normalization/warmup.hpp   Section 9.5: 12 blocks, pre- and post-norm, with and without warmup (C24)
//   positions   position_extrapolation.hpp    Section 9.6: four position schemes past their training window (C29)
//   depth       depth.hpp                     Section 9.8: one block and two, training against held-out (C37)
//
// Every experiment is a function of (corpus, size, seed) with no other state: the same seed trains the
// same weights bit for bit. The sizes: --quick (the default: seconds an experiment), --medium (minutes a seed on two cores)
// and --full (the chapter's size and setup where the chapter gives it, BPE tokens included); sizes.cpp gives
// the reason for each constant.
#pragma once

#include <string>
#include <vector>

#include "chapters/08_normalization/warmup.hpp"
#include "text/corpus.hpp"
#include "train/train.hpp"

namespace attn::sec12 {

enum class LmSize { quick, medium, full };

// The experiment names, in the chapter's order, and each one's setup at a size (a program may change it).
const std::vector<std::string>& lm_experiment_names();  // ladder, scale, norm, positions, depth
LmSetup lm_setup(const std::string& experiment, LmSize size);
// Whether `all` runs an experiment at a size. The normalization experiment is Section 9.5's, which
// 08_normalization runs by default at the chapter's width (C24); at --quick, 12_language_model's default, `all`
// leaves it there and to `12_language_model norm`, so that the default shows each experiment once and its four
// runs of twelve blocks a seed do not double the program's time. --medium and --full run it in `all` too.
bool in_all(const std::string& experiment, LmSize size);

std::vector<std::size_t> scale_widths(LmSize size);  // the √d_k ablation's large head widths (one head)
sec08::WarmupSetup warmup_setup(LmSize size);                // the norm experiment's depth and warmup
Tokenizer lm_tokenizer(LmSize size);                  // the tokenizer a size uses unless --tokenizer says
constexpr std::size_t kChapterVocab = 1024;           // the chapter's BPE vocabulary
constexpr double kChapterCharsPerToken = 2.43;      // the chapter's BPE on its whole text: 1,115,394 characters, 459,760 tokens
constexpr std::size_t kAllWindows = 1'000'000;        // more held-out windows than any text here holds: all of them

}  // namespace attn::sec12
