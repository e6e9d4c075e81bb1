// tpusim: simulate Pallas-style TPU kernels on multi-chip slices.

#include "tools/tpusim/cli.h"

// SystemC's library provides main() and calls sc_main; each run builds its own context.
extern "C" int sc_main(int argc, char** argv) {
  return tpusim::cli::Main(argc, argv);
}
