#include "chapters/12_language_model/judge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "chapters/12_language_model/claims.hpp"
#include "chapters/12_language_model/report.hpp"
#include "core/error.hpp"
#include "math/stats.hpp"
#include "report/table.hpp"

namespace attn::sec12 {

namespace {

// The lines each experiment's report starts with (report.cpp).
const char* const kLadder = "The ladder (Sections 9.1-9.5)";
const char* const kScale = "Dropping the division by sqrt(d_k)";
const char* const kNorm = "Pre-norm and post-norm (Section 9.5)";
const char* const kPositions = "Four ways to put positions in (Section 9.6)";
const char* const kDepth = "One block against two (Section 9.8)";

std::string trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// A table row's cells: the text between runs of two spaces or more.
std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        if (i >= line.size()) break;
        std::size_t j = i;
        while (j < line.size() && !(line[j] == ' ' && j + 1 < line.size() && line[j + 1] == ' ')) ++j;
        out.push_back(trim(line.substr(i, j - i)));
        i = j;
    }
    return out;
}

// "34,456" → 34456, "-" → NaN; false when the text is not a number.
bool number(std::string t, double& x) {
    t.erase(std::remove(t.begin(), t.end(), ','), t.end());
    if (t == "-") return x = kNoSize, true;
    std::istringstream in(t);
    return static_cast<bool>(in >> x) && in.peek() == std::char_traits<char>::eof();
}

// Where a table could not be read: the file, the line and what was expected.
[[noreturn]] void unreadable(const RunFile& f, std::size_t line, const std::string& what) {
    throw Error("12_language_model --judge: " + f.path + ", line " + std::to_string(line + 1) + ": " + what);
}

// The numbers of a row after its name (its first cell); a cell "perplexity 49.82" gives its last word.
std::vector<double> numbers_after_name(const RunFile& f, std::size_t line) {
    const std::vector<std::string> c = cells(f.lines.at(line));
    std::vector<double> out;
    for (std::size_t k = 1; k < c.size(); ++k) {
        const std::size_t sp = c[k].rfind(' ');
        double x = 0;
        if (!number(sp == std::string::npos ? c[k] : c[k].substr(sp + 1), x)) unreadable(f, line, "'" + c[k] + "' is not a number");
        out.push_back(x);
    }
    return out;
}

// The first line at or after `from` that contains `text`.
std::size_t find_line(const RunFile& f, const std::string& text, std::size_t from, const std::string& what) {
    for (std::size_t i = from; i < f.lines.size(); ++i)
        if (f.lines[i].find(text) != std::string::npos) return i;
    unreadable(f, from, "no " + what + " (a line with \"" + text + "\") after it");
}

// The rows under a table's header: each line after it until a line that does not start with two spaces and a name,
// or a blank one; at least `n` of them.
std::vector<std::size_t> rows_after(const RunFile& f, std::size_t header, std::size_t n, const std::string& what) {
    std::vector<std::size_t> rows;
    for (std::size_t i = header + 1; i < f.lines.size() && rows.size() < n; ++i) {
        if (trim(f.lines[i]).empty()) break;
        rows.push_back(i);
    }
    if (rows.size() < n) unreadable(f, header, what + ": " + std::to_string(n) + " rows expected under this header, found " + std::to_string(rows.size()));
    return rows;
}

// The integer after `key` in text ("width 128" → 128); -1 when absent.
long long int_after(const std::string& text, const std::string& key) {
    const std::size_t at = text.find(key);
    if (at == std::string::npos) return -1;
    std::istringstream in(text.substr(at + key.size()));
    long long v = -1;
    in >> v;
    return v;
}

// The training part of a setup line: "width 128, …, gradient clipping at 1.0", before "; perplexity on …".
std::string training_part(const std::string& setup) { return setup.substr(0, setup.find(';')); }

// One experiment's report in one file: where it starts and the setup line under its header.
struct Found {
    const RunFile* file = nullptr;
    std::size_t header = 0;
    std::string setup;  // "width 128, context 128, …; perplexity on …"
    std::string seeds = {};  // where the file holds several seeds: "0-2" (else its Command's --seed)
};

std::string corpus_words(const RunFile& f) {
    for (const std::string& l : f.lines)
        if (starts_with(l, "Corpus: ")) {
            const std::string rest = l.substr(8);
            return rest.substr(0, rest.find(',')) + ", " + (l.find("byte-level BPE") != std::string::npos ? "BPE" : "bytes");
        }
    unreadable(f, 0, "no \"Corpus: \" line");
}

// "(committed run docs/runs/x.txt, seed 0, judged from its tables by today's rule: the chapter's setup: …)", with a
// departure from today's --full setup named beside it.
std::string label(const std::vector<Found>& runs, const std::string& today_training) {
    std::string files, setups;
    std::set<std::string> distinct;
    for (const Found& r : runs) distinct.insert(r.setup);
    for (std::size_t k = 0; k < runs.size(); ++k) {
        files += (k ? ", " : "") + runs[k].file->path + (runs[k].seeds.empty() ? " (seed " + std::to_string(runs[k].file->seed) + ")" : " (seeds " + runs[k].seeds + ")");
        if (distinct.size() > 1) setups += std::string(k ? "; " : "") + "seed " + std::to_string(runs[k].file->seed) + ": " + runs[k].setup;
    }
    if (distinct.size() == 1) setups = runs.front().setup;
    std::string departs;
    for (const Found& r : runs)
        if (training_part(r.setup) != today_training) departs = "; NOT today's --full setup, which trains at " + today_training;
    return "(committed run" + std::string(runs.size() > 1 ? "s " : " ") + files + ", judged from the tables " + (runs.size() > 1 ? "they" : "it") + " printed by today's rule: " +
           corpus_words(*runs.front().file) + ", " + setups + departs + ")";
}

std::vector<Found> find_all(const std::vector<RunFile>& runs, const char* header) {
    std::vector<Found> out;
    for (const RunFile& f : runs)
        for (std::size_t i = 0; i < f.lines.size(); ++i)
            if (starts_with(f.lines[i], header)) {
                if (i + 1 >= f.lines.size()) unreadable(f, i, "no setup line under the header");
                out.push_back({&f, i, trim(f.lines[i + 1])});
                break;
            }
    return out;
}

std::string today(const std::string& experiment) { return training_line(lm_setup(experiment, LmSize::full)); }

// --- the ladder: its nine rungs' perplexities at each seed -----------------------------------------------
struct LadderFile {
    std::uint64_t seed = 0;
    std::vector<double> perplexity;
    std::size_t d_model = 0, n_heads = 0, extra = 0;
};
// The ladder of one file at each of its seeds: the table's, and where the run had --seeds N, the "Held-out
// perplexity at each seed" table under it (a column a seed).
std::vector<LadderFile> read_ladder(const Found& at) {
    const RunFile& f = *at.file;
    const std::size_t header = find_line(f, "held-out ppl", at.header, "ladder table");
    const std::vector<std::size_t> rows = rows_after(f, header, Rung::count, "the ladder");
    LadderFile l;
    std::vector<double> params;
    for (std::size_t row : rows) {
        const std::vector<double> n = numbers_after_name(f, row);
        if (n.size() < 2) unreadable(f, row, "a rung needs its parameters and its perplexity");
        params.push_back(n[0]), l.perplexity.push_back(n[1]);
    }
    double heads = 0;  // the several-heads rung is named by its count ("4 heads")
    const std::string heads_name = cells(f.lines[rows[Rung::heads]]).front();
    if (!number(heads_name.substr(0, heads_name.find(' ')), heads)) unreadable(f, rows[Rung::heads], "the rung \"<h> heads\" expected");
    l.n_heads = static_cast<std::size_t>(heads);
    l.d_model = static_cast<std::size_t>(std::max(0LL, int_after(at.setup, "width ")));
    l.extra = static_cast<std::size_t>(params[Rung::heads] - params[Rung::added]);
    l.seed = f.seed;
    std::vector<LadderFile> out = {l};
    for (std::size_t i = rows.back() + 1; i < f.lines.size() && !starts_with(trim(f.lines[i]), "What each rung writes"); ++i) {
        if (trim(f.lines[i]) != "Held-out perplexity at each seed:") continue;
        const std::vector<std::string> head = cells(f.lines.at(i + 1));
        const std::vector<std::size_t> seed_rows = rows_after(f, i + 1, Rung::count, "the ladder at each seed");
        out.clear();
        for (std::size_t k = 1; k < head.size(); ++k) {
            LadderFile at_seed = l;
            at_seed.seed = static_cast<std::uint64_t>(std::max(0LL, int_after(head[k], "seed ")));
            at_seed.perplexity.clear();
            for (std::size_t row : seed_rows) {
                const std::vector<double> n = numbers_after_name(f, row);
                if (n.size() != head.size() - 1) unreadable(f, row, std::to_string(head.size() - 1) + " seeds' perplexities expected");
                at_seed.perplexity.push_back(n[k - 1]);
            }
            out.push_back(at_seed);
        }
        break;
    }
    return out;
}

// The rung pairs add_ladder_claims compares, each a ratio of two perplexities (claims.cpp).
const std::pair<std::size_t, std::size_t> kComparedPairs[] = {
    {Rung::uniform, Rung::base},  {Rung::uniform, Rung::positions}, {Rung::residual, Rung::base}, {Rung::residual, Rung::added},
    {Rung::added, Rung::heads},   {Rung::replacing, Rung::added},   {Rung::heads, Rung::ffn},     {Rung::ffn, Rung::layernorm}};

std::vector<std::pair<Found, LadderFile>> ladders(const std::vector<RunFile>& runs) {
    std::vector<std::pair<Found, LadderFile>> out;
    for (const Found& at : find_all(runs, kLadder))
        for (const LadderFile& l : read_ladder(at)) out.emplace_back(at, l);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.seed < b.second.seed; });
    for (std::size_t k = 1; k < out.size(); ++k)
        if (out[k].second.seed == out[k - 1].second.seed)  // (a GPU's run of a seed trains other bits than a CPU's: judge one of them)
            throw Error("12_language_model --judge: " + out[k - 1].first.file->path + " and " + out[k].first.file->path + " both hold the ladder at seed " +
                        std::to_string(out[k].second.seed) + ": judge a folder with one run of each seed");
    // One spread, one setup: seeds trained or scored otherwise (other held-out windows) are not reruns of each other.
    for (std::size_t k = 1; k < out.size(); ++k)
        if (out[k].first.setup != out[0].first.setup)
            throw Error("12_language_model --judge: " + out[0].first.file->path + " and " + out[k].first.file->path +
                        " hold the ladder at different setups (\"" + out[0].first.setup + "\" against \"" + out[k].first.setup +
                        "\"): seeds are pooled at one setup only (--resume DIR --steps 0 --eval-windows N scores saved models again)");
    return out;
}

// The pooled sd: the root of the mean over the pairs of each pair's sample variance over seeds (attn::spread_of).
LadderSpread pooled_spread(const std::vector<std::pair<Found, LadderFile>>& l) {
    LadderSpread s;
    s.seeds = static_cast<int>(l.size());
    for (const auto& [at, _] : l) s.files.push_back(at.file->path);
    if (l.size() < 2) return s;
    double var = 0;
    for (const auto& [a, b] : kComparedPairs) {
        std::vector<double> x;
        for (const auto& [_, f] : l) x.push_back(std::log(f.perplexity[a] / f.perplexity[b]));
        const double sd = spread_of(x).std;
        var += sd * sd;
    }
    s.log_ratio_sd = std::sqrt(var / static_cast<double>(std::size(kComparedPairs)));
    return s;
}

}  // namespace

std::vector<RunFile> read_run_files(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error("12_language_model --judge: " + dir + " is not a directory (give the folder of committed runs, docs/runs)");
    std::vector<std::string> paths;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".txt" && e.path().filename().string().find("-full-") != std::string::npos)
            paths.push_back((fs::path(dir) / e.path().filename()).generic_string());
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) throw Error("12_language_model --judge: " + dir + " holds no run (<experiment>-full-<device>*.txt)");
    std::vector<RunFile> runs;
    for (const std::string& p : paths) {
        std::ifstream in(p);
        if (!in) throw Error("12_language_model --judge: cannot read " + p);
        RunFile f{.path = p, .seed = 0, .lines = {}};
        for (std::string line; std::getline(in, line);) f.lines.push_back(line);
        if (!f.lines.empty() && starts_with(f.lines[0], "Command: ")) {
            const long long s = int_after(f.lines[0], "--seed ");
            if (s >= 0) f.seed = static_cast<std::uint64_t>(s);
        }
        runs.push_back(std::move(f));
    }
    return runs;
}

LadderSpread ladder_spread(const std::vector<RunFile>& runs) { return pooled_spread(ladders(runs)); }

void judge_runs(std::ostream& os, const std::vector<RunFile>& runs, ClaimReport& claims) {
    const auto l = ladders(runs);
    const LadderSpread spread = pooled_spread(l);
    const Borrowed lent = ladder_borrowed(spread.seeds, spread.log_ratio_sd);
    os << "The committed runs at the chapter's setup, judged again by today's rule from the tables they printed\n";
    for (const RunFile& f : runs) {
        std::string what;
        for (const char* h : {kLadder, kScale, kNorm, kPositions, kDepth})
            for (const std::string& line : f.lines)
                if (starts_with(line, h)) what += std::string(what.empty() ? "" : ", ") + h;
        os << "  " << f.path << " (seed " << f.seed << "): " << (what.empty() ? "no experiment's table: not judged" : what) << "\n";
    }
    if (spread.seeds >= 2)
        os << "  The spread a run of one seed is judged by: " << lent.source << " (claims.hpp holds it as " << fmt(100 * kFullLogRatioSd, 2)
           << " % over " << kFullSpreadSeeds << " seeds)\n";
    else
        os << "  Only " << spread.seeds << " ladder seed" << (spread.seeds == 1 ? "" : "s") << ": no spread is measured, and a run of one seed decides nothing\n";
    os << "\n";

    // The ladder, over its seeds together: their own spread (one seed alone decides nothing).
    if (!l.empty()) {
        LadderResults r{.seeds = {}, .perplexity = {}, .d_model = l.front().second.d_model, .n_heads = l.front().second.n_heads,
                        .extra_params = l.front().second.extra, .setup = "", .spread = {}};
        std::vector<Found> found;
        std::map<const RunFile*, std::vector<std::uint64_t>> seeds_of;
        for (const auto& [at, f] : l) {
            r.seeds.push_back(f.seed), r.perplexity.push_back(f.perplexity);
            if (seeds_of[at.file].empty()) found.push_back(at);
            seeds_of[at.file].push_back(f.seed);
        }
        for (Found& at : found)
            if (seeds_of[at.file].size() > 1)
                at.seeds = std::to_string(seeds_of[at.file].front()) + "-" + std::to_string(seeds_of[at.file].back());
        r.setup = label(found, today("ladder"));
        add_ladder_claims(claims, r);
    }
    // The √d_k ablation: d_k, heads, both perplexities; then each run's score statistics.
    for (const Found& at : find_all(runs, kScale)) {
        const RunFile& f = *at.file;
        std::vector<ScaleRun> runs_here;
        const std::size_t costs = find_line(f, "ppl / sqrt(d_k)", at.header, "table of costs");
        const std::size_t stats = find_line(f, "score std init", costs, "table of score statistics");
        std::map<std::pair<long long, bool>, ScoreStats> end, init;
        for (std::size_t row = stats + 1; row < f.lines.size() && !trim(f.lines[row]).empty() && cells(f.lines[row]).size() == 6; ++row) {
            const std::vector<std::string> c = cells(f.lines[row]);
            double v[4] = {}, dk = 0;
            if (!number(c[0], dk)) unreadable(f, row, "a d_k expected, got '" + c[0] + "'");
            for (int k = 0; k < 4; ++k)
                if (!number(c[2 + k], v[k])) unreadable(f, row, "'" + c[2 + k] + "' is not a number");
            const std::pair<long long, bool> key{static_cast<long long>(dk), c[1] == "/ sqrt"};
            init[key] = {.score_std = v[0], .entropy = 0, .one_hot = 0};
            end[key] = {.score_std = v[1], .entropy = v[2], .one_hot = v[3]};
        }
        for (std::size_t row = costs + 1; row < f.lines.size() && !trim(f.lines[row]).empty(); ++row) {
            const std::vector<std::string> c = cells(f.lines[row]);
            double n[4] = {};
            if (c.size() != 5) break;
            for (int k = 0; k < 4; ++k)
                if (!number(c[k], n[k])) unreadable(f, row, "'" + c[k] + "' is not a number");
            for (bool scaled : {true, false}) {
                const std::pair<long long, bool> key{static_cast<long long>(n[0]), scaled};
                if (!end.count(key)) unreadable(f, row, "no score statistics for d_k " + c[0] + (scaled ? " / sqrt" : " without"));
                ScaleRun s{.d_k = static_cast<std::size_t>(n[0]), .n_heads = static_cast<std::size_t>(n[1]), .scaled = scaled, .run = {},
                           .init = init[key], .end = end[key]};
                s.run.heldout.perplexity = scaled ? n[2] : n[3];
                runs_here.push_back(s);
            }
        }
        if (runs_here.size() < 4) unreadable(f, costs, "the ablation needs the small d_k and a large one");
        // the claim's setup is the large heads' ("the large d_k: one head, no normalisation before the projections, width …")
        const std::size_t large_row = find_line(f, "the large d_k: ", at.header, "large-d_k setup");
        const std::string& large = f.lines[large_row];
        if (large.find("width ") == std::string::npos) unreadable(f, large_row, "the large heads' setup (width …) expected");
        Found big = at;
        big.setup = trim(large.substr(large.find("width ")));
        add_scale_claim(claims, {scale_figures(runs_here)}, {f.seed}, label({big}, today("scale")), lent);
    }
    // Pre-norm and post-norm: the four runs' perplexities, each the first number after its name.
    for (const Found& at : find_all(runs, kNorm)) {
        const RunFile& f = *at.file;
        sec08::WarmupVerdict v;
        int found = 0;
        for (std::size_t row = at.header + 1; row < f.lines.size() && found < 4; ++row) {
            const std::string t = trim(f.lines[row]);
            const bool pre = starts_with(t, "pre-norm,"), post = starts_with(t, "post-norm,");
            if (!pre && !post) continue;
            const std::vector<double> n = numbers_after_name(f, row);
            if (n.empty()) unreadable(f, row, "a run's perplexity expected");
            const bool warm = t.find("no warmup") == std::string::npos;
            (pre ? (warm ? v.pre_warmup : v.pre) : (warm ? v.post_warmup : v.post)) = n[0];
            ++found;
        }
        if (found < 4) unreadable(f, at.header, "the four runs (pre-norm and post-norm, with and without warmup) expected");
        const long long layers = int_after(f.lines[at.header], "): ");
        add_norm_claim(claims, {v}, {f.seed}, label({at}, today("norm")), static_cast<std::size_t>(std::max(0LL, layers)), lent);
    }
    // Positions: each kind's perplexity at 1x, 2x and 4x its window.
    for (const Found& at : find_all(runs, kPositions)) {
        const RunFile& f = *at.file;
        const std::size_t header = find_line(f, "ppl at ", at.header, "table of perplexities");
        std::vector<std::size_t> lengths;
        for (const std::string& c : cells(f.lines[header]))
            if (starts_with(c, "ppl at ")) lengths.push_back(static_cast<std::size_t>(std::stoll(c.substr(7))));
        std::vector<PositionRun> p;
        for (std::size_t row : rows_after(f, header, 4, "the four position schemes")) {
            const std::vector<double> n = numbers_after_name(f, row);
            if (n.size() != lengths.size()) unreadable(f, row, std::to_string(lengths.size()) + " perplexities expected");
            PositionRun r;
            r.run.name = cells(f.lines[row]).front();
            r.lengths = lengths;
            for (double x : n) r.at.push_back(Evaluation{}), r.at.back().perplexity = x;
            p.push_back(r);
        }
        add_positions_claim(claims, {p}, {f.seed}, label({at}, today("positions")), lent);
    }
    // One block and two: the training and held-out perplexities, and how often each training token was seen.
    for (const Found& at : find_all(runs, kDepth)) {
        const RunFile& f = *at.file;
        const std::size_t header = find_line(f, "train ppl", at.header, "table of perplexities");
        const bool with_bpc = f.lines[header].find("bits/char") != std::string::npos;  // later runs print bits per character beside each
        const std::vector<std::size_t> rows = rows_after(f, header, 2, "one block and two");
        DepthPair d;
        DepthRun* pair[2] = {&d.one, &d.two};
        for (int k = 0; k < 2; ++k) {
            const std::vector<double> n = numbers_after_name(f, rows[static_cast<std::size_t>(k)]);
            if (n.size() < (with_bpc ? 4u : 3u)) unreadable(f, rows[static_cast<std::size_t>(k)], "parameters, train and held-out perplexity expected");
            pair[k]->blocks = static_cast<std::size_t>(k + 1);
            pair[k]->train.perplexity = n[1];
            pair[k]->run.heldout.perplexity = with_bpc ? n[3] : n[2];
        }
        const std::size_t seen = find_line(f, "each training token is seen about ", at.header, "passes line");
        const std::string& s = f.lines[seen];
        const double passes = std::stod(s.substr(s.find("about ") + 6));
        // A run of --seeds N prints every seed's four perplexities under "Perplexity at each seed (train /
        // held-out):": seed, one block's train and held-out, two blocks' train and held-out, a row a seed.
        std::vector<DepthPair> per_seed = {d};
        std::vector<std::uint64_t> seeds = {f.seed};
        Found labelled = at;
        for (std::size_t i = rows.back() + 1; i < f.lines.size() && !starts_with(trim(f.lines[i]), "Claims recomputed"); ++i) {
            if (trim(f.lines[i]) != "Perplexity at each seed (train / held-out):") continue;
            per_seed.clear(), seeds.clear();
            for (std::size_t r = i + 2; r < f.lines.size() && !trim(f.lines[r]).empty(); ++r) {
                const std::vector<std::string> c = cells(f.lines[r]);
                double seed = 0;
                if (c.empty() || !number(c.front(), seed)) break;
                const std::vector<double> n = numbers_after_name(f, r);
                if (n.size() != 4) unreadable(f, r, "a seed's one-block and two-block train and held-out perplexities expected");
                DepthPair at_seed = d;
                at_seed.one.train.perplexity = n[0], at_seed.one.run.heldout.perplexity = n[1];
                at_seed.two.train.perplexity = n[2], at_seed.two.run.heldout.perplexity = n[3];
                per_seed.push_back(at_seed), seeds.push_back(static_cast<std::uint64_t>(seed));
            }
            if (per_seed.empty()) unreadable(f, i, "no seed's row under this header");
            labelled.seeds = std::to_string(seeds.front()) + "-" + std::to_string(seeds.back());
            break;
        }
        add_depth_claim(claims, per_seed, seeds, passes, label({labelled}, today("depth")), lent);
    }
}

}  // namespace attn::sec12
