// tpusim list: every registered kernel (built in, or from a --load'ed library) with its
// one-line summary.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "kernels/registry.h"
#include "tools/tpusim/cli.h"

namespace tpusim::cli {

int RunList(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim list [--load LIB.so]...: the kernels run, compare and bench accept, with a "
      "one-line summary each");
  options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
  } catch (const po::error& e) {
    throw UsageError("list", e.what());
  }
  if (vm.count("help")) {
    std::cout << options << "\n";
    return 0;
  }
  size_t width = 0;
  for (const auto& k : kernels::Registry::Get().kernels())
    width = std::max(width, k.name.size());
  std::printf("kernels:\n");
  for (const auto& k : kernels::Registry::Get().kernels())
    std::printf("  %-*s  %s\n", static_cast<int>(width), k.name.c_str(), k.summary.c_str());
  return 0;
}

}  // namespace tpusim::cli
