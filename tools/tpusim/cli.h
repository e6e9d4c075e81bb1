#pragma once

// Shared pieces of the tpusim subcommands: argument parsing helpers, size and time
// formatting, and the error type that ends a command with a usage hint.

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/time.h"

namespace tpusim::cli {

// A bad command line: printed as one line plus a hint at `tpusim COMMAND --help`.
class UsageError : public std::runtime_error {
 public:
  UsageError(const std::string& command, const std::string& message)
      : std::runtime_error(message), command_(command) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

// "16M", "1G", "4096", "64KiB": binary multiples. Throws UsageError for anything else.
uint64_t ParseBytes(const std::string& command, const std::string& option, const std::string& text);
std::string HumanBytes(uint64_t bytes);

// The longest --time-limit: 1e6 s (11.6 days) of simulated time, far below the 1.8e7 s
// that 64-bit picoseconds hold.
constexpr double kMaxTimeLimitSeconds = 1e6;
// --time-limit in seconds to picoseconds; throws UsageError naming the range when it is
// not a finite number in (0, kMaxTimeLimitSeconds].
uint64_t ParseTimeLimit(const std::string& command, double seconds);
// Creates --trace-dir when missing; throws UsageError when it is a file or cannot be made.
void PrepareTraceDirectory(const std::string& command, const std::string& dir);
std::string HumanSeconds(double seconds);
std::string HumanRate(double bytes_per_second);  // "45.00 GB/s"
// `value` through a printf format with one number: FormatNumber("%.1f%%", 45.04).
std::string FormatNumber(const char* format, double value);

// Flushes `out` and throws std::runtime_error naming `destination` ("the CSV file 'x.csv'")
// when anything written to it failed (a full disk, a closed descriptor): a report that
// did not reach its reader fails the command.
void RequireWritten(std::ostream& out, const std::string& destination);

// The whole command line (argv[0] is the program). Dispatch lets every error propagate;
// Main prints it as one sentence with a hint and returns the exit status. Main also
// checks, in one place, that everything the command wrote to standard output got there.
int Dispatch(int argc, char** argv);
int Main(int argc, char** argv);

// Commands stop once their arguments are parsed and checked, before they run a simulation
// or write a file. The CLI fuzzer drives every parser in-process this way.
void SetParseOnly(bool parse_only);
bool ParseOnly();

// The --load libraries of this process, in order: runs in child processes load them too.
const std::vector<std::string>& LoadedLibraries();
// Whether the command line asks to --load a library (as Main reads it): the `tpusim`
// executable with libtpusim linked in hands such runs to the shared-linked CLI
// (tools/tpusim/static_main.cc). It allocates nothing and needs no initialiser to have run.
bool AsksToLoad(int argc, char** argv);

int RunTopologies(int argc, char** argv);
int RunDescribe(int argc, char** argv);
int RunRun(int argc, char** argv);
int RunCompare(int argc, char** argv);
int RunBench(int argc, char** argv);
int RunBenchMatmul(int argc, char** argv);  // bench matmul: a sweep of block sizes
int RunCheckTrace(int argc, char** argv);
int RunList(int argc, char** argv);
int RunHloInfo(int argc, char** argv);
int RunSweep(int argc, char** argv);

}  // namespace tpusim::cli
