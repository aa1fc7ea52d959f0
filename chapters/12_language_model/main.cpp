// Sections 9.1–9.8, the chapter's trained language models: the ladder from averaging to a full
// block, the √d_k ablation, post-norm's need for warmup, how four position schemes extrapolate, and one
// block against two.
//
//   12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags]
//
// Each experiment trains small causal language models on a corpus — by default the chapter's, tiny
// Shakespeare (data/), or the generated stories (--corpus stories) or any UTF-8 text (--corpus FILE) — and
// reports held-out perplexity, exp of the mean next-token cross-entropy on the last 10 % of the text. A
// token is a byte (--tokenizer bytes) or, as in the chapter, a byte-level BPE token (--tokenizer bpe --vocab
// 1024, GPT-2's cut into words, the merges learned on the training 90 % only; --full's default). The models and the training loop are the library's (fast/model.hpp,
// train.hpp); the experiments are beside this file (sizes.hpp lists them), the norm experiment
// 08_normalization's (chapters/08_normalization/warmup.hpp). report.cpp prints the chapter's tables from
// their results and a sample of what each rung of the ladder writes; claims.cpp checks each claim as the
// chapter states it (agrees), or only in a named weaker form (shape), or not (differs). This file reads the
// flags and runs the experiments asked for.
// `bench` is not part of `all`: it times training (tokens/s), which varies run to run.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "09_positions/positions.hpp"
#include "chapters/12_language_model/generate.hpp"
#include "chapters/12_language_model/judge.hpp"
#include "chapters/12_language_model/report.hpp"
#include "chapters/12_language_model/sizes.hpp"
#include "gpu/placement.hpp"
#include "math/positions.hpp"
#include "report/claims.hpp"
#include "report/cli.hpp"
#include "report/mine.hpp"
#include "report/svg.hpp"
#include "report/training.hpp"

using namespace attn;
using namespace attn::sec12;  // this section's experiments and what they print (chapters/12_language_model/)

int main(int argc, char** argv) {
    std::string command = "all";
    std::uint64_t seed = 0;
    int steps = 0, threads = 1, vocab = 0, n_seeds = 0, eval_windows = 0;
    bool quick = false, medium = false, full = false, mine = false;
    std::string corpus_name = "shakespeare", svg_path = "12_language_model.svg", tokenizer;
    Cli cli("12_language_model",
            "Sections 9.1-9.8, the trained experiments: the ladder, the sqrt(d_k) ablation, warmup, position extrapolation, depth");
    cli.add_choice("experiment", command, {"ladder", "scale", "norm", "positions", "depth", "all", "bench", "generate"},
                   "which experiment to run, before or after the flags (default all); generate prompts a model a run saved");
    cli.add("--corpus", corpus_name, kCorpusHelp);
    cli.add("--tokenizer", tokenizer,
            "bytes or bpe: what a token is. bpe is the chapter's (byte-level BPE, merges learned on the training 90 % only); "
            "default: bpe at --full, bytes otherwise (bpe's 1024-wide readout makes --medium's models about 3x slower: "
            "the ladder at 100 steps took 21.5 s of CPU against 6.4 s for bytes)");
    cli.add("--vocab", vocab, "with --tokenizer bpe: the vocabulary, 257 to 4096 (default 1024, the chapter's)", 0, 1'000'000);
    cli.add("--seed", seed, "random seed (initialisation and batches): the tables and pictures are this seed's");
    cli.add("--seeds", n_seeds,
            "the trained claims are decided over this many seeds, --seed and the ones after it (default 5, at --full 1: hours "
            "a seed); one seed is judged at --full by the spread the ladder's committed seeds show there, and decides nothing at "
            "the other sizes",
            1, 100);
    cli.add_switch("--quick", quick, "the default size, the tests' too: width 32, context 32, a few hundred steps; seconds per experiment, "
                                     "the shape of each result only");
    cli.add_switch("--medium", medium, "width 64, context 64, 1000 steps (half the chapter's width and context, a third of its steps): "
                                       "about ten minutes a seed");
    cli.add_switch("--full", full,
                   "the chapter's size and setup (BPE with a vocabulary of 1024, width 128, context 128, 3000 steps of AdamW at 1e-3, "
                   "batch 64; d_k up to 1024): hours");
    cli.add("--steps", steps, "training steps for every model (0: each experiment's own; with --resume, 0 trains nothing more: "
                               "it evaluates and samples the saved models); --full's 3000 take hours", 0, 100'000);
    cli.add("--eval-windows", eval_windows,
            "held-out windows of the context's length each perplexity scores, from the start of the held-out tenth (0: the size's "
            "own, 256, at --full the whole tenth); with --resume DIR --steps 0, 256 scores a --full run as the ones committed before "
            "--full scored the whole tenth", 0, 1'000'000);
    cli.add("--threads", threads, "bench: BLAS threads; more than the cores only contend", 1, 256);
    std::string device_flag = "cpu";
    cli.add("--device", device_flag,
            "where the models train: the gpu runs the same models and loop on a CUDA device (every experiment, and bench; scale "
            "reads its scores on the CPU from a copy of the trained weights); without a GPU, gpu says so and exits 77",
            {"cpu", "gpu"});
    Checkpoints checkpoints;
    cli.check([&] { checkpoints.read_only = command == "generate"; });  // generate only reads --resume (before its check)
    add_checkpoint_flags(cli, checkpoints);
    Engine engine = Engine::fast;
    add_engine_flag(cli, engine);
    cli.add_output("--svg", svg_path, "the picture of the experiment (with all: the ladder's; the others beside it, FILE_scale.svg, ...)");
    std::string judge_dir;
    cli.add("--judge", judge_dir,
            "DIR: train nothing; read the committed runs in DIR (docs/runs: each --full run's output) and decide their claims "
            "again by today's rule, the ladder's seeds together, the other runs by the ladder's spread");
    std::string prompt, model_name;
    int gen_tokens = 200, top_k = 0;
    double temperature = 1.0;
    cli.add("--prompt", prompt, "generate: the text the model continues");
    cli.add("--model", model_name, "generate: which saved model, by folder ('ffn-seed0'), folder without its seed ('ffn') or "
                                   "label ('+ FFN'); default the ladder's full block");
    cli.add("--tokens", gen_tokens, "generate: how many tokens to draw", 1, 100'000);
    cli.add("--temperature", temperature, "generate: > 0; 1 is the model's own distribution, below 1 sharper", 0, 100);
    cli.add("--top-k", top_k, "generate: draw from the k likeliest tokens only (0: all)", 0, 1'000'000);
    cli.add_switch("--mine", mine, "also run your exercises 9.1-9.3 (the position tables these models use) beside the reference");
    cli.footer("experiments: 12_language_model [ladder|scale|norm|positions|depth|all|bench] [flags] (default: all,\n"
               "every experiment but bench, in the chapter's order; at --quick, the default size, all but norm, which\n"
               "08_normalization runs)\n"
               "prompt a saved model: 12_language_model ladder --quick --save DIR, then\n"
               "  12_language_model generate --resume DIR --prompt 'ROMEO:' [--model NAME] [--tokens N] [--temperature T] [--top-k K]");

    // A usage error the flags' ranges cannot see (which tokenizer, and --vocab only with bpe): exit 2 with the usage.
    std::string usage_error;
    const int rc = run_program(cli, argc, argv, [&] {
        if (int(quick) + int(medium) + int(full) > 1)
            usage_error = "--quick, --medium and --full choose different sizes: give one";
        else if (!tokenizer.empty() && tokenizer != "bytes" && tokenizer != "bpe")
            usage_error = "--tokenizer must be bytes or bpe, got '" + tokenizer + "'";
        else if (vocab != 0 && tokenizer != "bpe" && !(full && tokenizer.empty()))
            usage_error = "--vocab sets the BPE vocabulary: give it with --tokenizer bpe (or --full), not with bytes";
        else if (vocab != 0 && (vocab < 257 || vocab > 4096))
            usage_error = "--vocab must be in [257, 4096], got " + std::to_string(vocab);
        else if (!judge_dir.empty() && (command != "all" || quick || medium || full || cli.given("--seed") || cli.given("--seeds") || cli.given("--steps")))
            usage_error = "--judge reads the runs it is given and trains nothing: give it without an experiment, a size, --seed, --seeds or --steps";
        else if (command == "generate" && checkpoints.resume_dir.empty())
            usage_error = "generate needs --resume DIR, a folder `12_language_model <experiment> --save DIR` wrote";
        else if (command == "generate" && !cli.given("--prompt"))
            usage_error = "generate needs --prompt TEXT, the text the model continues";
        else if (command == "generate" && !(temperature > 0))
            usage_error = "--temperature must be > 0, got " + fmt(temperature, 2) + " (below 1 sharper, above 1 flatter)";
        else if (command == "generate" && (full || quick || medium || cli.given("--steps") || cli.given("--seeds") || cli.given("--svg") ||
                                           mine || cli.given("--device") || cli.given("--save") || cli.given("--every") ||
                                           cli.given("--eval-windows") || cli.given("--threads")))
            usage_error = "generate reads a saved model and trains nothing: --full, --steps, --seeds, --svg, --mine, --device, --save, "
                          "--every, --eval-windows, --threads, --quick and --medium are the experiments'";
        else if (command != "generate" && (cli.given("--prompt") || cli.given("--model") || cli.given("--tokens") ||
                                           cli.given("--temperature") || cli.given("--top-k")))
            usage_error = "--prompt, --model, --tokens, --temperature and --top-k are generate's: give them with generate";
        if (!usage_error.empty()) return;
        if (!judge_dir.empty()) {  // the committed runs at the chapter's setup, judged again (judge.hpp)
            std::cout << cli.title() << "\n\n";
            ClaimReport claims;
            judge_runs(std::cout, read_run_files(judge_dir), claims);
            claims.print(std::cout);
            return;
        }
        // --resume DIR --steps 0: evaluate and sample the saved models, training nothing.
        checkpoints.evaluate_only = !checkpoints.resume_dir.empty() && cli.given("--steps") && steps == 0;
        if (checkpoints.evaluate_only)
            std::cout << "--steps 0 --resume " << checkpoints.resume_dir << ": every model is loaded from its checkpoint and trained no\n"
                      << "further (the setup lines say how each experiment trains by default)\n\n";
        const Device device = device_for(device_flag);
        const LmSize size = medium ? LmSize::medium : full ? LmSize::full : LmSize::quick;
        if (n_seeds == 0) n_seeds = full ? 1 : 5;
        const CorpusOptions options{.tokenizer = tokenizer.empty() ? lm_tokenizer(size) : tokenizer == "bpe" ? Tokenizer::bpe : Tokenizer::bytes,
                                    .vocab = vocab != 0 ? static_cast<std::size_t>(vocab) : kChapterVocab};
        std::cout << cli.title() << "\n\n";
        const Corpus corpus = named_corpus(corpus_name, options);
        describe_corpus(std::cout, corpus, size);
        if (device == Device::gpu)
            std::cout << "--device gpu: the models train on " << gpu_description() << "\n\n";
        ClaimReport claims;
        // The BPE the models train with, beside their checkpoints: generate prompts them through this one.
        const std::string& saves_into = !checkpoints.save_dir.empty() ? checkpoints.save_dir : checkpoints.resume_dir;
        if (command != "generate" && !checkpoints.evaluate_only && !saves_into.empty() && corpus.bpe) {
            std::filesystem::create_directories(saves_into);
            corpus.bpe->save(saves_into + "/" + kTokenizerFile);
        }
        if (command == "generate") {  // a saved model, prompted (generate.hpp)
            generate(std::cout, corpus,
                     {.dir = checkpoints.resume_dir, .model = model_name, .prompt = prompt, .tokens = static_cast<std::size_t>(gen_tokens),
                      .temperature = temperature, .top_k = static_cast<std::size_t>(top_k), .seed = seed, .engine = engine});
            return;
        }
        if (command == "bench") {
            report_bench(Context{corpus, size, seed, n_seeds, steps, svg_path, claims, checkpoints, device, engine}, threads);
            return;
        }
        const std::map<std::string, void (*)(const Context&)> experiments = {
            {"ladder", report_ladder}, {"scale", report_scale}, {"norm", report_norm}, {"positions", report_positions}, {"depth", report_depth}};
        bool first = true;
        for (const std::string& name : lm_experiment_names()) {
            if (command != "all" && command != name) continue;
            if (command == "all" && !in_all(name, size)) {  // Section 9.5's experiment: 08_normalization's (sizes.hpp)
                std::cout << "Post-norm against pre-norm, with and without warmup (Section 9.5, C24): 08_normalization runs it by default,\n"
                          << "  at the chapter's width; here `12_language_model " << name << "` runs it at this size ("
                          << warmup_setup(size).n_layers << " blocks), and `all` at\n  --medium and --full.\n\n";
                continue;
            }
            const std::string svg = first ? svg_path : svg::sibling(svg_path, "_" + name);
            first = false;
            const auto start = std::chrono::steady_clock::now();
            experiments.at(name)(Context{corpus, size, seed, n_seeds, steps, svg, claims, checkpoints, device, engine,
                                         static_cast<std::size_t>(eval_windows)});
            std::cerr << "  [" << name << ": " << fmt(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1)
                      << " s]\n";
        }
        if (mine) {
            const std::size_t T = 8, d = 16;
            std::cout << "Your exercises beside the reference (--mine)\n";
            compare_mine(std::cout, "exercise 9.1 sinusoidal_table(8, 16), the table sinusoidal models add",
                         [&] { return ex::sinusoidal_table(T, d); }, sinusoidal_table(T, d), 1e-5);
            Mat unit = xt::zeros<float>({T, d});
            for (std::size_t t = 0; t < T; ++t)
                for (std::size_t j = 0; j < d; j += 2) unit(t, j) = 1.0f;
            compare_mine(std::cout, "exercise 9.2 rope_rotate of (1, 0) pairs, the angles RoPE models read",
                         [&] { return ex::rope_rotate(unit, 0); }, rope(unit), 1e-4);
            compare_mine(std::cout, "exercise 9.3 alibi_bias(8, 4 heads, head 1), the bias of an ALiBi model's first head",
                         [&] { return ex::alibi_bias(T, 4, 1); }, alibi_bias(T, alibi_slopes(4).front()), 1e-6);
        }
        claims.print(std::cout);
    });
    if (usage_error.empty()) return rc;
    std::cerr << cli.program() << ": " << usage_error << "\n\n";
    cli.print_usage(std::cerr);
    return 2;
}
