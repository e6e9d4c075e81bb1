// tpusim check-trace FILE: decode a Perfetto trace with our schema and check its rules.

#include <boost/program_options.hpp>
#include <iostream>

#include "tools/tpusim/cli.h"
#include "traces/trace_checker.h"

namespace tpusim::cli {

int RunCheckTrace(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string file;
  po::options_description options(
      "tpusim check-trace FILE: check a Perfetto trace (docs/references.md §6 rules)");
  options.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&file));
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("check-trace", e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
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
