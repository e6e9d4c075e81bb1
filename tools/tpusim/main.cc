// tpusim: simulate Pallas-style TPU kernels on multi-chip slices.

#include <iostream>
#include <new>
#include <string>

#include "sim/errors.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"
#include "traces/trace_sink.h"

namespace {

constexpr const char* kUsage = R"(usage: tpusim COMMAND [options]

commands:
  run KERNEL       run a kernel on a slice: time, bandwidth, bound, data check, trace
  compare K1 K2... schedules of one computation side by side: time, exposed communication,
                   MXU and ICI utilisation, % of the lower bound
  bench KERNEL     sweep sizes, nccl-tests style: time, algbw, busbw, % of the analytic
                   bound, and the simulator's wall time and events/s per size
  topologies       list the slice presets
  check-trace FILE check a Perfetto trace against the format rules

`tpusim COMMAND --help` shows a command's options.
)";

}  // namespace

// SystemC's library provides main() and calls sc_main; each run builds its own context.
extern "C" int sc_main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  try {
    if (command == "run") return tpusim::cli::RunRun(argc - 1, argv + 1);
    if (command == "compare") return tpusim::cli::RunCompare(argc - 1, argv + 1);
    if (command == "bench") return tpusim::cli::RunBench(argc - 1, argv + 1);
    if (command == "topologies") return tpusim::cli::RunTopologies(argc - 1, argv + 1);
    if (command == "check-trace") return tpusim::cli::RunCheckTrace(argc - 1, argv + 1);
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "tpusim: unknown command '" << command << "'.\n" << kUsage;
    return 2;
  } catch (const tpusim::cli::UsageError& e) {
    std::cerr << "tpusim " << e.command() << ": " << e.what() << "\n"
              << "Try 'tpusim " << e.command() << " --help'.\n";
    return 2;
  } catch (const tpusim::topologies::TopologyError& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n"
              << "Try 'tpusim topologies' for the presets.\n";
    return 2;
  } catch (const tpusim::Error& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n";
    if (e.kind() != tpusim::ErrorKind::kInvalidArgument) return 1;
    std::cerr << "Try 'tpusim " << command << " --help'.\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // A last resort: sizes are estimated before allocating, so this should not happen.
    std::cerr << "tpusim " << command
              << ": ran out of host memory. Run with --timing-only (no payload, the same "
                 "timing) or choose a smaller size.\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n";
    return 1;
  }
}
