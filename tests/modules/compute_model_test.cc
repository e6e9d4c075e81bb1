// The compute model (sim/compute_models.h) inside the slice: what a piece of work a core
// describes (base/work.h) takes, to the picosecond. An XLA op pays its launch, then holds its
// unit while its HBM traffic streams through the chip's HBM port beside the DMAs in flight;
// a pallas_call's launch costs the same. A topology that names a model that is not
// registered, or gives it a parameter it does not take, is refused when the slice is built.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "base/errors.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::CorePort;
using base::MemorySpace;
using base::TransferTime;

constexpr double kHbmBandwidth = 8.19e11;  // the v5e preset's, docs/references.md §1
constexpr uint64_t kChunk = 524288;        // chip.dma.chunk_bytes of the presets

// One chip whose XLA ops reach the whole HBM bandwidth and launch in `launch_ns`.
config::Topology OneChip(double launch_ns) {
  return testing::MakeTopology({1}, {false}, [&](config::Topology& t) {
    auto* cost = t.mutable_chip()->mutable_cost();
    cost->set_op_launch_ns(launch_ns);
    cost->set_xla_hbm_efficiency(1.0);
    cost->set_xla_pipeline_step_bytes(0);
  });
}

// An XLA op that only reads `bytes` of HBM.
base::XlaOp Reads(uint64_t bytes) {
  base::XlaOp op;
  op.hbm_read_bytes = static_cast<double>(bytes);
  return op;
}

// When `work` ends on chip 0, run alone from time 0.
Picoseconds TimeWork(const config::Topology& topology, const base::Work& work) {
  sim::Simulation simulation(topology, TimingOnly());
  Picoseconds end = 0;
  const auto outcome = simulation.Run([&](CorePort& core) {
    core.Execute(work, "work");
    end = core.Now();
  });
  EXPECT_TRUE(outcome.ok) << outcome.error;
  return end;
}

TEST(ComputeModel, AnXlaOpPaysItsLaunchThenStreamsItsBytesThroughTheHbmPort) {
  const Picoseconds chunk = TransferTime(kChunk, kHbmBandwidth);
  EXPECT_EQ(TimeWork(OneChip(0), Reads(4 * kChunk)), 4 * chunk);
  EXPECT_EQ(TimeWork(OneChip(1500), Reads(4 * kChunk)), base::NanosecondsToTime(1500) + 4 * chunk);
}

TEST(ComputeModel, APallasCallsLaunchCostsTheSameAndAnEmptyOpNothing) {
  EXPECT_EQ(TimeWork(OneChip(1500), base::KernelLaunch{}), base::NanosecondsToTime(1500));
  // A constant or a bitcast: nothing is launched.
  EXPECT_EQ(TimeWork(OneChip(1500), base::XlaOp{}), 0u);
}

TEST(ComputeModel, AnXlaOpsHbmTrafficSharesThePortWithADmaInFlight) {
  const config::Topology topology = OneChip(0);
  const Picoseconds chunk = TransferTime(kChunk, kHbmBandwidth);
  const uint64_t bytes = 4 * kChunk;
  sim::Simulation simulation(topology, TimingOnly());
  const auto source = simulation.Allocate(0, MemorySpace::kHbm, bytes, "source");
  const auto destination = simulation.Allocate(0, MemorySpace::kVmem, bytes, "destination");
  const auto landed = simulation.AddSemaphore(0, base::SemaphoreKind::kDma, "landed");
  Picoseconds op_end = 0, all_end = 0;
  const auto outcome = simulation.Run([&](CorePort& core) {
    base::ByteBox box;
    box.counts = {bytes};
    box.strides = {1};
    base::DmaRequest request;
    request.source = {source, box};
    request.destination = {destination, box};
    request.recv_semaphore = landed;
    request.label = "dma";
    core.StartDma(request);
    core.Execute(Reads(bytes), "op");
    op_end = core.Now();
    core.Wait(landed, static_cast<int64_t>(bytes), base::WaitKind::kDmaRecv, "landed");
    all_end = core.Now();
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  // Alone each takes 4 chunk times; together the port carries 8 chunks, interleaved, so the
  // op ends no earlier than its 4 chunks behind 3 of the DMA's, and the last ends at 8.
  EXPECT_GE(op_end, 7 * chunk);
  EXPECT_EQ(std::max(op_end, all_end), 8 * chunk);
}

// The slowest chip the loader accepts: 1 MHz, kernel dots at 1% of the peak, int32 dots of 64
// passes.
config::Topology SlowChip() {
  return testing::MakeTopology({1}, {false}, [](config::Topology& t) {
    t.mutable_chip()->set_clock_hz(1e6);
    t.mutable_chip()->mutable_cost()->set_mxu_efficiency(0.01);
    t.mutable_chip()->mutable_cost()->set_int32_dot_passes(64);
  });
}

// The run's error when chip 0 describes `work` as `what`.
std::string WorkError(const config::Topology& topology, const base::Work& work,
                      const std::string& what) {
  sim::Simulation simulation(topology, TimingOnly());
  const auto outcome = simulation.Run([&](CorePort& core) { core.Execute(work, what); });
  EXPECT_FALSE(outcome.ok) << "timed " << what;
  EXPECT_EQ(outcome.error_kind, ErrorKind::kInvalidArgument) << outcome.error;
  return outcome.error;
}

TEST(ComputeModel, WorkTooLongToTimeNamesTheTopologyValuesItsTimeComesFrom) {
  const std::string dot =
      WorkError(SlowChip(), base::KernelDot{32768, 32768, 32768, base::MxuInput::kInt32}, "dot");
  EXPECT_NE(dot.find("a dot of int32 [32768, 32768] x [32768, 32768] would take "),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("more than the 1000000 s one op may take"), std::string::npos) << dot;
  EXPECT_NE(dot.find("chip.cost.mxu_efficiency (0.01), chip.cost.int32_dot_passes (64), "
                     "chip.mxu_size (128), chip.mxu_count (4) and chip.clock_hz (1000000)"),
            std::string::npos)
      << dot;
  base::XlaOp op;
  op.dots.push_back({2.0 * 131072 * 131072 * 131072, base::MxuInput::kInt32});
  const std::string xla = WorkError(SlowChip(), op, "dot");
  EXPECT_NE(xla.find("the op 'dot' would take "), std::string::npos) << xla;
  EXPECT_NE(xla.find("chip.hbm.bandwidth_bytes_per_s (819000000000) and the MXU peak "
                     "(chip.mxu_count 4, chip.mxu_size 128, chip.clock_hz 1000000)"),
            std::string::npos)
      << xla;
}

TEST(ComputeModel, WorkSlowedPastTheClockNamesChipSlowdown) {
  base::EngineOptions options = TimingOnly();
  // 1e8 leaves the memories above the slowdown's floor (sim/slowdown.h); a dot of 2^49 FLOPs
  // takes seconds, and 1e8 times that is past what 64-bit picoseconds count.
  options.chip_slowdown = {1e8};
  for (const base::Work& work : {base::Work{base::KernelDot{1 << 16, 1 << 16, 1 << 16}}}) {
    sim::Simulation simulation(OneChip(1500), options);
    const auto outcome = simulation.Run([&](CorePort& core) { core.Execute(work, "op"); });
    ASSERT_FALSE(outcome.ok);
    EXPECT_EQ(outcome.error_kind, ErrorKind::kInvalidArgument) << outcome.error;
    EXPECT_NE(outcome.error.find("chip 0 (x=0): 'op' would take "), std::string::npos)
        << outcome.error;
    EXPECT_NE(outcome.error.find("times chip_slowdown 100000000), more than simulated time can "
                                 "count"),
              std::string::npos)
        << outcome.error;
  }
}

TEST(ComputeModel, ATopologyNamingAModelThatIsNotRegisteredIsRefused) {
  const config::Topology topology = testing::MakeTopology({1}, {false}, [](config::Topology& t) {
    t.mutable_chip()->mutable_cost()->set_model("nonesuch");
  });
  try {
    sim::Simulation simulation(topology, TimingOnly());
    FAIL() << "expected the slice to be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compute model 'nonesuch'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("'roofline'"), std::string::npos) << e.what();
  }
}

TEST(ComputeModel, AParameterTheModelDoesNotTakeIsRefused) {
  const config::Topology topology = testing::MakeTopology({1}, {false}, [](config::Topology& t) {
    auto* p = t.mutable_chip()->mutable_cost()->add_parameter();
    p->set_name("speed");
    p->set_value(2);
  });
  try {
    sim::Simulation simulation(topology, TimingOnly());
    FAIL() << "expected the slice to be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gives parameter 'speed' to compute model 'roofline'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tpusim::modules
