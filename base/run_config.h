#pragma once

// How one run goes: every option a caller (the CLI, a test, a user's program) sets for a
// run, in one struct that travels by reference from the caller through
// dsl::ShardMap::Run to the model (base::BuildEngine) and to every pallas_call of the run.
// The engine reads the timing and checking options; the DSL reads the interpret-mode ones.
// A new run option is a field here, and nowhere else.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/time.h"
#include "traces/trace_sink.h"

namespace tpusim::base {

// What memory no one has written reads as (Pallas interpret mode's uninitialized_memory):
// NaN (integers: the dtype's largest value), so a kernel that reads what it never wrote
// gives visibly wrong data, or zero.
enum class UninitializedMemory { kNan, kZero };

// What a kernel's read of a slice past its ref's shape does (interpret mode's
// out_of_bounds_reads): raise, or read the uninitialized value (see UninitializedMemory)
// where the slice is out of bounds and the data where it is in. Writes out of bounds
// always raise.
enum class OutOfBoundsReads { kRaise, kUninitialized };

// One ICI link direction, as a topology's link_override names it, slowed by `factor`.
struct LinkSlowdown {
  uint32_t chip = 0;      // the chip the link leaves, by index (as RunConfig::chip_slowdown)
  std::string direction;  // the mesh axis and the way along it: "x+", "y-"
  double factor = 1;      // the link's bandwidth is divided by it; finite and > 0
};

struct RunConfig {
  // Functional runs move real bytes; timing-only runs move none, with identical timing
  // (their inputs may be dsl::Array placeholders).
  bool functional = true;
  Picoseconds time_limit = 60'000'000'000'000ull;  // 60 s of simulated time
  // Host seconds a run may take (0: no limit); past them it ends with the same report as
  // the simulated-time limit. Simulated time cannot end a loop whose steps cost none.
  double wall_limit_s = 0;
  // Asked now and then while the run goes (with the wall clock, not per event): true ends
  // the run as interrupted. The Python module passes its Ctrl-C check.
  std::function<bool()> interrupted;
  traces::TraceSink* trace = nullptr;  // not owned; nullptr records nothing
  // Per-chip slowdown (1 = nominal; 2 twice as slow), by chip index (row-major over the
  // mesh: chip (1, 2) of a 4x4 slice is 6), to model a straggler: the chip's compute time and
  // its DMA issue latency are multiplied by the factor, and its HBM, VMEM and SMEM
  // bandwidths divided by it. Chips past the end run at 1.
  std::vector<double> chip_slowdown;
  // Link directions run slower than the topology says: each one's bandwidth divided by its
  // factor. Its latency (wire and router) stays as it is: a degraded link moves fewer bytes
  // per second, it does not get longer; a topology file's link_override sets latency.
  std::vector<LinkSlowdown> link_slowdown;
  // Happens-before race detection in functional runs (interpret mode's detect_races). Off,
  // only two DMAs writing the same bytes at the same time are still caught.
  bool race_check = true;
  // Send each DMA chunk to every hop as a TLM-2.0 transaction, the model's own memories and
  // links included, instead of booking those directly. Same timing, about twice the wall
  // time; the tests use it to check that the two agree.
  bool book_through_tlm = false;
  // Outputs, scratch and pipeline buffers before the kernel writes them; inputs are set.
  UninitializedMemory uninitialized_memory = UninitializedMemory::kNan;
  OutOfBoundsReads out_of_bounds_reads = OutOfBoundsReads::kRaise;
  // shard_map's check_vma (check_rep): an output whose out_spec leaves out a mesh axis must
  // be the same along it, and a functional run that finds it is not fails. false returns
  // the canonical replica's block unchecked, as JAX does with the check off.
  bool check_replication = true;
  // Runs the grid points of 'parallel' dimensions (emit_pipeline's too) in an order drawn
  // from this seed (interpret mode's random_seed); unset, every grid runs in lexicographic
  // order.
  std::optional<uint64_t> grid_seed;
  // The algorithm every lax collective of a program that implements it runs, by name
  // (kernels/lax/algorithm.h); empty or "auto": each chooses its own.
  std::string collective_algorithm;
  // The process ends soon after this run (the CLI's `run`): the model is left for the
  // operating system to reclaim instead of being taken apart module by module, which was
  // 2.4% of a 16-chip run's instructions (docs/performance-start-up.md, "Fifth pass"). It
  // stays reachable, so a leak checker does not report it. Only for a caller that runs once.
  bool leave_model_at_exit = false;
};

}  // namespace tpusim::base
