// tpusim check-trace FILE: decode a Perfetto trace with our schema and check its rules.

#include <boost/program_options.hpp>
#include <iostream>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "traces/trace_checker.h"

namespace tpusim::cli {

int RunCheckTrace(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim check-trace FILE: check a Perfetto trace (docs/references.md §6 rules).\n"
      "The file is read into memory whole, up to 2 GiB (larger files are refused)");
  std::vector<std::string> files;
  po::variables_map vm;
  if (!ParseCommandLine("check-trace", argc, argv, options, 1, files, vm)) return 0;
  const std::string file = files.empty() ? "" : files[0];
  if (file.empty()) throw UsageError("check-trace", "name the trace file to check.");
  if (ParseOnly()) return 0;
  const auto result = traces::CheckPerfettoTraceFile(file);
  const auto& s = result.summary;
  std::cout << file << ": " << s.packets << " packets, " << s.tracks << " tracks, " << s.slices
            << " slices, " << s.instants << " instants, " << s.counter_samples
            << " counter samples, " << s.flows << " flows\n";
  for (const auto& p : result.problems)
    std::cout << "  problem: " << p << "\n";
  std::cout << (result.ok() ? "OK" : "FAILED") << "\n";
  return result.ok() ? 0 : 1;
}

}  // namespace tpusim::cli
