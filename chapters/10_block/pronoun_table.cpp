#include "chapters/10_block/pronoun_table.hpp"

#include <utility>

#include "report/table.hpp"
#include "tasks/pronoun_train.hpp"

namespace attn::sec10 {

void print_pronoun_table(std::ostream& os, const sec04::PronounSeed& run, const PronounTask& task, const PronounSetup& setup) {
    os << "The pronoun task (\"" << task.words(task.heldout.front()) << "\"): held-out pairs seen only in the other order\n"
       << "  models: " << setup.d_model << " wide, 4 heads, FFN " << setup.d_ff << ", pre-norm, untied output; the uniform\n"
       << "  average is the one-block model with equal weights in place of q . k; " << setup.steps << " steps each\n";
    Table pt(os, {{"model", 16}, {"train acc", 11, 3}, {"held-out acc", 14, 3}, {"wrong noun", 12, 3}, {"train loss", 12, 4}, {"held-out loss", 15, 4}},
             "  ");
    pt.header();
    for (const auto& [name, fit] : {std::pair{"uniform average", &run.uniform}, {"one block", &run.one}, {"two blocks", &run.two}})
        pt.row({name, fit->train.accuracy, fit->heldout.accuracy, fit->heldout.wrong_noun, fit->train.loss, fit->heldout.loss});
    os << "  The pronoun-task analogue of C37 (whose home is the corpus, 12_language_model): two blocks' loss is "
       << (run.two.train.loss < run.one.train.loss ? "lower" : "not lower") << " on the training sentences (" << fmt(run.two.train.loss, 4)
       << " vs " << fmt(run.one.train.loss, 4) << ") and " << (run.two.heldout.loss > run.one.heldout.loss ? "higher" : "not higher")
       << " on the held-out ones (" << fmt(run.two.heldout.loss, 4) << " vs " << fmt(run.one.heldout.loss, 4) << ").\n";
}

}  // namespace attn::sec10
