// Catch2's implementation, compiled once and linked into every test executable, and run_catch(), which each
// executable's main calls (tests/main.cpp; the GPU exercises' own main, tests/gpu/gpu_exercises_main.cpp).
#define CATCH_CONFIG_RUNNER
// Messages name a cell, both values and a mistake: wrapped at 80 columns they break mid-number.
#define CATCH_CONFIG_CONSOLE_WIDTH 160
#include <catch2/catch.hpp>

#include "catch_session.hpp"

int run_catch(int argc, char** argv) { return Catch::Session().run(argc, argv); }
