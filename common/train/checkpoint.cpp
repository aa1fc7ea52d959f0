#include "train/checkpoint.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace attn {

namespace fs = std::filesystem;

namespace {

std::string step_name(int step) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "step-%06d", step);
    return buf;
}

std::string hex(std::uint64_t x) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
    return buf;
}

std::uint64_t bits_of(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}

double double_of(std::uint64_t u) {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

// A line per field: "key: value". Configurations and names contain no newline.
struct Manifest {
    std::map<std::string, std::string> fields;
    std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> tensors;  // name, (rows, cols)
};

std::string no_newline(const std::string& s, const std::string& what) {
    require(s.find('\n') == std::string::npos, "save_checkpoint", what + " may not contain a newline");
    return s;
}

Manifest read_manifest(const fs::path& folder) {
    const fs::path path = folder / "manifest.txt";
    std::ifstream in(path);
    require(static_cast<bool>(in), "load_checkpoint", "cannot read " + path.string() + " (no checkpoint there?)");
    Manifest m;
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t colon = line.find(": ");
        require(colon != std::string::npos, "load_checkpoint", path.string() + ": unreadable line '" + line + "'");
        const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
        if (key == "tensor") {
            std::istringstream ts(value);
            std::string name;
            std::size_t rows = 0, cols = 0;
            require(static_cast<bool>(ts >> name >> rows >> cols), "load_checkpoint", path.string() + ": unreadable tensor line '" + line + "'");
            m.tensors.push_back({name, {rows, cols}});
        } else {
            m.fields[key] = value;
        }
    }
    for (const char* key : {"format", "experiment", "config", "seed", "step", "loss", "adam_steps", "stopped", "rng", "end"})
        require(m.fields.count(key) > 0, "load_checkpoint",
                path.string() + " has no '" + key + "' line" + (std::string(key) == "end" ? " (the file is truncated)" : ""));
    require(m.fields["format"] == std::to_string(kCheckpointFormat), "load_checkpoint",
            path.string() + " has format " + m.fields["format"] + "; this build reads format " + std::to_string(kCheckpointFormat));
    return m;
}

// The folder a load reads: dir itself when it holds a manifest, else dir/latest.
fs::path checkpoint_folder(const std::string& dir) {
    if (fs::exists(fs::path(dir) / "manifest.txt")) return dir;
    const fs::path latest = fs::path(dir) / "latest";
    require(fs::exists(latest), "load_checkpoint", "no checkpoint in " + dir + " (neither manifest.txt nor latest)");
    return latest;
}

CheckpointInfo info_of(Manifest& m) {
    CheckpointInfo info;
    info.experiment = m.fields["experiment"], info.config = m.fields["config"];
    try {
        info.seed = std::stoull(m.fields["seed"]), info.step = std::stoi(m.fields["step"]), info.loss = std::stod(m.fields["loss"]);
        info.stopped = m.fields["stopped"] == "1";
    } catch (const std::exception&) {
        throw Error("load_checkpoint: manifest.txt has an unreadable seed, step or loss");
    }
    return info;
}

Mat read_tensor(const fs::path& path, std::size_t rows, std::size_t cols) {
    require(fs::exists(path), "load_checkpoint", path.string() + " is missing");
    Mat m = read_npy_mat(path.string(), rows, cols);
    require_finite(m.data(), m.size(), "load_checkpoint: " + path.string(), shape_str(m));
    return m;
}

}  // namespace

std::string save_checkpoint(const std::string& dir, const CheckpointInfo& info, const Parameters& params, const AdamW& opt,
                            const Rng& sampler) {
    const fs::path root(dir);
    std::error_code ec;
    fs::create_directories(root, ec);
    require(!ec && fs::is_directory(root), "save_checkpoint", "cannot create the folder " + dir + ": " + ec.message());
    // Never the folder `latest` names, even for the same step (a run started afresh in the same folder, or a
    // save repeated): removing it before the link moves would leave `latest` naming a half-deleted folder.
    std::string name = step_name(info.step);
    const fs::path latest_link = root / "latest";
    if (fs::is_symlink(latest_link) && fs::read_symlink(latest_link).filename().string() == name) name += "-again";
    const fs::path tmp = root / (name + ".tmp"), final_dir = root / name;
    fs::remove_all(tmp);
    fs::create_directory(tmp, ec);
    require(!ec, "save_checkpoint", "cannot create " + tmp.string() + ": " + ec.message());

    const auto& m = opt.first_moments();
    const auto& v = opt.second_moments();
    std::ostringstream man;
    man << "format: " << kCheckpointFormat << "\n";
    man << "experiment: " << no_newline(info.experiment, "the experiment's name") << "\n";
    man << "config: " << no_newline(info.config, "the configuration") << "\n";
    man << "seed: " << info.seed << "\nstep: " << info.step << "\n";
    char loss[40];
    std::snprintf(loss, sizeof loss, "%.17g", info.loss);
    man << "loss: " << loss << "\nadam_steps: " << opt.steps_taken() << "\nstopped: " << (info.stopped ? 1 : 0) << "\n";
    const Rng::State st = sampler.state();
    man << "rng: " << hex(st.s[0]) << " " << hex(st.s[1]) << " " << hex(st.s[2]) << " " << hex(st.s[3]) << " " << (st.has_spare ? 1 : 0)
        << " " << hex(bits_of(st.spare)) << "\n";
    std::size_t k = 0;
    for (const Param& p : params.all()) {
        require(p.name.find_first_of(" /\n") == std::string::npos, "save_checkpoint", "parameter name '" + p.name + "' has a space or a slash");
        man << "tensor: " << p.name << " " << p.value.shape(0) << " " << p.value.shape(1) << "\n";
        write_npy((tmp / (p.name + ".npy")).string(), p.value);
        write_npy((tmp / ("adam_m." + p.name + ".npy")).string(), m[k]);
        write_npy((tmp / ("adam_v." + p.name + ".npy")).string(), v[k]);
        ++k;
    }
    {
        std::ofstream h(tmp / "history.txt", std::ios::binary);
        char buf[64];
        for (double l : info.losses) std::snprintf(buf, sizeof buf, "loss %.17g\n", l), h << buf;
        for (const auto& [s, e] : info.evals) std::snprintf(buf, sizeof buf, "eval %d %.17g\n", s, e), h << buf;
        h.flush();
        require(static_cast<bool>(h), "save_checkpoint", "writing " + (tmp / "history.txt").string() + " failed");
    }
    man << "history: " << info.losses.size() << " losses, " << info.evals.size() << " evaluations\n";
    man << "end: " << k << " tensors\n";  // written last: a manifest without it was cut short
    {
        std::ofstream f(tmp / "manifest.txt", std::ios::binary);
        f << man.str();
        f.flush();
        require(static_cast<bool>(f), "save_checkpoint", "writing " + (tmp / "manifest.txt").string() + " failed");
    }
    // Into place: the folder first, then the link. Killed before the link moves, `latest` still names the
    // previous, complete checkpoint.
    fs::remove_all(final_dir);
    fs::rename(tmp, final_dir, ec);
    require(!ec, "save_checkpoint", "cannot rename " + tmp.string() + " to " + final_dir.string() + ": " + ec.message());
    const fs::path link_tmp = root / "latest.tmp";
    fs::remove(link_tmp);
    fs::create_directory_symlink(name, link_tmp, ec);
    require(!ec, "save_checkpoint", "cannot create the link " + link_tmp.string() + ": " + ec.message());
    fs::rename(link_tmp, root / "latest", ec);  // rename(2) replaces the old link atomically
    require(!ec, "save_checkpoint", "cannot point " + (root / "latest").string() + " at " + name + ": " + ec.message());
    // Keep the two newest complete checkpoints; remove older ones and leftovers of interrupted saves.
    std::vector<fs::path> steps;
    for (const auto& e : fs::directory_iterator(root)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("step-", 0) != 0) continue;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0) {
            fs::remove_all(e.path());
            continue;
        }
        steps.push_back(e.path());
    }
    std::sort(steps.begin(), steps.end());
    for (std::size_t i = 0; i + 2 < steps.size(); ++i)
        if (steps[i] != final_dir) fs::remove_all(steps[i]);
    return final_dir.string();
}

CheckpointInfo read_checkpoint_info(const std::string& dir) {
    Manifest m = read_manifest(checkpoint_folder(dir));
    return info_of(m);
}

CheckpointInfo load_checkpoint(const std::string& dir, const std::string& expected_config, Parameters& params, AdamW& opt,
                               Rng& sampler) {
    const fs::path folder = checkpoint_folder(dir);
    Manifest m = read_manifest(folder);
    const CheckpointInfo info = info_of(m);
    require(info.config == expected_config, "load_checkpoint",
            (folder / "manifest.txt").string() + " is for another model:\n  checkpoint: " + info.config + "\n  this run:   " + expected_config);
    // Every parameter, in order, with its shape; nothing extra.
    auto& all = params.all();
    require(m.tensors.size() == all.size(), "load_checkpoint",
            (folder / "manifest.txt").string() + " lists " + std::to_string(m.tensors.size()) + " tensors; the model has " +
                std::to_string(all.size()));
    std::vector<Mat> values, ms, vs;
    std::size_t k = 0;
    for (const Param& p : all) {
        const auto& [name, shape] = m.tensors[k++];
        require(name == p.name, "load_checkpoint",
                (folder / "manifest.txt").string() + ": tensor " + std::to_string(k - 1) + " is '" + name + "', the model's is '" + p.name + "'");
        require(shape.first == p.value.shape(0) && shape.second == p.value.shape(1), "load_checkpoint",
                name + " has shape (" + std::to_string(shape.first) + ", " + std::to_string(shape.second) + ") in the checkpoint, " +
                    shape_str(p.value) + " in the model");
        values.push_back(read_tensor(folder / (name + ".npy"), shape.first, shape.second));
        ms.push_back(read_tensor(folder / ("adam_m." + name + ".npy"), shape.first, shape.second));
        vs.push_back(read_tensor(folder / ("adam_v." + name + ".npy"), shape.first, shape.second));
    }
    Rng::State st{};
    {
        std::istringstream rs(m.fields["rng"]);
        std::string w[6];
        for (auto& x : w) require(static_cast<bool>(rs >> x), "load_checkpoint", (folder / "manifest.txt").string() + ": unreadable rng line");
        try {
            for (int i = 0; i < 4; ++i) st.s[i] = std::stoull(w[i], nullptr, 16);
            st.has_spare = w[4] == "1";
            st.spare = double_of(std::stoull(w[5], nullptr, 16));
        } catch (const std::exception&) {
            throw Error("load_checkpoint: " + (folder / "manifest.txt").string() + ": unreadable rng line");
        }
    }
    int adam_steps = 0;
    try {
        adam_steps = std::stoi(m.fields["adam_steps"]);
    } catch (const std::exception&) {
        throw Error("load_checkpoint: " + (folder / "manifest.txt").string() + ": unreadable adam_steps");
    }
    CheckpointInfo full = info;
    {
        std::ifstream h(folder / "history.txt");
        require(static_cast<bool>(h), "load_checkpoint", (folder / "history.txt").string() + " is missing");
        std::string kind;
        while (h >> kind) {
            if (kind == "loss") {
                double l;
                require(static_cast<bool>(h >> l), "load_checkpoint", (folder / "history.txt").string() + ": unreadable loss");
                full.losses.push_back(l);
            } else if (kind == "eval") {
                int s;
                double e;
                require(static_cast<bool>(h >> s >> e), "load_checkpoint", (folder / "history.txt").string() + ": unreadable evaluation");
                full.evals.emplace_back(s, e);
            } else {
                throw Error("load_checkpoint: " + (folder / "history.txt").string() + ": unknown entry '" + kind + "'");
            }
        }
        require(full.losses.size() == static_cast<std::size_t>(info.step), "load_checkpoint",
                (folder / "history.txt").string() + " holds " + std::to_string(full.losses.size()) + " losses for " +
                    std::to_string(info.step) + " steps (truncated?)");
    }
    // Everything read and checked: now change the model, the optimizer and the sampler.
    k = 0;
    for (Param& p : all) p.value = values[k++];
    opt.restore(adam_steps, std::move(ms), std::move(vs));
    sampler.set_state(st);
    return full;
}

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop.store(true); }
using Handler = void (*)(int);
Handler g_previous = SIG_DFL;
int g_depth = 0;
std::mutex g_depth_mutex;  // runs side by side (core/side_by_side.hpp) each hold a StopRequest
}  // namespace

StopRequest::StopRequest() {
    std::lock_guard<std::mutex> lock(g_depth_mutex);
    if (g_depth++ == 0) {
        g_stop.store(false);
        g_previous = std::signal(SIGINT, on_sigint);
    }
}
StopRequest::~StopRequest() {
    std::lock_guard<std::mutex> lock(g_depth_mutex);
    if (--g_depth == 0) std::signal(SIGINT, g_previous);
}
bool StopRequest::requested() { return g_stop.load(); }
void StopRequest::request() { g_stop.store(true); }
void StopRequest::clear() { g_stop.store(false); }

}  // namespace attn
