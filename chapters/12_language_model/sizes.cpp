#include "chapters/12_language_model/sizes.hpp"

#include "attn/error.hpp"

namespace attn::sec12 {

const std::vector<std::string>& lm_experiment_names() {
    static const std::vector<std::string> names = {"ladder", "scale", "norm", "positions", "depth"};
    return names;
}

LmSetup lm_setup(const std::string& experiment, LmSize size) {
    LmSetup s;
    const bool quick = size == LmSize::quick, full = size == LmSize::full;
    if (experiment == "ladder" || experiment == "positions" || experiment == "depth") {
        // the chapter: width 128, context 128, 3000 steps of AdamW at 1e-3, batch 64. The default is a quarter
        // of the width and half the context; --quick trains a tiny model faster (a larger learning rate).
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 32 : full ? 128 : 64;
        s.batch = quick ? 16 : full ? 64 : 32;
        s.steps = quick ? 400 : full ? 3000 : 1000;
        s.lr = quick ? 2e-3f : 1e-3f;
        if (experiment == "positions") {
            s.T = quick ? 32 : 64;  // the chapter trains positions on 64-token windows
            if (quick) s.steps = 600, s.lr = 3e-3f;  // fewer steps, or a lower rate, leave ALiBi unable to use context past its window
        }
    } else if (experiment == "scale") {
        // the large-d_k rows: the chapter's shorter run, 1500 steps, batch 32, one head, at the ladder's width
        // and context (its small row is the ladder's several-heads rung, at the ladder's setup)
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 32 : full ? 128 : 64;
        s.batch = quick ? 16 : 32;
        s.steps = quick ? 500 : 1500;
        s.lr = quick ? 2e-3f : 1e-3f;
        s.n_heads = 1;
    } else if (experiment == "norm") {
        // the chapter: 12 blocks, 1000 steps, lr 3e-3 at width 128, no clipping. Post-norm's trouble grows
        // with lr × width (Adam moves each weight by about lr a step; a unit sums width of them): the default
        // keeps the chapter's product, lr 6e-3 at width 64.
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 16 : 32;
        s.batch = 16;
        s.steps = quick ? 400 : 1000;
        // --quick: width 32 at lr 8e-3 (lr × width 0.26) collapses post-norm for 4 seeds of 4 (6e-3: 2 of 4)
        s.lr = full ? 3e-3f : quick ? 8e-3f : 6e-3f;
        s.clip = 0;  // clipping at 1 would hide post-norm's failure
    } else {
        throw Error("lm_setup: unknown experiment '" + experiment + "'");
    }
    s.eval_windows = 256;  // held-out windows: 8,192 tokens at --quick, 16,384 at the default
    return s;
}

std::vector<std::size_t> scale_widths(LmSize size) {
    if (size == LmSize::full) return {256, 1024};  // the chapter's two large widths
    return {256};
}

Tokenizer lm_tokenizer(LmSize size) { return size == LmSize::full ? Tokenizer::bpe : Tokenizer::bytes; }

sec08::WarmupSetup warmup_setup(LmSize size) {
    sec08::WarmupSetup w;
    w.warmup = size == LmSize::quick ? 100 : 200;
    return w;
}

}  // namespace attn::sec12
