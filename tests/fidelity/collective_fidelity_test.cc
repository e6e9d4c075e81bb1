// Layer 3: simulated times against the analytic formulas of docs/references.md §3, with the
// tolerance written in each test beside the formula it checks.
//
// Point-to-point fidelity lives with the DMA unit tests (tests/unit/dma_timing_test.cc):
// a neighbour DMA takes latency + bytes / link bandwidth; each hop adds one latency (a DMA
// three hops away costs three); two DMAs sharing one link each see half its bandwidth; a
// long route contends with neighbour traffic on the link it shares; a local HBM-to-HBM copy
// runs at the HBM bandwidth (2 x bytes through the port). They are not repeated here.

#include <gtest/gtest.h>

#include <string>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

struct Timed {
  double seconds = 0;
  base::RunStats stats;
};

double Seconds(base::Picoseconds t) {
  return static_cast<double>(t) * 1e-12;
}

// Runs a registered kernel timing-only (same timing as functional: DmaTiming test) on a
// topology, without a trace: a 256-chip, 1 GiB trace would hold a slice per chunk and hop.
Timed RunKernel(const std::string& kernel, const config::Topology& topology,
                const std::string& axis, uint64_t bytes) {
  const Mesh mesh(topology);
  const kernels::KernelInfo* info = kernels::Registry::Get().Find(kernel);
  EXPECT_NE(info, nullptr) << kernel;
  if (!info) return {};
  kernels::Workload w = info->make(
      mesh, testing::ParamsFor(kernel, {{"axis", axis}, {"bytes", bytes}}, /*functional=*/false));
  RunOptions options;
  options.functional = false;
  const RunResult result = w.program.Run(w.inputs, options);
  EXPECT_TRUE(result.ok) << result.error;
  return {Seconds(result.time()), result.stats};
}
Timed RunKernel(const std::string& kernel, const std::string& preset, const std::string& axis,
                uint64_t bytes) {
  return RunKernel(kernel, topologies::LoadTopology(preset), axis, bytes);
}

// The link numbers of a preset: W_oneway, T_min (docs/references.md §2), and the fixed costs
// of docs/time-model.md a ring step and a kernel's launch add.
struct Links {
  double oneway = 0;   // bytes/s one way per link
  double latency = 0;  // seconds per hop
  double hbm = 0;      // bytes/s of a chip's HBM port (docs/references.md §1)
  double signal = 0;   // seconds a remote semaphore takes to change beyond the hops
  double launch = 0;   // seconds a pallas_call's launch takes
  // One sequential step of a ring to a neighbour: the hop, then the receiver's semaphore.
  double step() const { return latency + signal; }
};
Links LinksOf(const std::string& preset) {
  const auto t = topologies::LoadTopology(preset);
  return {t.ici().link_bandwidth_bytes_per_s(), t.ici().hop_latency_ns() * 1e-9,
          t.chip().hbm().bandwidth_bytes_per_s(), t.ici().signal_latency_ns() * 1e-9,
          t.chip().cost().op_launch_ns() * 1e-9};
}

// Both all-gather kernels first copy their own shard into place, HBM to HBM, before the
// ring starts: V/X bytes read and written through one HBM port.
double OwnShardCopy(const Links& links, double v, double x) {
  return 2 * (v / x) / links.hbm;
}

// --- Bidirectional ring all-gather on a 16-chip axis with wraparound -------------------
//
// docs/references.md §3 [SB sharding]: T = V/W_ici for large X, with W_ici = 2 W_oneway. That
// is the large-X limit. all_gather_bidi sends half of each shard each way round the ring
// for X-1 steps, which is bandwidth-optimal: every device must receive (X-1)/X of V over
// its two inbound links, so the exact bound is (V/W_ici)(X-1)/X, and the kernel pays one
// hop latency per sequential step on top: T_exact = (V/W_ici)(X-1)/X + (X-1) T_min.
// (kernels/all_gather.cc BidiAllGatherBound reports the bandwidth part of this form.)
// Against SB's V/W_ici itself the run can therefore be as fast as (X-1)/X of it (0.9375
// for X = 16), never faster, and should not be slower than it by more than 3%. The run also
// includes the kernel's own-shard copy (2 V/X bytes through the HBM port, under 1.5%) and
// its launch, which the exact form adds as their own terms; a step's latency is a hop and
// the remote semaphore's signal latency.
class BidiOnWraparoundAxis : public ::testing::TestWithParam<uint64_t> {};

TEST_P(BidiOnWraparoundAxis, MatchesTheExactBoundAndSbsLargeXFormula) {
  const uint64_t v = GetParam();
  const Links links = LinksOf("v5e-16x16");
  const double x = 16;
  const Timed run = RunKernel("all_gather_bidi", "v5e-16x16", "x", v);
  const double w_ici = 2 * links.oneway;
  const double exact =
      v / w_ici * (x - 1) / x + (x - 1) * links.step() + OwnShardCopy(links, v, x) + links.launch;
  const double sb = v / w_ici;
  // Tolerance: 97-103% of the exact form (bound / time, as `tpusim run` reports it).
  EXPECT_GE(exact / run.seconds, 0.97) << "time " << run.seconds << " s, exact " << exact << " s";
  EXPECT_LE(exact / run.seconds, 1.03) << "time " << run.seconds << " s, exact " << exact << " s";
  // SB's formula is the bandwidth part: the time without the steps' latencies and the launch,
  // over V/W_ici, within [(X-1)/X - 1%, 1.03].
  const double bandwidth_part = run.seconds - (x - 1) * links.step() - links.launch;
  EXPECT_GE(bandwidth_part / sb, (x - 1) / x - 0.01)
      << "bandwidth part " << bandwidth_part << " s, SB " << sb;
  EXPECT_LE(bandwidth_part / sb, 1.03) << "bandwidth part " << bandwidth_part << " s, SB " << sb;
}

INSTANTIATE_TEST_SUITE_P(V, BidiOnWraparoundAxis, ::testing::Values(64 * kMiB, 1 * kGiB),
                         [](const auto& info) { return std::to_string(info.param >> 20) + "MiB"; });

// --- Unidirectional ring on the same axis ----------------------------------------------
//
// docs/references.md §3: one direction: T = (V/W_oneway)(X-1)/X. Tolerance: within 3% (the
// X-1 hop latencies and the own-shard copy are about 1% here).
TEST(RingAllGather, OneDirectionTakesVOverWOnewayTimesXMinusOneOverX) {
  const uint64_t v = 256 * kMiB;
  const Links links = LinksOf("v5e-16x16");
  const double x = 16;
  const Timed run = RunKernel("all_gather_ring", "v5e-16x16", "x", v);
  const double formula = v / links.oneway * (x - 1) / x;
  EXPECT_NEAR(run.seconds, formula, 0.03 * formula);
}

// --- Small messages are latency-bound --------------------------------------------------
//
// docs/references.md §3: latency-bound below ~45 kB per hop on v5e, at T_min per hop. Both
// kernels take X-1 sequential steps of one hop each, and each step waits for its receive
// semaphore, so T ~ (X-1) (T_min + signal latency) (plus the start barrier, one more step,
// the launch, and a few ns of bytes). Tolerance: within 25%.
class SmallMessages : public ::testing::TestWithParam<std::string> {};

TEST_P(SmallMessages, TakeHopCountTimesHopLatency) {
  const double x = 16;
  const uint64_t shard = 2048;  // one shard under 4 KiB
  const Links links = LinksOf("v5e-16x16");
  const Timed run = RunKernel(GetParam(), "v5e-16x16", "x", shard * 16);
  const double hops = (x - 1) * links.step();
  EXPECT_NEAR(run.seconds, hops, 0.25 * hops);
}

INSTANTIATE_TEST_SUITE_P(Kernels, SmallMessages,
                         ::testing::Values("all_gather_ring", "all_gather_bidi"));

// --- No wraparound ---------------------------------------------------------------------
//
// docs/references.md §2-3: without wraparound the bidirectional ring's closing edge goes the
// long way, T = (V/W_oneway)(X-1)/X = (X-1)(V/X)/W_oneway, which "typically doubles" the
// wraparound figure (V/W_ici)(X-1)/X. On v5e-4x4 (no wraparound, X = 4), with the
// own-shard copy (3.7% here) taken off the run: tolerance: within 3% of the
// no-wraparound figure, and 1.9-2.1x the wraparound one.
TEST(BidiWithoutWraparound, TakesTheOneDirectionTimeNotTheWraparoundOne) {
  const uint64_t v = 256 * kMiB;  // large enough that the per-step latencies are ~1%
  const Links links = LinksOf("v5e-4x4");
  const double x = 4;
  const Timed run = RunKernel("all_gather_bidi", "v5e-4x4", "x", v);
  const double gather = run.seconds - OwnShardCopy(links, v, x);
  const double no_wrap = (x - 1) * (v / x) / links.oneway;
  const double wrap = v / (2 * links.oneway) * (x - 1) / x;
  EXPECT_NEAR(gather, no_wrap, 0.03 * no_wrap);
  EXPECT_GE(gather / wrap, 1.9);
  EXPECT_LE(gather / wrap, 2.1);
}

// --- Two axes at once ------------------------------------------------------------------
//
// A ring all-gather along x of `a` and along y of `b`, in one kernel, step by step
// together (or only the x one). Each axis has its own links, so gathering over both at
// once takes about the single-axis time (docs/references.md §3, several axes: each axis
// brings its own W_ici), not twice it.
ShardMap TwoAxisGather(const config::Topology& topology, int64_t shard, bool both) {
  KernelFn body = [shard, both](Kernel& k, const Refs& r) {
    const Ref &a = r[0], &b = r[1], &out_a = r[2], &out_b = r[3];
    const Ref &local = r[4], &send = r[5], &recv = r[6];
    const int n = k.axis_size("x");  // a square mesh: both axes have n devices
    auto slot = [&](const Ref& out, int device) { return out.at(ds(device * shard, shard)); };
    const char* axes[2] = {"x", "y"};
    const int gathers = both ? 2 : 1;
    for (int g = 0; g < gathers; ++g) {
      AsyncCopy own = k.async_copy(
          g == 0 ? a : b, slot(g == 0 ? out_a : out_b, k.axis_index(axes[g])), local.at(g));
      own.start();
      own.wait();
    }
    const Ref barrier = k.barrier_semaphore();
    for (int g = 0; g < gathers; ++g) {
      const int me = k.axis_index(axes[g]);
      k.signal(barrier, 1, {{axes[g], (me + 1) % n}});
      k.signal(barrier, 1, {{axes[g], (me + n - 1) % n}});
    }
    k.wait(barrier, 2 * gathers);
    for (int step = 0; step < n - 1; ++step) {
      std::vector<AsyncCopy> copies;
      for (int g = 0; g < gathers; ++g) {
        const int me = k.axis_index(axes[g]);
        const Ref& out = g == 0 ? out_a : out_b;
        const int forwarded = (me - step + n) % n;
        copies.push_back(k.async_remote_copy(slot(out, forwarded), slot(out, forwarded),
                                             send.at(g, step), recv.at(g, step),
                                             {{axes[g], (me + 1) % n}}));
        copies.back().start();
      }
      for (auto& c : copies)
        c.wait_send();
      for (auto& c : copies)
        c.wait_recv();
    }
  };
  const Mesh mesh(topology);
  const int64_t n = mesh.AxisSize("x");
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any(), BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({2}, "local"), ScratchSpec::DMA({2, n - 1}, "send"),
                         ScratchSpec::DMA({2, n - 1}, "recv")};
  PallasCall call = pallas_call("two_axis_gather", body, grid,
                                {{{n * shard}, DType::kInt8}, {{n * shard}, DType::kInt8}});
  call.in_names = {"a", "b"};
  call.out_names = {"out_a", "out_b"};
  call.compiler_params.collective_id = 0;
  return shard_map(mesh, {P{"x"}, P{"y"}}, {P{}, P{}}, call);
}

struct AxisTraffic {
  uint64_t x_bytes = 0, y_bytes = 0;
  base::Picoseconds x_busy = 0, y_busy = 0;
};
AxisTraffic TrafficByAxis(const base::RunStats& stats) {
  AxisTraffic t;
  for (const auto& link : stats.links) {
    const bool x = link.name.find(" ICI x") != std::string::npos;
    (x ? t.x_bytes : t.y_bytes) += link.bytes;
    (x ? t.x_busy : t.y_busy) += link.busy;
  }
  return t;
}

TEST(TwoAxes, GatheringOverBothAxesAtOnceGivesEveryDeviceBothArrays) {
  const auto topology = topologies::LoadTopology("v5e-4x4");
  const int64_t shard = 4096;
  const Array a = Array::Random({4 * shard}, DType::kInt8, 11);
  const Array b = Array::Random({4 * shard}, DType::kInt8, 12);
  auto run = testing::RunAndCheckTrace(TwoAxisGather(topology, shard, true), {a, b});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  for (int d = 0; d < 16; ++d) {
    EXPECT_TRUE(CompareExact(run.result.device_outputs[0][d], a).equal) << "device " << d;
    EXPECT_TRUE(CompareExact(run.result.device_outputs[1][d], b).equal) << "device " << d;
  }
}

TEST(TwoAxes, GatheringOverBothAxesAtOnceUsesBothAxesLinks) {
  const auto topology = topologies::LoadTopology("v5e-4x4");
  const int64_t shard = 16 * kMiB;
  const Array a = Array::Placeholder({4 * shard}, DType::kInt8);
  const Array b = Array::Placeholder({4 * shard}, DType::kInt8);
  RunOptions options;
  options.functional = false;
  const RunResult one = TwoAxisGather(topology, shard, false).Run({a, b}, options);
  const RunResult both = TwoAxisGather(topology, shard, true).Run({a, b}, options);
  ASSERT_TRUE(one.ok) << one.error;
  ASSERT_TRUE(both.ok) << both.error;

  const AxisTraffic single = TrafficByAxis(one.stats);
  const AxisTraffic dual = TrafficByAxis(both.stats);
  EXPECT_GT(single.x_bytes, 0u);
  EXPECT_EQ(single.y_bytes, 0u);
  EXPECT_GT(dual.x_bytes, 0u);
  EXPECT_GT(dual.y_bytes, 0u);
  EXPECT_GT(dual.x_busy, 0u);
  EXPECT_GT(dual.y_busy, 0u);
  EXPECT_EQ(dual.x_bytes, dual.y_bytes);  // a square mesh: the same traffic on each axis
  EXPECT_EQ(dual.x_bytes, single.x_bytes);
  // The kernel copies each own shard into place first, one after the other, through the
  // one HBM port; the rings then run together. Tolerance: both axes at once within 5% of
  // one axis alone (2x would mean shared links), and within 1% once the second own-shard
  // copy is taken off.
  const Links links = LinksOf("v5e-4x4");
  const double t1 = Seconds(one.time()), t2 = Seconds(both.time());
  EXPECT_NEAR(t2, t1, 0.05 * t1) << "one axis " << t1 << " s, both " << t2 << " s";
  const double second_copy = OwnShardCopy(links, 4.0 * shard, 4);
  EXPECT_NEAR(t2 - second_copy, t1, 0.01 * t1) << "one axis " << t1 << " s, both " << t2 << " s";
}

// --- Multi-slice: collectives over the slice axis cross the DCN ------------------------
//
// A collective over the slice axis of a multi-slice topology (docs/model.md, "Multi-slice")
// crosses the data-center network, whose bottleneck is each host's NIC, shared by the host's
// chips.

// Ring all-reduce of V bytes per chip over an axis of X slices: the reduce-scatter sends
// (X-1)/X V from every chip and the all-gather as much again, 2 (X-1)/X V in all, every byte
// to a chip of another slice. A host's chips_per_host chips share its NIC (B bytes/s each
// way), so the NIC carries chips_per_host times that:
//   T = 2 (X-1)/X V chips_per_host / B.
// With X = 2 that is V chips_per_host / B. On top come one DCN latency and a signal per ring
// step, the kernel's launch and its start barrier: 5% covers them at V = 16 MiB.
TEST(DcnFidelity, AllReduceOverTwoSlicesIsBoundByTheHostNics) {
  const auto topology = topologies::WithSlices(topologies::LoadTopology("v5e-2x4"), 2, "v5e-2x4");
  const double nic = topology.dcn().nic_bandwidth_bytes_per_s();
  const double per_host = topology.dcn().chips_per_host();
  const double v = 16.0 * (1 << 20);
  const double x = 2;
  const double bound = 2 * (x - 1) / x * v * per_host / nic;
  const Timed t = RunKernel("all_reduce_ring", topology, "slice", static_cast<uint64_t>(v));
  EXPECT_GE(t.seconds, bound);
  EXPECT_LE(t.seconds, 1.05 * bound) << "bound " << bound;
  // Every NIC port moved the chips' bytes, and no ICI link carried any.
  ASSERT_EQ(t.stats.nics.size(), 4u);  // 2 hosts x (out, in)
  for (const auto& port : t.stats.nics)
    EXPECT_EQ(static_cast<double>(port.bytes), per_host * v) << port.name;
  for (const auto& link : t.stats.links)
    EXPECT_EQ(link.bytes, 0u) << link.name;
}

// The program layer's psum over the slice axis (kernels/lax) crosses the DCN too, and its
// planner's algorithm meets the same NIC bound within the same 5%.
TEST(DcnFidelity, LaxPsumOverTwoSlicesIsBoundByTheHostNics) {
  const auto topology = topologies::WithSlices(topologies::LoadTopology("v5e-2x4"), 2, "v5e-2x4");
  const double v = 16.0 * (1 << 20);
  const double bound =
      v * topology.dcn().chips_per_host() / topology.dcn().nic_bandwidth_bytes_per_s();
  const Timed t = RunKernel("lax/psum", topology, "slice", static_cast<uint64_t>(v));
  EXPECT_GE(t.seconds, bound);
  EXPECT_LE(t.seconds, 1.05 * bound) << "bound " << bound;
}

// Within a slice nothing changes: the same all-reduce over the ICI axis of a 2-slice topology
// takes as long as on one slice, and the NICs stay idle.
TEST(DcnFidelity, AnIciAxisOfAMultiSliceTopologyRunsAsOnOneSlice) {
  const auto one = topologies::LoadTopology("v5e-4x4");
  const auto two = topologies::WithSlices(one, 2, "v5e-4x4");
  const uint64_t v = 4 << 20;
  const Timed single = RunKernel("all_reduce_ring", one, "x", v);
  const Timed sliced = RunKernel("all_reduce_ring", two, "x", v);
  EXPECT_EQ(sliced.seconds, single.seconds);
  for (const auto& port : sliced.stats.nics)
    EXPECT_EQ(port.bytes, 0u) << port.name;
}

// On TPU7x a chip is two devices, its chiplets, joined by the die-to-die link
// (docs/model.md, "Chiplets"). An all-gather of V bytes over the chiplet axis sends each
// device's V/2 to the other chiplet over that link alone, after the kernel's own-shard copy:
//   T = OwnShardCopy + (V/2) / W_d2d + (D2D latency + signal) + launch.
// Tolerance: 2% (the form leaves out only the ring's bookkeeping).
TEST(ChipletFidelity, AllGatherOverTheChipletAxisIsBoundByTheD2dLink) {
  const auto topology = topologies::LoadTopology("tpu7x-2x2x1");
  const Links links = LinksOf("tpu7x-2x2x1");
  const double d2d = topology.chiplets().d2d_bandwidth_bytes_per_s();
  const uint64_t v = 256 * kMiB;
  const double exact = OwnShardCopy(links, v, 2) + static_cast<double>(v / 2) / d2d +
                       topology.chiplets().d2d_latency_ns() * 1e-9 + links.signal + links.launch;
  const Timed t = RunKernel("all_gather_ring", topology, "chiplet", v);
  EXPECT_NEAR(t.seconds, exact, 0.02 * exact);
  // Every D2D link moved its device's half, and no ICI link carried any byte.
  int d2d_links = 0;
  for (const auto& link : t.stats.links) {
    const bool is_d2d = link.name.find(" D2D ") != std::string::npos;
    d2d_links += is_d2d;
    EXPECT_EQ(link.bytes, is_d2d ? v / 2 : 0) << link.name;
  }
  EXPECT_EQ(d2d_links, 8);  // 4 chips x 2 directions
}

}  // namespace
}  // namespace tpusim
