#include "chapters/12_language_model/sizes.hpp"

#include "core/error.hpp"

namespace attn::sec12 {

const std::vector<std::string>& lm_experiment_names() {
    static const std::vector<std::string> names = {"ladder", "scale", "norm", "positions", "depth"};
    return names;
}

bool in_all(const std::string& experiment, LmSize size) { return !(experiment == "norm" && size == LmSize::quick); }

LmSetup lm_setup(const std::string& experiment, LmSize size) {
    LmSetup s;
    const bool quick = size == LmSize::quick, full = size == LmSize::full;
    if (experiment == "ladder" || experiment == "positions" || experiment == "depth") {
        // the chapter: width 128, context 128, 3000 steps of AdamW at 1e-3, batch 64. --medium halves the
        // width, context and batch and trains a third of the steps; --quick (the default) trains a tiny model faster (a
        // larger learning rate).
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
        // the chapter: 12 blocks, 1000 steps, lr 3e-3, no clipping, at the ladder's width 128, context 128 and
        // batch 64 (--full). Post-norm's trouble grows with lr × width (Adam moves each weight by about lr a step;
        // a unit sums width of them): the smaller sizes keep the chapter's product, 3e-3 × 128 = 0.384 (lr 6e-3 at
        // width 64, 1.2e-2 at width 32), on a shorter context and batch (16 or 32 tokens, 16 sequences: seconds).
        s.d_model = quick ? 32 : full ? 128 : 64;
        s.T = quick ? 16 : full ? 128 : 32;
        s.batch = full ? 64 : 16;
        s.steps = quick ? 400 : 1000;
        s.lr = static_cast<float>(3e-3 * 128.0 / static_cast<double>(s.d_model));
        s.clip = 0;  // clipping at 1 would hide post-norm's failure
    } else {
        throw Error("lm_setup: unknown experiment '" + experiment + "'");
    }
    // held-out windows: 8,192 tokens at --quick, 16,384 at --medium; --full scores the whole held-out tenth, as
    // the chapter (evaluate takes as many windows as it holds)
    s.eval_windows = full ? kAllWindows : 256;
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
