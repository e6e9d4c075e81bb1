// The command table and the one place where a command's error becomes an exit status.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "hlo/run/entry.h"
#include "kernels/registry.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/param_flags.h"
#include "tools/tpusim/version.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

std::vector<std::string> loaded_libraries;

constexpr const char* kUsage = R"(usage: tpusim [--load LIB.so]... COMMAND [options]
       tpusim --version

commands:
  run KERNEL       run a kernel on a slice: time, bandwidth, bound, data check, trace
                   (KERNEL may be an HLO module file: compiled.as_text() of a jax.jit)
  compare K1 K2... schedules of one computation side by side: time, exposed communication,
                   MXU and ICI utilisation, % of the lower bound
  bench KERNEL     sweep sizes, nccl-tests style: time, algbw, busbw, % of the analytic
                   bound, and the simulator's wall time and events/s per size
  sweep ENTRY      run the product of parameter values (--param NAME=V1,V2,...), each
                   point in its own process: a table, CSV, JSON or a plot; shards merge
  list             the kernels and programs (built in and loaded), one line each
  topologies       list the slice presets
  describe T       the model's module tree for slice T, with each module's parameters
  check-trace FILE check a Perfetto trace against the format rules
  hlo-info FILE    what tpusim reads of an HLO module and how it will run it

--load LIB.so (anywhere on the line, repeatable) loads a shared library built against
tpusim whose kernels register themselves; run, compare, bench and list then know them.
`tpusim COMMAND --help` shows a command's options; `tpusim run ENTRY --help` also lists
the parameters ENTRY declares, each a flag (--bytes, --chunk-bytes, ...).
)";

// Allocation-free: AsksToLoad runs before the process's initialisers (static_main.cc).
bool IsLoadOption(std::string_view arg) {
  return arg == "--load" || arg.starts_with("--load=");
}

// Takes every `--load PATH` / `--load=PATH` out of argv (every command accepts it, so no
// command parses it) and returns the paths in order.
std::vector<std::string> TakeLoadOptions(int& argc, char** argv) {
  std::vector<std::string> paths;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!IsLoadOption(arg)) {
      argv[kept++] = argv[i];
    } else if (arg == "--load") {
      if (i + 1 >= argc) throw UsageError("", "--load needs the path of a shared library.");
      paths.push_back(argv[++i]);
    } else {
      paths.push_back(arg.substr(7));
    }
  }
  argc = kept;
  return paths;
}

// Every argument that names an HLO module file becomes a registry entry of that name before
// the command parses its flags, so run, compare and bench take it like any entry (and its
// parameters, device_order and the rest, are flags).
void RegisterHloModules(int argc, char** argv) {
  kernels::Registry& registry = kernels::Registry::Get();
  for (int i = 2; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.empty() || argument[0] == '-' || registry.Find(argument)) continue;
    if (!hlo::run::IsHloPath(argument)) continue;
    registry.AddFile(hlo::run::HloModuleEntry(argument));
  }
}

std::string WriteFailure(const std::string& destination, int error) {
  return "could not write " + destination +
         (error ? std::string(" (") + std::strerror(error) + ")" : std::string()) +
         ", so the output is incomplete; free space on the disk, or send it somewhere it can "
         "be written.";
}

// Standard output closed before tpusim starts: the first file a command opens would take
// its descriptor and receive the report.
void RequireStdoutOpen() {
  if (fcntl(STDOUT_FILENO, F_GETFD) != -1 || errno != EBADF) return;
  throw std::runtime_error(
      "standard output is closed, and tpusim writes its report there; redirect it to a file "
      "or to /dev/null instead of closing it.");
}

// What the command wrote to standard output, through std::cout and printf alike.
void RequireStdoutWritten() {
  // stdio first: errno then tells why the buffered bytes could not be written.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  std::cout.flush();
  if (!flushed || std::ferror(stdout) != 0 || !std::cout)
    throw std::runtime_error(WriteFailure("to standard output", error));
}

}  // namespace

void RequireWritten(std::ostream& out, const std::string& destination) {
  errno = 0;
  out.flush();
  if (!out) throw std::runtime_error(WriteFailure(destination, errno));
}

const std::vector<std::string>& LoadedLibraries() {
  return loaded_libraries;
}

bool AsksToLoad(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (IsLoadOption(argv[i])) return true;
  return false;
}

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
  if (command == "run" || command == "compare" || command == "bench" || command == "sweep")
    RegisterHloModules(argc, argv);
  if (command == "run") return RunRun(argc - 1, argv + 1);
  if (command == "hlo-info") return RunHloInfo(argc - 1, argv + 1);
  if (command == "compare") return RunCompare(argc - 1, argv + 1);
  if (command == "bench") return RunBench(argc - 1, argv + 1);
  if (command == "sweep") return RunSweep(argc - 1, argv + 1);
  if (command == "list") return RunList(argc - 1, argv + 1);
  if (command == "topologies") return RunTopologies(argc - 1, argv + 1);
  if (command == "describe") return RunDescribe(argc - 1, argv + 1);
  if (command == "check-trace") return RunCheckTrace(argc - 1, argv + 1);
  if (command == "--version") {
    if (argc > 2)
      throw UsageError("", std::string("--version takes no arguments, and '") + argv[2] +
                               "' is one; write tpusim --version alone.");
    std::cout << "tpusim " << kVersion << " (git " << kGitRevision << ")\n";
    return 0;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "tpusim: unknown command '" << command << "'.\n" << kUsage;
  return 2;
}

int Main(int argc, char** argv) {
  std::string command;
  try {
    const std::vector<std::string> libraries = TakeLoadOptions(argc, argv);
    command = argc > 1 ? argv[1] : "";
    for (const auto& path : libraries) {
      kernels::LoadKernelLibrary(path);
      loaded_libraries.push_back(path);
    }
    // A kernel linked in twice (two objects registering one name) is reported here.
    kernels::Registry::Get().CheckRegistrations();
    RequireStdoutOpen();
    const int status = Dispatch(argc, argv);
    RequireStdoutWritten();
    return status;
  } catch (const UsageError& e) {
    const std::string tool = e.command().empty() ? "tpusim" : "tpusim " + e.command();
    std::cerr << tool << ": " << e.what() << "\n"
              << "Try '" << tool << " --help'.\n";
    return 2;
  } catch (const kernels::ParamError& e) {
    // The library names parameters; the command line sets them with flags.
    std::cerr << "tpusim " << command << ": " << e.what() << FlagsNote(e.params()) << "\n"
              << "Try 'tpusim " << command << (e.entry().empty() ? "" : " " + e.entry())
              << " --help'.\n";
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

}  // namespace tpusim::cli
