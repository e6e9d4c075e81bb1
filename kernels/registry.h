#pragma once

// The kernel library: every kernel registers itself by name with a factory that builds a
// runnable workload (program, inputs, host reference) and the analytic time bound from
// REFERENCES.md §3 that its simulated time is judged against.

#include <functional>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/shard_map.h"

namespace tpusim::kernels {

// A collective over one mesh axis of an array of `bytes` bytes (the full, gathered size V
// of REFERENCES.md §3).
struct CollectiveArgs {
  std::string axis = "x";
  uint64_t bytes = 0;
  dsl::DType dtype = dsl::DType::kBF16;
  bool functional = true;  // false: placeholder inputs, no reference
  uint64_t seed = 1;
};

struct Workload {
  dsl::ShardMap program;
  std::vector<dsl::Array> inputs;
  std::vector<dsl::Array> expected;  // global reference outputs; empty when not functional
  double rtol = 0;
  double atol = 0;
};

struct Bound {
  double seconds = 0;
  std::string formula;  // how it was computed, for the report
};

struct KernelInfo {
  std::string name;
  std::string summary;
  std::function<Workload(const dsl::Mesh&, const CollectiveArgs&)> make;
  std::function<Bound(const dsl::Mesh&, const CollectiveArgs&)> bound;
  // Bus bandwidth = algorithm bandwidth x this factor (nccl-tests convention).
  std::function<double(int axis_size)> bus_factor;
};

class Registry {
 public:
  static Registry& Get();
  void Add(KernelInfo info);
  // nullptr when unknown.
  const KernelInfo* Find(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  std::vector<KernelInfo> kernels_;
};

// Registers a kernel at static-initialisation time (the library is linked whole).
struct Registration {
  explicit Registration(KernelInfo info) { Registry::Get().Add(std::move(info)); }
};

// Shared argument checks: the axis exists and V splits into whole elements per shard.
// Throws Error(kInvalidArgument) with the nearest valid sizes.
int CheckCollectiveArgs(const dsl::Mesh& mesh, const CollectiveArgs& args, int divisor = 1);

// One-way link bandwidth, per-hop latency and wraparound of a mesh axis.
struct AxisLinks {
  int size = 1;
  bool wraparound = false;
  double link_bytes_per_s = 0;  // W_oneway
  double hop_latency_s = 0;     // T_min
};
AxisLinks LinksOf(const dsl::Mesh& mesh, const std::string& axis);

// A 1-D global array of args.bytes bytes, random (functional) or a placeholder.
dsl::Array MakeCollectiveInput(const CollectiveArgs& args, uint64_t salt = 0);

}  // namespace tpusim::kernels
