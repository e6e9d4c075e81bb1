// How fast the model's parts move DMA chunks, so regressions show (Google Benchmark; not in
// ctest): `build/benchmarks/model_benchmarks` (or `make bench`).
//
// - One IciLink and one Memory, each on its own in a SystemC context: chunk transactions as a
//   DMA engine sends them (TLM_IGNORE_COMMAND with a ChunkExtension; b_transport, or the
//   router's BookMemoryHop for a memory), against the direct ChunkTarget booking the engine
//   uses for the model's own targets. Time advances a chunk's duration per transaction (or
//   per `contenders` transactions), so each port keeps a short calendar, as in a run.
// - A whole collective, timing-only: model events (calendar callbacks) per second of wall
//   time, with direct booking and with book_through_tlm.
// - A functional collective cut into many small DMAs, with and without the race check
//   (sim/race_detector.h), so the check's cost per DMA shows.

#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <systemc>
#include <tlm>

#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "sim/chunk.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/port_timing.h"
#include "sim/systemc_context.h"
#include "sim/torus.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using base::Picoseconds;

constexpr uint64_t kChunkBytes = 512 << 10;  // v5e's DMA chunk
constexpr double kLinkBandwidth = 4.5e10;    // v5e ICI, one way
constexpr double kHbmBandwidth = 8.19e11;    // v5e HBM

// One chunk transaction, reused: what a DmaEngine's payload pool hands out.
class Chunk {
 public:
  Chunk(uint64_t address, uint64_t bytes) : extension_(new sim::ChunkExtension) {
    payload_.set_extension(extension_);
    payload_.set_command(tlm::TLM_IGNORE_COMMAND);
    payload_.set_address(address);
    payload_.set_data_length(static_cast<unsigned int>(bytes));
    extension_->label = &label_;
    extension_->transfer = 1;
    extension_->forward = false;  // the engine calls each hop itself
  }
  tlm::tlm_generic_payload& payload() { return payload_; }
  sim::ChunkExtension& extension() { return *extension_; }
  void Start(Picoseconds now) {
    extension_->schedule = sim::ChunkSchedule(now);
    payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }

 private:
  std::string label_ = "benchmark";
  tlm::tlm_generic_payload payload_;
  sim::ChunkExtension* extension_;  // owned by payload_
};

void SetRate(benchmark::State& state, int64_t per_iteration) {
  state.SetItemsProcessed(state.iterations() * per_iteration);
  state.counters["transactions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * per_iteration), benchmark::Counter::kIsRate);
}

// IciLink::b_transport, as DmaEngine calls a link hop with book_through_tlm.
void BM_IciLinkBTransport(benchmark::State& state) {
  const int contenders = static_cast<int>(state.range(0));
  sim::SystemCContext context;
  const sim::Torus torus({2}, {"x"}, {false});
  sim::LinkTiming timing("chip 0 ICI x+", kLinkBandwidth, 1'000'000, nullptr, 0);
  sim::IciLink link("ici_x+", torus.link(0), timing, "chip_1");
  tlm::tlm_fw_transport_if<>& target = link.in;  // what the router calls
  Chunk chunk(sim::MakeAddress(1, base::MemorySpace::kHbm, 0), kChunkBytes);
  const Picoseconds step = contenders * base::TransferTime(kChunkBytes, kLinkBandwidth);
  Picoseconds now = 0;
  for (auto _ : state) {
    for (int c = 0; c < contenders; ++c) {
      chunk.Start(now);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      target.b_transport(chunk.payload(), delay);
    }
    benchmark::DoNotOptimize(chunk.extension().schedule.arrival());
    now += step;
  }
  SetRate(state, contenders);
}
BENCHMARK(BM_IciLinkBTransport)->Arg(1)->Arg(4);

// `contenders` chunks a step booked straight on `target`, as DmaEngine books the model's
// own links and memories (no TLM call).
void BookDirect(benchmark::State& state, sim::ChunkTarget& target, double bandwidth) {
  const int contenders = static_cast<int>(state.range(0));
  const Picoseconds step = contenders * base::TransferTime(kChunkBytes, bandwidth);
  const std::string label = "benchmark";
  Picoseconds now = 0;
  for (auto _ : state) {
    for (int c = 0; c < contenders; ++c) {
      sim::ChunkSchedule schedule(now);
      target.BookChunk(schedule, kChunkBytes, 1, &label);
      benchmark::DoNotOptimize(schedule.arrival());
    }
    now += step;
  }
  SetRate(state, contenders);
}

// LinkTiming::BookChunk.
void BM_IciLinkDirect(benchmark::State& state) {
  sim::LinkTiming timing("chip 0 ICI x+", kLinkBandwidth, 1'000'000, nullptr, 0);
  BookDirect(state, timing, kLinkBandwidth);
}
BENCHMARK(BM_IciLinkDirect)->Arg(1)->Arg(4);

// A memory hop as the router or DmaEngine books it: BookMemoryHop -> Memory::b_transport.
void BM_MemoryBTransport(benchmark::State& state) {
  const int contenders = static_cast<int>(state.range(0));
  sim::SystemCContext context;
  sim::MemoryPortTiming timing("chip 0 HBM", kHbmBandwidth, nullptr, 0);
  sim::Memory hbm("hbm", 0, "chip 0", base::MemorySpace::kHbm, uint64_t{1} << 34,
                  /*functional=*/false, timing);
  tlm::tlm_fw_transport_if<>& target = hbm;  // what the router's socket resolves to
  const uint32_t buffer = hbm.Allocate(kChunkBytes, "buffer");
  Chunk chunk(hbm.Address(buffer, 0), kChunkBytes);
  const Picoseconds step = contenders * base::TransferTime(kChunkBytes, kHbmBandwidth);
  Picoseconds now = 0;
  for (auto _ : state) {
    for (int c = 0; c < contenders; ++c) {
      chunk.Start(now);
      sim::BookMemoryHop(target, chunk.payload(), chunk.extension());
    }
    benchmark::DoNotOptimize(chunk.extension().schedule.arrival());
    now += step;
  }
  SetRate(state, contenders);
}
BENCHMARK(BM_MemoryBTransport)->Arg(1)->Arg(4);

// MemoryPortTiming::BookChunk.
void BM_MemoryDirect(benchmark::State& state) {
  sim::MemoryPortTiming timing("chip 0 HBM", kHbmBandwidth, nullptr, 0);
  BookDirect(state, timing, kHbmBandwidth);
}
BENCHMARK(BM_MemoryDirect)->Arg(1)->Arg(4);

// A whole bidirectional all-gather along x of v5e-4x4 (4 chips a ring, 1 GiB), timing-only:
// model events per second, the slice built and run each iteration.
void BM_AllGatherBidiEvents(benchmark::State& state) {
  const bool through_tlm = state.range(0) != 0;
  const auto* info = kernels::Registry::Get().Find("all_gather_bidi");
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-4x4"));
  kernels::Params params = info->Bind({{"bytes", uint64_t{1} << 30}});
  params.functional = false;
  const kernels::Workload workload = info->make(mesh, params);
  dsl::RunOptions options;
  options.functional = false;
  options.book_through_tlm = through_tlm;
  uint64_t events = 0;
  for (auto _ : state) {
    const dsl::RunResult result = workload.program.Run(workload.inputs, options);
    if (!result.ok) state.SkipWithError(result.error.c_str());
    events += result.stats.events;
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_AllGatherBidiEvents)
    ->ArgName("book_through_tlm")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// reduce_scatter_ring on v5e-2x2, 1 MiB of bf16 in 64-byte chunks (about 16K DMAs per
// chip), functional; race_check 1 or 0. The check should cost little beside the run.
void BM_RaceCheckedSmallChunks(benchmark::State& state) {
  const auto* info = kernels::Registry::Get().Find("reduce_scatter_ring");
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  kernels::Params params =
      info->Bind({{"bytes", uint64_t{1} << 20}, {"chunk_bytes", uint64_t{64}}});
  params.functional = true;
  const kernels::Workload workload = info->make(mesh, params);
  dsl::RunOptions options;
  options.race_check = state.range(0) != 0;
  for (auto _ : state) {
    const dsl::RunResult result = workload.program.Run(workload.inputs, options);
    if (!result.ok) state.SkipWithError(result.error.c_str());
  }
}
BENCHMARK(BM_RaceCheckedSmallChunks)
    ->ArgName("race_check")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tpusim
