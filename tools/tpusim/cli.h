#pragma once

// Shared pieces of the tpusim subcommands: argument parsing helpers, size and time
// formatting, and the error type that ends a command with a usage hint.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/time.h"

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
// --time-limit in seconds as simulated picoseconds. Throws UsageError unless it is positive
// and fits the 64-bit picosecond clock (about 213 days).
sim::Picoseconds TimeLimit(const std::string& command, double seconds);
std::string HumanBytes(uint64_t bytes);
std::string HumanSeconds(double seconds);
std::string HumanRate(double bytes_per_second);  // "45.00 GB/s"

// The whole command line (argv[0] is the program). Dispatch lets every error propagate;
// Main prints it as one sentence with a hint and returns the exit status.
int Dispatch(int argc, char** argv);
int Main(int argc, char** argv);

// Commands stop once their arguments are parsed and checked, before they run a simulation
// or write a file. The CLI fuzzer drives every parser in-process this way.
void SetParseOnly(bool parse_only);
bool ParseOnly();

int RunTopologies(int argc, char** argv);
int RunRun(int argc, char** argv);
int RunCompare(int argc, char** argv);
int RunBench(int argc, char** argv);
int RunCheckTrace(int argc, char** argv);

}  // namespace tpusim::cli
