// The TLM path and the direct path agree. A DMA engine books the model's own memories and
// links by direct calls (ChunkTarget) because a transaction per hop of every chunk costs
// about twice the wall time; EngineOptions::book_through_tlm sends every hop a TLM-2.0
// transaction instead. Both must give the same schedule, event for event:
// - module level: chunks sent as transactions through a slice's routers and links (each
//   forwarding to the next) against the same chunks booked hop by hop on a second slice;
// - whole runs: library collectives with book_through_tlm on and off give the same end
//   time, events, port statistics, outputs and trace bytes.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dsl/shard_map.h"
#include "kernels/registry.h"
#include "sim/chip.h"
#include "sim/dma_engine.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/router.h"
#include "sim/slice.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;

struct Chunk {
  ChipId from;
  ChipId to;
  MemorySpace space;  // the destination's
  uint64_t bytes;
  Picoseconds now;  // when the DMA engine books it; non-decreasing, as SystemC time
};

struct Booked {
  Picoseconds departure;
  Picoseconds arrival;
  Picoseconds pace;
  bool operator==(const Booked&) const = default;
};

// What the chunks' bookings leave on the slice: each chunk's schedule, then every link's
// and memory's busy time and bytes.
struct Outcome {
  std::vector<Booked> chunks;
  std::vector<std::pair<Picoseconds, uint64_t>> ports;
};

std::vector<std::pair<Picoseconds, uint64_t>> PortTotals(sim::Slice& slice) {
  std::vector<std::pair<Picoseconds, uint64_t>> ports;
  for (ChipId c = 0; c < slice.chips(); ++c) {
    for (const auto& link : slice.chip(c).links())
      ports.emplace_back(link->port().busy_time(), link->port().bytes_moved());
    for (MemorySpace space : {MemorySpace::kHbm, MemorySpace::kVmem}) {
      auto& port = slice.chip(c).memory(space).port();
      ports.emplace_back(port.busy_time(), port.bytes_moved());
    }
  }
  return ports;
}

enum class Path { kDirect, kRoutersDecide, kSourceRouted };

// Books every chunk on a fresh slice of `topology`: the read from the source HBM, then the
// write along the route, as one DMA engine would.
Outcome Book(const config::Topology& topology, const std::vector<Chunk>& chunks, Path how) {
  sim::SystemCContext context;
  sim::Slice slice("slice", topology, TimingOnly());
  Elaborate();
  Outcome outcome;
  for (const Chunk& c : chunks) {
    const uint64_t source = sim::MakeAddress(c.from, MemorySpace::kHbm, 0);
    const uint64_t destination = sim::MakeAddress(c.to, c.space, 0);
    const std::vector<sim::LinkId> route = slice.torus().Route(c.from, c.to);
    ChunkPayload chunk(source, c.bytes, c.now);
    if (how == Path::kDirect) {
      base::InlineVector<sim::PathHop, 4> path;
      sim::Router& router = slice.chip(c.from).router();
      router.PathTo(source, path);
      router.PathTo(destination, path);
      for (const sim::PathHop& hop : path)
        hop.direct->BookChunk(chunk.schedule(), c.bytes, 1, nullptr);
    } else {
      // Through the DMA engine's socket: the chip's router sends the read to the memory...
      auto& socket = slice.chip(c.from).dma().socket;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(chunk.payload(), delay);
      EXPECT_TRUE(chunk.payload().is_response_ok());
      EXPECT_EQ(delay.value(), chunk.schedule().arrival() - c.now);
      // ...and the write to the first link, which forwards it to the next router, and so on.
      chunk.chunk().forward = true;
      if (how == Path::kSourceRouted) chunk.chunk().route = route.data();
      chunk.payload().set_address(destination);
      delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(chunk.payload(), delay);
      EXPECT_TRUE(chunk.payload().is_response_ok());
      EXPECT_EQ(delay.value(), chunk.schedule().arrival() - c.now);
    }
    outcome.chunks.push_back(
        {chunk.schedule().departure(), chunk.schedule().arrival(), chunk.schedule().pace()});
  }
  outcome.ports = PortTotals(slice);
  return outcome;
}

TEST(TransactionPath, ChunksForwardedThroughRoutersAndLinksBookAsTheDirectPath) {
  const auto topology = testing::MakeTopology({4, 4}, {true, false});
  constexpr uint64_t kChunk = 512 << 10;
  // Chunks that meet on links and memories, from several chips, over time.
  std::vector<Chunk> chunks;
  for (Picoseconds now : {Picoseconds{0}, Picoseconds{0}, Picoseconds{5'000'000},
                          Picoseconds{5'000'000}, Picoseconds{40'000'000}}) {
    chunks.push_back({0, 10, MemorySpace::kHbm, kChunk, now});  // (0,0) -> (2,2): 4 hops
    chunks.push_back({1, 11, MemorySpace::kHbm, kChunk, now});  // shares y links with it
    chunks.push_back({4, 0, MemorySpace::kVmem, kChunk / 2, now});
    chunks.push_back({5, 5, MemorySpace::kVmem, kChunk, now});  // HBM -> VMEM of one chip
    chunks.push_back({12, 1, MemorySpace::kHbm, 4096, now});    // x wraps round
  }
  const Outcome direct = Book(topology, chunks, Path::kDirect);
  for (Path how : {Path::kRoutersDecide, Path::kSourceRouted}) {
    const Outcome through = Book(topology, chunks, how);
    ASSERT_EQ(through.chunks.size(), direct.chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
      EXPECT_EQ(through.chunks[i], direct.chunks[i])
          << "chunk " << i << ": arrival " << through.chunks[i].arrival << " vs "
          << direct.chunks[i].arrival;
    }
    EXPECT_EQ(through.ports, direct.ports);
  }
  // And they did contend: the second chunk waited for the first on the (2,1) y+ link.
  EXPECT_GT(direct.chunks[1].arrival, direct.chunks[0].arrival);
}

// A library collective's run, with or without book_through_tlm.
struct Run {
  dsl::RunResult result;
  std::string trace;  // the Perfetto file's bytes
};

// The bytes of a collective's full array, and whether it moves real data.
struct Args {
  uint64_t bytes = 0;
  bool functional = true;
};

Run RunCollective(const std::string& kernel, const config::Topology& topology, const Args& args,
                  bool through_tlm) {
  const auto* info = kernels::Registry::Get().Find(kernel);
  EXPECT_NE(info, nullptr) << kernel;
  const dsl::Mesh mesh(topology);
  kernels::Workload workload =
      info->make(mesh, testing::ParamsFor(kernel, {{"bytes", args.bytes}}, args.functional));
  const std::string path =
      testing::TempPath(kernel + (through_tlm ? ".tlm" : ".direct") + ".pftrace");
  auto sink = traces::OpenTraceFile(path);
  dsl::RunOptions options;
  options.functional = args.functional;
  options.trace = sink.get();
  options.book_through_tlm = through_tlm;
  Run run;
  run.result = workload.program.Run(workload.inputs, options);
  sink->Finish();
  sink.reset();
  std::ifstream in(path, std::ios::binary);
  run.trace.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return run;
}

void ExpectSameRun(const std::string& kernel, const config::Topology& topology, const Args& args) {
  SCOPED_TRACE(kernel);
  const Run direct = RunCollective(kernel, topology, args, false);
  const Run tlm = RunCollective(kernel, topology, args, true);
  ASSERT_TRUE(direct.result.ok) << direct.result.error;
  ASSERT_TRUE(tlm.result.ok) << tlm.result.error;
  EXPECT_GT(direct.result.stats.dmas, 0u);
  EXPECT_EQ(tlm.result.time(), direct.result.time());
  EXPECT_EQ(tlm.result.stats.events, direct.result.stats.events);
  EXPECT_EQ(tlm.result.stats.dmas, direct.result.stats.dmas);
  ASSERT_EQ(tlm.result.stats.links.size(), direct.result.stats.links.size());
  for (size_t i = 0; i < direct.result.stats.links.size(); ++i) {
    EXPECT_EQ(tlm.result.stats.links[i].busy, direct.result.stats.links[i].busy);
    EXPECT_EQ(tlm.result.stats.links[i].bytes, direct.result.stats.links[i].bytes);
  }
  ASSERT_EQ(tlm.result.stats.memories.size(), direct.result.stats.memories.size());
  for (size_t i = 0; i < direct.result.stats.memories.size(); ++i)
    EXPECT_EQ(tlm.result.stats.memories[i].busy, direct.result.stats.memories[i].busy);
  ASSERT_EQ(tlm.result.outputs.size(), direct.result.outputs.size());
  for (size_t i = 0; i < direct.result.outputs.size(); ++i)
    EXPECT_TRUE(dsl::CompareExact(tlm.result.outputs[i], direct.result.outputs[i]).equal);
  EXPECT_FALSE(direct.trace.empty());
  EXPECT_TRUE(tlm.trace == direct.trace) << "the traces differ";
}

TEST(TransactionPath, BookThroughTlmGivesTheSameRunForRingCollectives) {
  const auto topology = testing::MakeTopology({8}, {true});
  for (const char* kernel : {"all_gather_ring", "all_gather_bidi", "reduce_scatter_bidi"})
    ExpectSameRun(kernel, topology, Args{4 << 20});
}

TEST(TransactionPath, BookThroughTlmGivesTheSameRunForMultiHopAndTwoAxisCollectives) {
  // all_to_all sends over several hops; all_gather_2d over both axes of an open mesh.
  const auto topology = testing::MakeTopology({4, 2}, {false, false});
  ExpectSameRun("all_to_all", topology, Args{2 << 20});
  ExpectSameRun("all_gather_2d", topology, Args{2 << 20});
  ExpectSameRun("all_reduce_ring", topology, Args{8 << 20, /*functional=*/false});
}

TEST(TransactionPath, BookThroughTlmGivesTheSameRunWithATimingModelAndOverrides) {
  // One chip's HBM behind the row_buffer model (always booked by TLM), one slow link.
  const auto topology = testing::MakeTopology({4}, {true}, [](config::Topology& t) {
    auto* chip = t.add_chip_override();
    chip->add_chip(2);
    chip->mutable_hbm()->set_model("row_buffer");
    auto* link = t.add_link_override();
    link->add_chip(1);
    link->set_direction("x+");
    link->set_bandwidth_bytes_per_s(1.5e10);
  });
  ExpectSameRun("all_gather_bidi", topology, Args{4 << 20});
}

}  // namespace
}  // namespace tpusim::modules
