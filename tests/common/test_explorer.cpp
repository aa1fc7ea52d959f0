// The explorer page's writer (report/explorer.hpp): the stored weights come back as they went in, and a page whose
// readings do not fit its passages is refused with the shapes named.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "report/explorer.hpp"

using namespace attn;

namespace {
// h heads of causal rows: row i spreads over keys 0..i with weights from the rng, normalised
Tensor3 causal_rows(std::size_t h, std::size_t T, Rng& rng) {
    Tensor3 w = xt::zeros<float>({h, T, T});
    for (std::size_t k = 0; k < h; ++k)
        for (std::size_t i = 0; i < T; ++i) {
            float sum = 0;
            for (std::size_t j = 0; j <= i; ++j) sum += w(k, i, j) = static_cast<float>(rng.uniform()) + 0.01f;
            for (std::size_t j = 0; j <= i; ++j) w(k, i, j) /= sum;
        }
    return w;
}
explorer::Page small_page(std::size_t T, Rng& rng) {
    explorer::Page page{"t", "s", {"a", "b", "c\n", "\xff"}, {}, {"one"}, {}, true, -1, ""};
    std::vector<int> passage;
    for (std::size_t i = 0; i <= T; ++i) passage.push_back(static_cast<int>(i % 4));
    page.passages = {passage};
    explorer::Reading r{causal_rows(2, T, rng), std::vector<float>(T, 1.5f), std::vector<std::vector<explorer::Guess>>(T, {{1, 0.5f}, {0, 0.25f}})};
    page.models = {{"model", {r}}};
    return page;
}
}  // namespace

TEST_CASE("explorer: stored weights come back bit for bit, causal rows packed and full rows whole", "[explorer]") {
    Rng rng(5);
    for (const std::size_t T : {1, 2, 7, 33}) {
        const Tensor3 w = causal_rows(3, T, rng);
        for (std::size_t h = 0; h < 3; ++h) {
            for (const bool causal : {true, false}) {
                const std::vector<float> back = explorer::unpack_weights(explorer::pack_weights(w, h, causal), T, causal);
                for (std::size_t i = 0; i < T; ++i)
                    for (std::size_t j = 0; j < T; ++j) REQUIRE(back[i * T + j] == w(h, i, j));
            }
        }
    }
    // a causal row stores i + 1 weights: T(T + 1)/2 floats, 4 bytes each, in base64
    REQUIRE(explorer::pack_weights(causal_rows(1, 4, rng), 0, true).size() == (10 * 4 + 2) / 3 * 4);
    REQUIRE_THROWS_WITH(explorer::unpack_weights(explorer::pack_weights(causal_rows(1, 4, rng), 0, true), 5, true),
                        Catch::Contains("40 bytes for T = 5 (60 expected)"));
    REQUIRE_THROWS_WITH(explorer::unpack_weights("AAA*", 1, true), Catch::Contains("'*' is not base64"));
}

TEST_CASE("explorer: the page is one file with its data inline, and refuses readings that do not fit", "[explorer]") {
    Rng rng(7);
    const std::size_t T = 6;
    explorer::Page page = small_page(T, rng);
    const std::string html = explorer::html(page);
    REQUIRE(html.find("<script id=\"data\" type=\"application/json\">{") != std::string::npos);
    REQUIRE(html.find("\"c\\n\"") != std::string::npos);            // a newline piece, escaped in the JSON
    REQUIRE(html.find("\xef\xbf\xbd") != std::string::npos);        // a byte that is no UTF-8 shows as U+FFFD
    REQUIRE(html.find("https:") == std::string::npos);
    REQUIRE(html.find("<pre id=\"selfcheck\">") != std::string::npos);

    SECTION("a weight on a later token") {
        page.models[0].readings[0].weights(1, 2, 4) = 0.25f;
        REQUIRE_THROWS_WITH(explorer::html(page), Catch::Contains("model, passage 0, head 1: row 2 puts 2.50e-01 on the later token 4"));
    }
    SECTION("weights of another shape") {
        page.models[0].readings[0].weights = xt::zeros<float>({2ul, T, T + 1});
        REQUIRE_THROWS_WITH(explorer::html(page), Catch::Contains("weights (2, 6, 7), expected (heads, 6, 6)"));
    }
    SECTION("a loss per token") {
        page.models[0].readings[0].loss.pop_back();
        REQUIRE_THROWS_WITH(explorer::html(page), Catch::Contains("5 losses and 6 guesses for 6 tokens"));
    }
    SECTION("a guess outside the vocabulary") {
        page.models[0].readings[0].top[3] = {{9, 1.0f}};
        REQUIRE_THROWS_WITH(explorer::html(page), Catch::Contains("token 9 outside the 4 pieces"));
    }
    SECTION("a reading per passage") {
        page.passages.push_back(page.passages[0]);
        page.passage_names.push_back("two");
        REQUIRE_THROWS_WITH(explorer::html(page), Catch::Contains("model: 1 readings for 2 passages"));
    }
    SECTION("an unwritable path") {
        REQUIRE_THROWS_WITH(explorer::write_file("/nonexistent-dir/explorer.html", page),
                            Catch::Contains("explorer::write_file: cannot open '/nonexistent-dir/explorer.html'"));
    }
}
