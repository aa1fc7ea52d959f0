// The main of every test executable but the GPU exercises' (tests/gpu/gpu_exercises_main.cpp): Catch2's own
// command line.
#include "catch_session.hpp"

int main(int argc, char** argv) { return run_catch(argc, argv); }
