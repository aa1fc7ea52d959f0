#include "chapters/10_block/maps.hpp"

#include <vector>

#include "report/explorer.hpp"
#include "report/svg.hpp"
#include "report/table.hpp"
#include "tasks/pronoun_train.hpp"
#include "train/train.hpp"

namespace attn::sec10 {

using namespace sec04;

void show_pronoun_maps(std::ostream& os, const PronounSeed& run, const PronounTask& task, const std::string& svg_path) {
    // C36: the attention rows at "so the" of the two-block model, per head and averaged, for two sentences that
    // differ only in the adjective
    const AdjectivePair pair = adjective_pair(task);
    std::vector<std::string> words;
    for (std::size_t i = 0; i + 1 < pair.crosser.size(); ++i) words.push_back(task.vocab[static_cast<std::size_t>(pair.crosser[i])]);
    words[kAdjective] = "tired/wet";
    Mat maps = Mat::from_shape({6, PronounTask::kLength - 1});  // (rows: model/block/sentence, input positions)
    std::vector<std::string> labels;
    std::size_t r = 0;
    for (std::size_t L = 1; L <= 2; ++L)
        for (std::size_t layer = 0; layer < L; ++layer)
            for (const auto* sentence : {&pair.crosser, &pair.crossed}) {
                xt::row(maps, static_cast<std::ptrdiff_t>(r++)) = answer_attention(L == 1 ? *run.one_model : *run.two_model, *sentence, layer);
                labels.push_back((L == 1 ? "1 block" : "2 blocks, block " + std::to_string(layer + 1)) +
                                 (sentence == &pair.crosser ? ": tired" : ": wet"));
            }
    os << "\n  Attention at \"so the\" (position 14), averaged over heads, for \"" << task.words(pair.crosser)
              << "\" and its twin with \"wet\":\n";
    print_matrix(os, maps, 2, "    ");
    svg::write_file(svg_path, svg::heatmap(maps, {"Attention at 'so the', averaged over heads", labels, words, true}));
    const C36Parts& c36 = run.c36;
    os << "  Two blocks: block 1 weighs \"" << words[c36.block1_argmax[0]] << "\" and \"" << words[c36.block1_argmax[1]]
              << "\" most (the first noun is position 1); its rows differ by at most " << fmt(c36.block1_diff, 3)
              << " between the sentences. Block 2 weighs \"" << words[c36.block2_argmax[0]] << "\" most for tired (the adjective is\n"
              << "  position 11) and \"" << words[c36.block2_argmax[1]] << "\" for wet (the other noun is position 6); its rows differ by "
              << fmt(c36.block2_diff, 3) << ".\n";
    os << "\n  Each head of the two-block model at \"so the\" (rows: block, head; the SVGs below draw them):\n";
    for (const auto* sentence : {&pair.crosser, &pair.crossed}) {
        const bool tired = sentence == &pair.crosser;
        Mat heads = Mat::from_shape({8, PronounTask::kLength - 1});  // (2 blocks × 4 heads, T)
        std::vector<std::string> head_labels;
        for (std::size_t layer = 0; layer < 2; ++layer) {
            xt::view(heads, xt::range(4 * layer, 4 * layer + 4), xt::all()) = answer_rows_per_head(*run.two_model, *sentence, layer);
            for (std::size_t h = 0; h < 4; ++h) head_labels.push_back("block " + std::to_string(layer + 1) + ", head " + std::to_string(h + 1));
        }
        std::vector<std::string> cols = words;
        cols[kAdjective] = tired ? "tired" : "wet";
        os << "    " << (tired ? "tired" : "wet") << ":\n";
        print_matrix(os, heads, 2, "      ");
        svg::write_file(svg::sibling(svg_path, tired ? "_heads_tired" : "_heads_wet"),
                        svg::heatmap(heads, {"Two blocks, each head at 'so the': " + task.words(*sentence), head_labels, cols, true}));
    }
}

void write_pronoun_explorer(const PronounSeed& run, const PronounTask& task, const std::string& path) {
    const AdjectivePair pair = adjective_pair(task);
    explorer::Page page{"Inside the pronoun task's trained models (Section 9.7)",
                        "The uniform average, one block and two blocks, trained at seed " + std::to_string(run.seed) +
                            " on the pronoun task, read two sentences that differ only in the adjective and two held-out ones.",
                        {}, {pair.crosser, pair.crossed, task.heldout.at(0), task.heldout.at(1)}, {}, {}, true,
                        static_cast<int>(PronounTask::kAnswerPosition), " "};
    page.pieces = task.vocab;
    for (const char* const name : {"tired", "wet", "held-out", "held-out"}) page.passage_names.push_back(name);
    for (std::size_t p = 0; p < page.passages.size(); ++p) page.passage_names[p] += ": " + task.words(page.passages[p]);
    page.models.push_back(explorer::read(*run.uniform_model, run.uniform_model->config(), "uniform average", page.passages));
    page.models.push_back(explorer::read(*run.one_model, run.one_model->config(), "one block", page.passages));
    for (std::size_t layer = 0; layer < 2; ++layer)
        page.models.push_back(explorer::read(*run.two_model, run.two_model->config(), "two blocks, block " + std::to_string(layer + 1), page.passages, layer));
    explorer::write_file(path, page);
}

}  // namespace attn::sec10
