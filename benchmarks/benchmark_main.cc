// libsystemc defines main() and calls sc_main, so the benchmark binaries that link the model
// start here rather than in benchmark_main (as the test binaries start in
// tests/support/test_main.cc). Each benchmark makes its own SystemC context.

#include <benchmark/benchmark.h>

extern "C" int sc_main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
