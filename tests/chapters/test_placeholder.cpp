#include <catch2/catch.hpp>
#include "attn/softmax.hpp"
TEST_CASE("claims placeholder", "[softmax]") { REQUIRE(attn::softmax(attn::Vec{0.f, 0.f})(0) == Approx(0.5)); }
