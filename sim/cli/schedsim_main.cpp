// schedsim: the simulator's command line with the built-in placement policies (sim/cli.cpp).
#include "sim/cli/cli.hpp"

int main(int argc, char** argv) { return sim::cli_main(argc, argv, libsched::Registry::builtin()); }
