#pragma once

// The kernel library: every kernel, and every shard_map program, registers itself by name
// with a factory that builds a runnable workload (program, inputs, host reference) and the
// analytic time bound from docs/references.md §3 that its simulated time is judged against.
// Entries may belong to a family (the schedules of one computation, e.g. "seed003"), which
// `tpusim compare FAMILY` runs side by side.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/registry.h"
#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/shard_map.h"
#include "kernels/params.h"

namespace tpusim::kernels {

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
  // Set when a functional run was asked for but the workload cannot be one (an op without
  // numerics): the run is timing-only, and the report says why.
  std::string timing_only_reason = {};
  // What the report should add (e.g. an HLO module's slowest-branch choices).
  std::vector<std::string> notes = {};
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
  // Every parameter the entry takes, and only those (kernels/params.h; the shared problem
  // parameters are in kernels/problem_params.h). make and bound get their checked values.
  std::vector<Param> params;
  std::function<Workload(const dsl::Mesh&, const Params&)> make;
  std::function<Bound(const dsl::Mesh&, const Params&)> bound;
  // Bus bandwidth = algorithm bandwidth x this factor (nccl-tests convention); empty for
  // kernels that are not collectives (matmul).
  std::function<double(int axis_size)> bus_factor;
  // MXU FLOPs each chip must do (empty: none), for the compute part of compare's bound.
  std::function<double(const dsl::Mesh&, const Params&)> flops_per_chip = nullptr;
  EntryKind kind = EntryKind::kKernel;
  // The schedules of one computation share a family name; empty: in no family.
  std::string family = {};

  // `given` checked against `params`, defaults filled in; throws ParamError (see
  // BindParams).
  Params Bind(const ParamValues& given = {}) const { return BindParams(name, params, given); }
  // The declaration of `param`; nullptr when the entry does not take it.
  const Param* FindParam(const std::string& param) const;
  // bound(mesh, params), or no bound (all zero) when the entry has none. Throws
  // Error(kKernelMisuse) naming the entry when a number of it is NaN, infinite or negative:
  // reports divide by it.
  Bound BoundOf(const dsl::Mesh& mesh, const Params& params) const;
  // bus_factor(axis_size), checked the same way; 0 when the entry has none.
  double BusFactor(int axis_size) const;
};

const char* EntryKindName(EntryKind kind);  // "kernel" or "program"

// One instance per process, inside libtpusim: the CLI, user binaries and plugins share it.
// A base::Registry (base/registry.h) that is checked once, up front (CheckRegistrations),
// because it also reports entries that are not sound.
class Registry {
 public:
  static Registry& Get();
  // A name that is already taken keeps its first kernel; the clash is recorded rather than
  // thrown, because registrations run in static initialisers (and inside dlopen), where an
  // exception cannot be caught. So is a parameter declaration that is not sound (a name
  // declared twice, a default outside its own range). An entry the command line could not
  // name (an empty name, an option such as --help, a name with a space) or without a make
  // function is kept out and recorded too. CheckRegistrations() reports them all.
  void Add(KernelInfo info);
  // An entry named by the path of the file it comes from (an HLO module the command line
  // named): any path the command line could spell is its name. Registered like Add.
  void AddFile(KernelInfo info);
  // nullptr when unknown.
  const KernelInfo* Find(const std::string& name) const;
  std::vector<std::string> Names() const;
  // Every entry, by name: a view of the registry that yields each KernelInfo. (A plain
  // iterator, not std::views::values: clang cannot compile that view over GCC 12's
  // library, and the sanitizer build uses clang.)
  class Entries {
   public:
    using Map = std::map<std::string, KernelInfo>;
    class Iterator {
     public:
      explicit Iterator(Map::const_iterator at) : at_(at) {}
      const KernelInfo& operator*() const { return at_->second; }
      const KernelInfo* operator->() const { return &at_->second; }
      Iterator& operator++() {
        ++at_;
        return *this;
      }
      bool operator==(const Iterator& other) const { return at_ == other.at_; }
      bool operator!=(const Iterator& other) const { return at_ != other.at_; }

     private:
      Map::const_iterator at_;
    };
    explicit Entries(const Map& map) : map_(map) {}
    Iterator begin() const { return Iterator(map_.begin()); }
    Iterator end() const { return Iterator(map_.end()); }
    size_t size() const { return map_.size(); }

   private:
    const Map& map_;
  };
  Entries kernels() const { return Entries(entries_.entries()); }
  // The members of `family` in registration order; empty when no entry belongs to it.
  std::vector<std::string> FamilyMembers(const std::string& family) const;
  // Every family name, sorted.
  std::vector<std::string> Families() const;
  // Each name that is a family becomes its members, in place; other names stay.
  std::vector<std::string> ExpandFamilies(const std::vector<std::string>& names) const;
  // Throws Error(kInvalidArgument) naming every kernel and program registered twice and
  // every unsound parameter declaration.
  void CheckRegistrations() const;

 private:
  base::Registry<KernelInfo> entries_{"kernel"};  // each added as its EntryKindName
  std::vector<std::string> registration_order_;
  std::vector<std::string> bad_declarations_;  // unsound entries and parameter declarations
};

// Registers a kernel at static-initialisation time, in libtpusim, in a user's binary, or
// in a plugin when it is loaded.
struct Registration {
  explicit Registration(KernelInfo info) { Registry::Get().Add(std::move(info)); }
};

// Loads a plugin: a shared library, linked against libtpusim, whose Registrations add its
// kernels to this process's Registry. Throws Error(kInvalidArgument), naming the library,
// when it cannot be loaded, its static initialisers throw, it registers a name that
// already exists (a kernel, or anything registered through base/registry.h: a memory or
// compute model, a program op, a pallas_call target) or an unsound entry, or it registers
// nothing. Loading the same library
// twice is a no-op.
void LoadKernelLibrary(const std::string& path);

// One-way link bandwidth, per-hop latency and wraparound of a mesh axis.
// The ICI numbers of an axis, or for a multi-slice topology's slice axis a chip's share of its
// host's DCN NIC and the DCN latency.
struct AxisLinks {
  int size = 1;
  bool wraparound = false;
  double link_bytes_per_s = 0;  // W_oneway
  double hop_latency_s = 0;     // T_min
};
AxisLinks LinksOf(const dsl::Mesh& mesh, const std::string& axis);

// The mesh axes other than `axis`, in mesh order: what a sharded matmul splits its rows
// over while it rings along `axis`.
std::vector<std::string> OtherAxes(const dsl::Mesh& mesh, const std::string& axis);

// Peak MXU FLOP/s of one chip: MXUs x size^2 x 2 x clock (docs/references.md §1).
double PeakMxuFlops(const dsl::Mesh& mesh);

}  // namespace tpusim::kernels
