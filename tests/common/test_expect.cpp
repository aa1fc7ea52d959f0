// The exercise tests' diagnosis line (tests/exercises/expect.hpp): a known mistake is named only when the
// failing input tells it apart from the others; mistakes that give the same output there are all listed.
#include <catch2/catch.hpp>

#include "../exercises/expect.hpp"

TEST_CASE("exercise tests: a mistake is named alone only when no other known mistake gives the same output", "[expect]") {
    using ex_test::detail::diagnosis;
    CHECK(diagnosis({}).empty());
    CHECK(diagnosis({"dividing by T"}) == "\n  — this is exactly what dividing by T gives");
    CHECK(diagnosis({"dividing by T", "summing the whole row"}) ==
          "\n  — on this input, each of these mistakes gives exactly this:\n      dividing by T\n      summing the whole row");
}
