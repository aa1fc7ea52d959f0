#include "report/explorer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numeric>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/format.hpp"
#include "reference/model.hpp"
#include "train/engine.hpp"

namespace attn::explorer {

namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::uint8_t>& bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t n = static_cast<std::uint32_t>(bytes[i]) << 16 | (i + 1 < bytes.size() ? bytes[i + 1] << 8 : 0) |
                                (i + 2 < bytes.size() ? bytes[i + 2] : 0);
        out += kBase64[n >> 18 & 63];
        out += kBase64[n >> 12 & 63];
        out += i + 1 < bytes.size() ? kBase64[n >> 6 & 63] : '=';
        out += i + 2 < bytes.size() ? kBase64[n & 63] : '=';
    }
    return out;
}

std::vector<std::uint8_t> unbase64(const std::string& s) {
    require(s.size() % 4 == 0, "explorer::unpack_weights", "a base64 string of " + std::to_string(s.size()) + " characters (not a multiple of 4)");
    std::array<int, 256> value{};
    value.fill(-1);
    for (int i = 0; i < 64; ++i) value[static_cast<unsigned char>(kBase64[i])] = i;
    std::vector<std::uint8_t> out;
    for (std::size_t i = 0; i < s.size(); i += 4) {
        std::uint32_t n = 0;
        int pad = 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const char c = s[i + k];
            if (c == '=' && i + 4 == s.size() && k >= 2) {
                ++pad, n <<= 6;
                continue;
            }
            const int v = value[static_cast<unsigned char>(c)];
            require(v >= 0 && pad == 0, "explorer::unpack_weights", "'" + std::string(1, c) + "' is not base64");
            n = n << 6 | static_cast<std::uint32_t>(v);
        }
        out.push_back(static_cast<std::uint8_t>(n >> 16));
        if (pad < 2) out.push_back(static_cast<std::uint8_t>(n >> 8 & 255));
        if (pad < 1) out.push_back(static_cast<std::uint8_t>(n & 255));
    }
    return out;
}

double rounded(double x, double places) { return std::round(x * places) / places; }  // 2.345, not 2.3450000000000002

// The page's script and style: what it draws and how it checks itself.
const char* const kPage = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 1.5em auto; max-width: 64em; padding: 0 1em; color: #222; }
h1 { font-size: 1.35em; margin: 0 0 .2em; }
.sub { color: #555; margin: 0 0 1em; }
.controls { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: center; margin: .6em 0; }
select { font: inherit; padding: .1em .3em; }
#wrap { position: relative; border: 1px solid #ddd; border-radius: 6px; padding: 2.2em 1em 1em; background: #fff; }
#lines { position: absolute; left: 0; top: 0; pointer-events: none; overflow: visible; }
#text { font: 16px/2.4 ui-monospace, "DejaVu Sans Mono", monospace; white-space: pre-wrap; word-break: break-all; }
.tok { border-right: 1px solid #e4e4e4; cursor: pointer; border-radius: 2px; }
.tok.query { outline: 2px solid #1565c0; }
#panel { margin: .8em 0; min-height: 7.5em; background: #f7f7f9; border-radius: 6px; padding: .6em 1em; }
#panel table { border-collapse: collapse; }
#panel td { padding: 0 .8em 0 0; }
.t { font-family: ui-monospace, "DejaVu Sans Mono", monospace; background: #eef; padding: 0 .2em; white-space: pre; }
.legend { display: flex; align-items: center; gap: .5em; color: #555; font-size: .9em; }
.bar { width: 12em; height: .8em; background: linear-gradient(to right, rgba(214,39,40,0), rgba(214,39,40,.85)); border: 1px solid #ccc; }
#selfcheck { color: #555; font-size: .85em; white-space: pre-wrap; }
</style></head><body>
<h1>@TITLE@</h1>
<p class="sub">@SUBTITLE@</p>
<div class="controls">
  <label>passage <select id="passage"></select></label>
  <label>model <select id="model"></select></label>
  <label>head <select id="head"></select></label>
  <span class="legend">surprise at each token: 0 <span class="bar"></span> 8 nats or more</span>
</div>
<p class="sub">Point at a token to see where the chosen head looks from there, and what the model expected next; click to
keep it. Lines go to the tokens the head attends to, thicker for more weight.</p>
<div id="wrap"><svg id="lines"></svg><div id="text"></div></div>
<div id="panel"></div>
<pre id="selfcheck">self-check: not run (the page's script did not run)</pre>
<script id="data" type="application/json">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const T = D.T;
const cache = new Map();
function weights(m, p, h) {  // (T·T) row-major, zeros above the diagonal for a causal model
  const key = m + "/" + p + "/" + h;
  if (!cache.has(key)) {
    const bin = atob(D.models[m].readings[p].w[h]);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
    const f = new Float32Array(bytes.buffer);
    const W = new Float32Array(T * T);
    let k = 0;
    for (let i = 0; i < T; ++i) for (let j = 0; j < (D.causal ? i + 1 : T); ++j) W[i * T + j] = f[k++];
    if (k !== f.length) throw new Error("model " + m + ", passage " + p + ", head " + h + ": " + f.length + " weights for T = " + T);
    cache.set(key, W);
  }
  return cache.get(key);
}
const piece = id => D.pieces[id] ?? "?";
const shown = s => s.replace(/\n/g, "\u21b5\n").replace(/\t/g, "\u21e5");
const quoted = s => '<span class="t">' + s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\n/g, "\u21b5").replace(/ /g, "\u2423") + "</span>";
const state = { p: 0, m: D.models.length - 1, h: 0, pinned: -1 };
const sel = id => document.getElementById(id);
function options(select, names, value) {
  select.innerHTML = "";
  names.forEach((n, i) => { const o = document.createElement("option"); o.value = i; o.textContent = n; select.appendChild(o); });
  select.value = value;
}
function renderText() {
  const R = D.models[state.m].readings[state.p], toks = D.passages[state.p].tokens, box = sel("text");
  box.innerHTML = "";
  toks.forEach((id, j) => {
    const s = document.createElement("span");
    s.className = "tok";
    s.dataset.j = j;
    s.textContent = shown(piece(id));
    if (j >= 1) {
      const a = Math.min(1, R.loss[j - 1] / 8) * 0.85;
      s.style.background = "rgba(214,39,40," + a.toFixed(3) + ")";
      s.title = "surprise " + R.loss[j - 1].toFixed(2) + " nats";
    }
    if (j < T) {
      s.addEventListener("mouseenter", () => { if (state.pinned < 0) draw(j); });
      s.addEventListener("click", () => { state.pinned = state.pinned === j ? -1 : j; draw(j); });
    }
    if (j > 0 && D.between) box.appendChild(document.createTextNode(D.between));
    box.appendChild(s);
  });
  draw(state.pinned >= 0 ? state.pinned : D.focus);
}
function draw(i) {  // query i: lines to the keys it weighs, the panel
  const W = weights(state.m, state.p, state.h), wrap = sel("wrap"), svg = sel("lines"), spans = sel("text").querySelectorAll(".tok");
  const base = wrap.getBoundingClientRect();
  svg.setAttribute("width", base.width); svg.setAttribute("height", base.height);
  svg.innerHTML = "";
  for (const s of spans) { s.classList.remove("query"); s.style.boxShadow = ""; }
  const at = k => { const r = spans[k].getBoundingClientRect(); return [r.left + r.width / 2 - base.left, r.top - base.top + 6]; };
  const [xi, yi] = at(i);
  spans[i].classList.add("query");
  const keys = [];
  for (let j = 0; j < T; ++j) if (W[i * T + j] > 0) keys.push(j);
  keys.sort((a, b) => W[i * T + b] - W[i * T + a]);
  for (const j of keys) {
    const w = W[i * T + j];
    if (w < 0.02) continue;
    spans[j].style.boxShadow = "0 0 0 " + (1 + 3 * w).toFixed(1) + "px rgba(21,101,192," + (0.25 + 0.75 * w).toFixed(2) + ")";
    if (j === i) continue;
    const [xj, yj] = at(j), lift = 18 + Math.min(60, Math.abs(xi - xj) * 0.12 + Math.abs(yi - yj) * 0.3);
    const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
    path.setAttribute("d", "M" + xi + " " + yi + " Q" + (xi + xj) / 2 + " " + (Math.min(yi, yj) - lift) + " " + xj + " " + yj);
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "rgb(21,101,192)");
    path.setAttribute("stroke-opacity", (0.2 + 0.8 * w).toFixed(2));
    path.setAttribute("stroke-width", (0.8 + 6 * w).toFixed(2));
    path.dataset.key = j;
    svg.appendChild(path);
  }
  const R = D.models[state.m].readings[state.p], toks = D.passages[state.p].tokens, came = toks[i + 1];
  const mean = R.loss.reduce((a, b) => a + b, 0) / T;
  const look = keys.slice(0, 6).map(j => "<tr><td>" + quoted(piece(toks[j])) + "</td><td>token " + j + "</td><td>" + W[i * T + j].toFixed(3) + "</td></tr>").join("");
  const guesses = R.top[i].map(([id, p]) => quoted(piece(id)) + " " + p.toFixed(3)).join(" &nbsp; ");
  sel("panel").innerHTML = "<b>" + quoted(piece(toks[i])) + "</b> (token " + i + ") &mdash; head " + state.h + " of &ldquo;" + D.models[state.m].name +
    "&rdquo; looks at:<table>" + look + "</table>The model's five likeliest next tokens: " + guesses + "<br>What came: " + quoted(piece(came)) +
    ", probability " + Math.exp(-R.loss[i]).toFixed(3) + ", a surprise of " + R.loss[i].toFixed(2) + " nats" + (state.pinned >= 0 ? " (pinned: click it again to let go)" : "") +
    "<br>Over the passage this model's mean surprise is " + mean.toFixed(3) + " nats a token (perplexity " + Math.exp(mean).toFixed(2) + ").";
}
function choose() {
  state.p = +sel("passage").value; state.m = +sel("model").value;
  const heads = D.models[state.m].readings[state.p].w.length;
  state.h = Math.min(+sel("head").value || 0, heads - 1);
  options(sel("head"), Array.from({ length: heads }, (_, h) => String(h)), state.h);
  renderText();
}
options(sel("passage"), D.passages.map(p => p.name), state.p);
options(sel("model"), D.models.map(m => m.name), state.m);
for (const id of ["passage", "model", "head"]) sel(id).addEventListener("change", choose);
const t0 = performance.now();
choose();
const renderMs = performance.now() - t0;

// The page checks itself: every row of every head sums to 1; no weight and no line reaches a later token; and
// choosing another model, head or passage draws something else.
(function selfcheck() {
  let rows = 0, worst = 0, future = 0, drawings = 0, lateLines = 0;
  const pictures = new Set(), fails = [];
  D.models.forEach((M, m) => M.readings.forEach((R, p) => R.w.forEach((_, h) => {
    const W = weights(m, p, h);
    for (let i = 0; i < T; ++i) {
      let s = 0;
      for (let j = 0; j < T; ++j) { s += W[i * T + j]; if (D.causal && j > i && W[i * T + j] !== 0) ++future; }
      worst = Math.max(worst, Math.abs(s - 1)); ++rows;
    }
  })));
  const saved = { ...state };
  D.passages.forEach((_, p) => D.models.forEach((M, m) => M.readings[p].w.forEach((_, h) => {
    Object.assign(state, { p, m, h, pinned: -1 });
    sel("passage").value = p; sel("model").value = m;
    options(sel("head"), M.readings[p].w.map((_, k) => String(k)), h);
    renderText();
    const keys = [...sel("lines").children].map(e => +e.dataset.key);
    lateLines += keys.filter(k => D.causal && k > T - 1).length;
    pictures.add(p + ":" + sel("text").textContent.length + ":" + keys.join(","));
    ++drawings;
  })));
  Object.assign(state, saved);
  sel("passage").value = state.p; sel("model").value = state.m; sel("head").value = state.h;
  choose();
  if (!(worst <= 1e-5)) fails.push("a row's sum misses 1 by " + worst.toExponential(1));
  if (future > 0) fails.push(future + " weights on later tokens");
  if (lateLines > 0) fails.push(lateLines + " lines to later tokens");
  if (pictures.size < 2) fails.push("every choice drew the same picture");
  if (renderMs > 2000) fails.push("the first render took " + renderMs.toFixed(0) + " ms");
  sel("selfcheck").textContent = "self-check: " + (fails.length ? "FAIL: " + fails.join("; ") : "PASS") + "\n  " + rows +
    " attention rows' sums miss 1 by " + worst.toExponential(1) + " at most (1e-5 allowed); " + future + " weights and " + lateLines +
    " lines on later tokens in " + drawings + " drawings; the selectors drew " + pictures.size + " different pictures; first render " +
    renderMs.toFixed(0) + " ms";
})();
</script>
</body></html>
)HTML";

std::string escaped(const std::string& s) {  // text for HTML
    std::string out;
    for (const char c : s) {
        if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '&') out += "&amp;";
        else out += c;
    }
    return out;
}

void replace(std::string& page, const std::string& marker, const std::string& with) {
    for (std::size_t at = page.find(marker); at != std::string::npos; at = page.find(marker, at + with.size())) page.replace(at, marker.size(), with);
}

}  // namespace

std::string pack_weights(const Tensor3& weights, std::size_t head, bool causal) {
    const std::size_t T = weights.shape(1);
    require(head < weights.shape(0) && weights.shape(2) == T, "explorer::pack_weights", "head " + std::to_string(head) + " of weights " + shape_str(weights));
    std::vector<std::uint8_t> bytes;
    bytes.reserve(T * T * 4);
    for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t j = 0; j < (causal ? i + 1 : T); ++j) {
            const float w = weights(head, i, j);
            std::uint8_t b[4];
            std::memcpy(b, &w, 4);
            if constexpr (std::endian::native == std::endian::big) std::swap(b[0], b[3]), std::swap(b[1], b[2]);
            bytes.insert(bytes.end(), b, b + 4);
        }
    }
    return base64(bytes);
}

std::vector<float> unpack_weights(const std::string& text, std::size_t T, bool causal) {
    const std::vector<std::uint8_t> bytes = unbase64(text);
    const std::size_t n = causal ? T * (T + 1) / 2 : T * T;
    require(bytes.size() == 4 * n, "explorer::unpack_weights",
            std::to_string(bytes.size()) + " bytes for T = " + std::to_string(T) + " (" + std::to_string(4 * n) + " expected)");
    std::vector<float> W(T * T, 0.0f);
    std::size_t k = 0;
    for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t j = 0; j < (causal ? i + 1 : T); ++j, k += 4) {
            std::uint8_t b[4] = {bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3]};
            if constexpr (std::endian::native == std::endian::big) std::swap(b[0], b[3]), std::swap(b[1], b[2]);
            std::memcpy(&W[i * T + j], b, 4);
        }
    }
    return W;
}

std::string html(const Page& page) {
    using nlohmann::json;
    const std::string where = "explorer::html";
    require(!page.passages.empty() && !page.models.empty(), where, "a page needs a passage and a model");
    require(page.passage_names.size() == page.passages.size(), where,
            std::to_string(page.passage_names.size()) + " names for " + std::to_string(page.passages.size()) + " passages");
    const std::size_t T = page.passages.front().size() - 1;
    require(page.passages.front().size() >= 2, where, "a passage of " + std::to_string(page.passages.front().size()) + " tokens (2 at least)");
    json pieces = json::object(), passages = json::array(), models = json::array();
    const auto use = [&](int id, const std::string& what) {
        require(id >= 0 && static_cast<std::size_t>(id) < page.pieces.size(), where,
                what + ": token " + std::to_string(id) + " outside the " + std::to_string(page.pieces.size()) + " pieces");
        pieces[std::to_string(id)] = page.pieces[static_cast<std::size_t>(id)];
    };
    for (std::size_t p = 0; p < page.passages.size(); ++p) {
        const auto& tokens = page.passages[p];
        require(tokens.size() == T + 1, where, "passage " + std::to_string(p) + " has " + std::to_string(tokens.size()) + " tokens, the first " + std::to_string(T + 1));
        for (const int id : tokens) use(id, "passage " + std::to_string(p));
        passages.push_back({{"name", page.passage_names[p]}, {"tokens", tokens}});
    }
    for (const ModelView& m : page.models) {
        require(m.readings.size() == page.passages.size(), where,
                m.name + ": " + std::to_string(m.readings.size()) + " readings for " + std::to_string(page.passages.size()) + " passages");
        json readings = json::array();
        for (std::size_t p = 0; p < m.readings.size(); ++p) {
            const Reading& r = m.readings[p];
            const std::string what = m.name + ", passage " + std::to_string(p);
            require(r.weights.dimension() == 3 && r.weights.shape(1) == T && r.weights.shape(2) == T && r.weights.shape(0) >= 1, where,
                    what + ": weights " + shape_str(r.weights) + ", expected (heads, " + std::to_string(T) + ", " + std::to_string(T) + ")");
            require(r.loss.size() == T && r.top.size() == T, where,
                    what + ": " + std::to_string(r.loss.size()) + " losses and " + std::to_string(r.top.size()) + " guesses for " + std::to_string(T) + " tokens");
            json w = json::array(), top = json::array();
            for (std::size_t h = 0; h < r.weights.shape(0); ++h) {
                for (std::size_t i = 0; page.causal && i < T; ++i)
                    for (std::size_t j = i + 1; j < T; ++j)
                        require(r.weights(h, i, j) == 0.0f, where,
                                what + ", head " + std::to_string(h) + ": row " + std::to_string(i) + " puts " + fmt_sci(r.weights(h, i, j)) +
                                    " on the later token " + std::to_string(j) + " (a causal page stores only rows' first i + 1 weights)");
                w.push_back(pack_weights(r.weights, h, page.causal));
            }
            json loss = json::array();
            for (const float l : r.loss) loss.push_back(rounded(l, 1e3));
            for (std::size_t i = 0; i < T; ++i) {
                json guesses = json::array();
                for (const Guess& g : r.top[i]) {
                    use(g.token, what + ", a guess");
                    guesses.push_back({g.token, rounded(g.p, 1e4)});
                }
                top.push_back(guesses);
            }
            readings.push_back({{"w", w}, {"loss", loss}, {"top", top}});
        }
        models.push_back({{"name", m.name}, {"readings", readings}});
    }
    require(page.focus >= -1 && page.focus < static_cast<int>(T), where, "focus " + std::to_string(page.focus) + " outside the " + std::to_string(T) + " tokens read");
    const json data = {{"T", T}, {"causal", page.causal}, {"focus", page.focus < 0 ? static_cast<int>(T) - 1 : page.focus}, {"between", page.between}, {"pieces", pieces}, {"passages", passages}, {"models", models}};
    // invalid UTF-8 in a piece (a token cut inside a character) shows as U+FFFD; "</" cannot close the script
    std::string text = data.dump(-1, ' ', false, json::error_handler_t::replace);
    replace(text, "</", "<\\/");
    std::string out = kPage;
    replace(out, "@TITLE@", escaped(page.title));
    replace(out, "@SUBTITLE@", escaped(page.subtitle));
    replace(out, "@DATA@", text);
    return out;
}

ModelView read(LanguageModel& trained, const ModelConfig& config, const std::string& name, const std::vector<std::vector<int>>& passages,
               std::size_t layer) {
    reference::Model model(config, 0);
    copy_weights(trained, model);
    ModelView view{name, {}};
    for (const std::vector<int>& passage : passages) {
        const std::size_t T = passage.size() - 1;
        require(T >= 1 && T <= config.max_T, "explorer::read", name + ": a passage of " + std::to_string(passage.size()) + " tokens for a context of " + std::to_string(config.max_T));
        const std::vector<int> tokens(passage.begin(), passage.end() - 1), targets(passage.begin() + 1, passage.end());
        model.forward(tokens, targets, 1, T);
        const Mat& logits = model.logits();  // (T, V)
        Reading r{model.attention_weights(layer), {}, {}};  // (h, T, T): one sequence
        const std::size_t V = logits.shape(1);
        std::vector<double> p(V);
        std::vector<int> order(V);
        for (std::size_t i = 0; i < T; ++i) {
            double top = -INFINITY, sum = 0;
            for (std::size_t v = 0; v < V; ++v) top = std::max(top, static_cast<double>(logits(i, v)));
            for (std::size_t v = 0; v < V; ++v) sum += p[v] = std::exp(static_cast<double>(logits(i, v)) - top);
            for (double& x : p) x /= sum;
            r.loss.push_back(static_cast<float>(-std::log(p[static_cast<std::size_t>(targets[i])])));
            std::iota(order.begin(), order.end(), 0);
            const std::size_t k = std::min<std::size_t>(5, V);
            std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](int a, int b) {
                return p[static_cast<std::size_t>(a)] != p[static_cast<std::size_t>(b)] ? p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)] : a < b;
            });
            std::vector<Guess> guesses;
            for (std::size_t g = 0; g < k; ++g) guesses.push_back({order[g], static_cast<float>(p[static_cast<std::size_t>(order[g])])});
            r.top.push_back(std::move(guesses));
        }
        view.readings.push_back(std::move(r));
    }
    return view;
}

std::string path_beside(const std::string& svg_path) {
    std::string stem = svg_path;
    if (stem.size() >= 4 && stem.compare(stem.size() - 4, 4, ".svg") == 0) stem.resize(stem.size() - 4);
    return stem + "_explorer.html";
}

void write_file(const std::string& path, const Page& page) {
    const std::string content = html(page);
    std::ofstream f(path, std::ios::binary);
    if (!f) throw Error("explorer::write_file: cannot open '" + path + "' for writing");
    f << content;
    if (!f) throw Error("explorer::write_file: writing '" + path + "' failed");
}

}  // namespace attn::explorer
