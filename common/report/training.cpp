#include "report/training.hpp"

#include <unistd.h>

#include <filesystem>
#include <memory>

#include "core/error.hpp"

namespace attn {

void add_engine_flag(Cli& cli, Engine& engine) {
    auto word = std::make_shared<std::string>(engine_name(engine));  // lives in the check below, as long as the Cli
    cli.add("--engine", *word,
            std::string("which code trains the models on the CPU: reference (common/reference/, written to be read) or fast "
                        "(common/fast/: threads, vector loops, fused passes); the same model either way, up to fp32 rounding "
                        "(default ") + engine_name(engine) + ")",
            {"reference", "fast"});
    cli.check([word, &engine] { engine = engine_for(*word); });
}

void add_checkpoint_flags(Cli& cli, Checkpoints& k) {
    cli.add("--save", k.save_dir, "save each trained model (weights, AdamW, sampler, history) in its own folder under this one, "
                                  "at the end and on Ctrl-C; NumPy reads the weights: np.load('DIR/<run>/latest/wte.npy')");
    cli.add("--every", k.every, "with --save or --resume: also save every N steps", 0, 1000000);
    cli.add("--resume", k.resume_dir, "go on from the checkpoints in this folder (a run without one starts from the start); "
                                      "the same flags as the saved run, --steps as many or more");
    // Both folders are checked before anything trains: a typo in --resume would otherwise train every model
    // from the start, and a --save folder that cannot be written would fail only after the first model.
    cli.check([&k] {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!k.resume_dir.empty() && !fs::is_directory(k.resume_dir, ec))
            throw UsageError("--resume " + k.resume_dir + ": no such folder" +
                             (fs::exists(k.resume_dir, ec) ? " (it is a file)" : " (a typo? --save DIR writes one)"));
        const std::string& save = !k.save_dir.empty() ? k.save_dir : k.resume_dir;
        if (save.empty() || (k.read_only && k.save_dir.empty())) return;
        // The folder, or the nearest folder above it that exists (the run creates the rest), must be writable.
        fs::path p = fs::path(save).lexically_normal();
        while (!p.empty() && !fs::exists(p, ec)) p = p.has_parent_path() && p.parent_path() != p ? p.parent_path() : fs::path();
        if (p.empty()) p = ".";
        const std::string flag = !k.save_dir.empty() ? "--save " : "--resume ";
        if (!fs::is_directory(p, ec))
            throw UsageError(flag + save + ": " + p.string() + " is a file, not a folder: checkpoints cannot be written there");
        if (::access(p.c_str(), W_OK) != 0)
            throw UsageError(flag + save + ": " + p.string() + " is not writable: checkpoints cannot be written there");
    });
}

svg::Series loss_curve(const std::string& name, const std::vector<double>& losses, std::size_t window,
                       const std::string& colour, bool dashed) {
    svg::Series curve{name, {}, {}, colour, dashed};
    const std::vector<double> means = smooth(losses, window);
    for (std::size_t j = 0; j < means.size(); ++j) curve.x.push_back(static_cast<double>((j + 1) * window)), curve.y.push_back(means[j]);
    return curve;
}

}  // namespace attn
