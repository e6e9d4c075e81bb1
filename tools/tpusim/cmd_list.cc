// tpusim list: every registered kernel and program (built in, or from a --load'ed library)
// with its one-line summary, and the families.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "base/text.h"
#include "kernels/registry.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"

namespace tpusim::cli {

int RunList(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim list [--load LIB.so]...: the kernels and programs run, compare and bench accept, "
      "with a one-line summary each, and the families compare accepts");
  std::vector<std::string> operands;
  po::variables_map vm;
  if (!ParseCommandLine("list", argc, argv, options, 0, operands, vm)) return 0;
  const kernels::Registry& registry = kernels::Registry::Get();
  size_t width = 0;
  for (const auto& k : registry.kernels())
    width = std::max(width, k.name.size());
  for (const auto kind : {kernels::EntryKind::kKernel, kernels::EntryKind::kProgram}) {
    bool any = false;
    for (const auto& k : registry.kernels()) {
      if (k.kind != kind) continue;
      if (!any)
        std::printf("%s%ss:\n", kind == kernels::EntryKind::kKernel ? "" : "\n",
                    kernels::EntryKindName(kind));
      any = true;
      std::printf("  %-*s  %s\n", static_cast<int>(width), k.name.c_str(), k.summary.c_str());
    }
  }
  const std::vector<std::string> families = registry.Families();
  if (!families.empty()) std::printf("\nfamilies (tpusim compare FAMILY runs its members):\n");
  for (const auto& family : families) {
    std::string members;
    for (const auto& name : registry.FamilyMembers(family))
      base::AppendListItem(members, " ", name);
    std::printf("  %-*s  %s\n", static_cast<int>(width), family.c_str(), members.c_str());
  }
  return 0;
}

}  // namespace tpusim::cli
