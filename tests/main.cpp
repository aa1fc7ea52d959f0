// The one Catch2 main, compiled once and shared by every test executable.
#define CATCH_CONFIG_MAIN
// Messages name a cell, both values and a mistake: wrapped at 80 columns they break mid-number.
#define CATCH_CONFIG_CONSOLE_WIDTH 160
#include <catch2/catch.hpp>
