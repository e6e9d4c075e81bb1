#pragma once

// The kernel library: every kernel, and every shard_map program, registers itself by name
// with a factory that builds a runnable workload (program, inputs, host reference) and the
// analytic time bound from docs/references.md §3 that its simulated time is judged against.
// Entries may belong to a family (the schedules of one computation, e.g. "seed003"), which
// `tpusim compare FAMILY` runs side by side.

#include <functional>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/shard_map.h"

namespace tpusim::kernels {

// A collective over one mesh axis of an array of `bytes` bytes (the full, gathered size V
// of docs/references.md §3).
struct CollectiveArgs {
  std::string axis = "x";
  // Multi-axis kernels (all_gather_2d): the second mesh axis. Empty: the first mesh axis
  // other than `axis`. Single-axis kernels ignore it.
  std::string axis2;
  // Kernels that stage data in VMEM (reductions): the most bytes one VMEM chunk holds.
  // 0: sized from the chip's VMEM capacity.
  uint64_t chunk_bytes = 0;
  uint64_t bytes = 0;
  dsl::DType dtype = dsl::DType::kBF16;
  bool functional = true;  // false: placeholder inputs, no reference
  uint64_t seed = 1;
  // Matmul-family kernels: the global problem [m, k] x [k, n], and block sizes (0: the
  // kernel's default).
  int64_t m = 0, k = 0, n = 0;
  int64_t bm = 0, bk = 0, bn = 0;
  // Matmul-family kernels: jax.lax.Precision of their dots (f32 operands only).
  dsl::Precision precision = dsl::Precision::kDefault;
};

struct Workload {
  // A kernel (a shard_map of one pallas_call) or a program (a shard_map body).
  dsl::ShardMap program;
  std::vector<dsl::Array> inputs;
  std::vector<dsl::Array> expected;  // global reference outputs; empty when not functional
  double rtol = 0;
  double atol = 0;
  // A program's global output types. A program body's outputs are only known once it
  // runs, so `compare` checks contracts from these (or from `expected`, when the workload
  // is functional) before running anything. Kernels leave it empty: their pallas_call
  // declares its outputs.
  std::vector<dsl::ShapeDtype> out_types = {};
};

struct Bound {
  double seconds = 0;
  std::string formula;  // how it was computed, for the report
  // Roofline of a compute kernel (docs/references.md §1), per chip; 0 for collectives.
  double flops = 0;       // MXU FLOPs
  double peak_flops = 0;  // FLOP/s of one core's MXUs
  double hbm_bytes = 0;   // HBM traffic of the blocking the kernel uses
  double hbm_bytes_per_s = 0;
  std::vector<int64_t> blocks = {};  // the blocking the bound assumes: (bm, bk, bn)
};

// What a registry entry is: `tpusim list` shows the two in separate sections.
enum class EntryKind { kKernel, kProgram };

struct KernelInfo {
  std::string name;
  std::string summary;
  std::function<Workload(const dsl::Mesh&, const CollectiveArgs&)> make;
  std::function<Bound(const dsl::Mesh&, const CollectiveArgs&)> bound;
  // Bus bandwidth = algorithm bandwidth x this factor (nccl-tests convention); empty for
  // kernels that are not collectives (matmul).
  std::function<double(int axis_size)> bus_factor;
  // MXU FLOPs each chip must do (empty: none), for the compute part of compare's bound.
  std::function<double(const dsl::Mesh&, const CollectiveArgs&)> flops_per_chip = nullptr;
  EntryKind kind = EntryKind::kKernel;
  // The schedules of one computation share a family name; empty: in no family.
  std::string family = {};
};

const char* EntryKindName(EntryKind kind);  // "kernel" or "program"

// One instance per process, inside libtpusim: the CLI, user binaries and plugins share it.
class Registry {
 public:
  static Registry& Get();
  // A name that is already taken keeps its first kernel; the clash is recorded rather than
  // thrown, because registrations run in static initialisers (and inside dlopen), where an
  // exception cannot be caught. CheckNoDuplicates() reports it.
  void Add(KernelInfo info);
  // nullptr when unknown.
  const KernelInfo* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  // The members of `family` in registration order; empty when no entry belongs to it.
  std::vector<std::string> FamilyMembers(const std::string& family) const;
  // Every family name, sorted.
  std::vector<std::string> Families() const;
  // Each name that is a family becomes its members, in place; other names stay.
  std::vector<std::string> ExpandFamilies(const std::vector<std::string>& names) const;
  // Throws Error(kInvalidArgument) naming every kernel and program registered twice.
  void CheckNoDuplicates() const;

 private:
  std::vector<KernelInfo> kernels_;  // sorted by name
  std::vector<std::string> registration_order_;
  std::vector<std::pair<std::string, EntryKind>> duplicates_;
};

// Registers a kernel at static-initialisation time, in libtpusim, in a user's binary, or
// in a plugin when it is loaded.
struct Registration {
  explicit Registration(KernelInfo info) { Registry::Get().Add(std::move(info)); }
};

// Loads a plugin: a shared library, linked against libtpusim, whose Registrations add its
// kernels to this process's Registry. Throws Error(kInvalidArgument) when the library
// cannot be loaded, registers a name that already exists, or registers nothing. Loading
// the same library twice is a no-op.
void LoadKernelLibrary(const std::string& path);

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

// A random [m, k] x [k, n] matmul problem for `w`: the two global inputs (placeholders
// when not functional; seeds from args.seed and `salt`), their product computed on the
// host in f64 and rounded once as the expected output, and the tolerance of an MXU result
// (f32 accumulation in another order, then one rounding to args.dtype: a couple of ulps).
void AddMatmulOperands(Workload& w, const CollectiveArgs& args, uint64_t salt);

// The mesh axes other than `axis`, in mesh order: what a sharded matmul splits its rows
// over while it rings along `axis`.
std::vector<std::string> OtherAxes(const dsl::Mesh& mesh, const std::string& axis);

// Peak MXU FLOP/s of one chip: MXUs x size^2 x 2 x clock (docs/references.md §1).
double PeakMxuFlops(const dsl::Mesh& mesh);

// A 1-D global array of args.bytes bytes, random (functional) or a placeholder.
dsl::Array MakeCollectiveInput(const CollectiveArgs& args, uint64_t salt = 0);

}  // namespace tpusim::kernels
