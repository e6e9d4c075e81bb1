#include "kernels/registry.h"

#include <algorithm>

#include "sim/errors.h"
#include "sim/time.h"

namespace tpusim::kernels {

Registry& Registry::Get() {
  static Registry registry;
  return registry;
}

void Registry::Add(KernelInfo info) {
  kernels_.push_back(std::move(info));
  std::sort(kernels_.begin(), kernels_.end(),
            [](const KernelInfo& a, const KernelInfo& b) { return a.name < b.name; });
}

const KernelInfo* Registry::Find(const std::string& name) const {
  for (const auto& k : kernels_) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& k : kernels_)
    names.push_back(k.name);
  return names;
}

int CheckCollectiveArgs(const dsl::Mesh& mesh, const CollectiveArgs& args, int divisor) {
  const int x = mesh.AxisSize(args.axis);
  const uint64_t esize = dsl::SizeOf(args.dtype);
  const uint64_t quantum = static_cast<uint64_t>(x) * divisor * esize;
  if (args.bytes == 0 || args.bytes % quantum != 0) {
    const uint64_t below = args.bytes / quantum * quantum;
    const uint64_t above = below + quantum;
    throw Error(ErrorKind::kInvalidArgument,
                "--bytes " + std::to_string(args.bytes) + " does not split into " +
                    std::to_string(x * divisor) + " equal shards of whole " +
                    dsl::DTypeName(args.dtype) + " elements over axis '" + args.axis + "' (size " +
                    std::to_string(x) + "); use a multiple of " + std::to_string(quantum) +
                    " bytes, e.g. " + (below > 0 ? std::to_string(below) + " or " : "") +
                    std::to_string(above) + ".");
  }
  return x;
}

AxisLinks LinksOf(const dsl::Mesh& mesh, const std::string& axis) {
  const int a = mesh.AxisIndex(axis);
  const auto& topology = mesh.topology();
  AxisLinks links;
  links.size = mesh.shape()[a];
  links.wraparound = topology.mesh().wraparound(a);
  links.link_bytes_per_s = topology.ici().link_bandwidth_bytes_per_s();
  links.hop_latency_s = topology.ici().hop_latency_ns() * 1e-9;
  return links;
}

dsl::Array MakeCollectiveInput(const CollectiveArgs& args, uint64_t salt) {
  const int64_t elements = static_cast<int64_t>(args.bytes / dsl::SizeOf(args.dtype));
  if (!args.functional) return dsl::Array::Placeholder({elements}, args.dtype);
  return dsl::Array::Random({elements}, args.dtype, args.seed * 1000003 + salt);
}

}  // namespace tpusim::kernels
