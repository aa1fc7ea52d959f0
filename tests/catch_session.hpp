// Runs the test cases linked into this executable with Catch2's command line (its implementation is
// tests/catch_session.cpp, compiled once for every test executable).
#pragma once

int run_catch(int argc, char** argv);
