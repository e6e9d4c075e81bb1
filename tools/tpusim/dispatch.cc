// The command table and the one place where a command's error becomes an exit status.

#include <iostream>
#include <string>

#include "sim/errors.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

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

int Dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  // Boost.Program_options fills "%canonical_option%" and "%value%" into its messages over
  // and over: an argument holding such a token never finishes its error message (found by
  // the fuzzer). No option or value of tpusim needs a '%'.
  for (int i = 2; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.find('%') != std::string::npos)
      throw UsageError(command, "'" + argument + "' holds a '%', which no tpusim argument uses.");
  }
  if (command == "run") return RunRun(argc - 1, argv + 1);
  if (command == "compare") return RunCompare(argc - 1, argv + 1);
  if (command == "bench") return RunBench(argc - 1, argv + 1);
  if (command == "topologies") return RunTopologies(argc - 1, argv + 1);
  if (command == "check-trace") return RunCheckTrace(argc - 1, argv + 1);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "tpusim: unknown command '" << command << "'.\n" << kUsage;
  return 2;
}

int Main(int argc, char** argv) {
  const std::string command = argc < 2 ? "" : argv[1];
  try {
    return Dispatch(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "tpusim " << e.command() << ": " << e.what() << "\n"
              << "Try 'tpusim " << e.command() << " --help'.\n";
    return 2;
  } catch (const topologies::TopologyError& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n"
              << "Try 'tpusim topologies' for the presets.\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n";
    if (e.kind() != ErrorKind::kInvalidArgument) return 1;
    std::cerr << "Try 'tpusim " << command << " --help'.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tpusim " << command << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tpusim::cli
