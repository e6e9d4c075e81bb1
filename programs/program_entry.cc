#include "programs/program_entry.h"

#include <algorithm>

namespace tpusim::programs {

kernels::KernelInfo ProgramEntry(const std::string& family, const std::string& schedule,
                                 const std::string& summary, std::vector<kernels::Param> params,
                                 MakeFn make, BoundFn bound) {
  kernels::KernelInfo info;
  info.name = family + "/" + schedule;
  info.kind = kernels::EntryKind::kProgram;
  info.family = family;
  info.summary = summary;
  info.params = std::move(params);
  info.make = std::move(make);
  info.flops_per_chip = [bound](const dsl::Mesh& mesh, const kernels::Params& values) {
    return bound(mesh, values).flops;
  };
  info.bound = std::move(bound);
  return info;
}

double LinkSeconds(const dsl::Mesh& mesh, const std::string& axis, double bytes) {
  const kernels::AxisLinks links = kernels::LinksOf(mesh, axis);
  const double w = links.link_bytes_per_s * (links.wraparound ? 2 : 1);
  return bytes * (links.size - 1) / links.size / w;
}

kernels::Bound ComputeOrLinkBound(const dsl::Mesh& mesh, double flops, double link_seconds,
                                  const std::string& formula) {
  kernels::Bound b;
  b.flops = flops;
  b.peak_flops = kernels::PeakMxuFlops(mesh);
  b.seconds = std::max(flops / b.peak_flops, link_seconds);
  b.formula = formula;
  return b;
}

}  // namespace tpusim::programs
