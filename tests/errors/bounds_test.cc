// Bounds on every input: each numeric topology field has a sane range, and a value outside
// it names the field, the value and the range; loaders refuse directories, devices and
// oversized files; sizes computed from inputs never wrap; host memory is checked before
// allocating; a PartitionSpec longer than its array's rank is refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

struct OutOfRange {
  std::string from;   // a line of the v5e-2x2 preset
  std::string to;     // its replacement
  std::string field;  // what the error must name
  std::string value;
};

void PrintTo(const OutOfRange& c, std::ostream* os) {
  *os << c.field << " = " << c.value;
}

class TopologyRanges : public ::testing::TestWithParam<OutOfRange> {};

TEST_P(TopologyRanges, OutOfRangeValueNamesTheFieldTheValueAndTheRange) {
  const OutOfRange& c = GetParam();
  try {
    topologies::ParseTopology(Replace(topologies::PresetText("v5e-2x2"), c.from, c.to),
                              "range.textproto");
    FAIL() << "accepted " << c.to;
  } catch (const topologies::TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("range.textproto"));
    EXPECT_THAT(e.what(), HasSubstr("field '" + c.field + "' is " + c.value));
    EXPECT_THAT(e.what(), AllOf(HasSubstr("outside its range"), HasSubstr("at most")));
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryNumericField, TopologyRanges,
    ::testing::Values(
        OutOfRange{"shape: [2, 2]", "shape: [65536, 65536]", "mesh.shape[0]", "65536"},
        OutOfRange{"shape: [2, 2]", "shape: [4, 1000000]", "mesh.shape[1]", "1000000"},
        OutOfRange{"shape: [2, 2]", "shape: [2147483648, 1]", "mesh.shape[0]", "2147483648"},
        OutOfRange{"shape: [2, 2]", "shape: [128, 256]",
                   "mesh.shape (the chip count, the product of the axes)", "32768"},
        OutOfRange{"link_bandwidth_bytes_per_s: 4.5e10", "link_bandwidth_bytes_per_s: inf",
                   "ici.link_bandwidth_bytes_per_s", "inf"},
        OutOfRange{"link_bandwidth_bytes_per_s: 4.5e10", "link_bandwidth_bytes_per_s: nan",
                   "ici.link_bandwidth_bytes_per_s", "nan"},
        OutOfRange{"bandwidth_bytes_per_s: 8.19e11", "bandwidth_bytes_per_s: -1",
                   "chip.hbm.bandwidth_bytes_per_s", "-1"},
        OutOfRange{"capacity_bytes: 16000000000", "capacity_bytes: 18446744073709551615",
                   "chip.hbm.capacity_bytes", "18446744073709551615"},
        OutOfRange{"capacity_bytes: 1048576", "capacity_bytes: 0", "chip.smem.capacity_bytes", "0"},
        OutOfRange{"clock_hz: 1.5e9", "clock_hz: 1e-300", "chip.clock_hz", "1e-300"},
        OutOfRange{"tensor_cores: 1", "tensor_cores: 4294967295", "chip.tensor_cores",
                   "4294967295"},
        OutOfRange{"mxu_size: 128", "mxu_size: 4294967295", "chip.mxu_size", "4294967295"},
        OutOfRange{"mxu_count: 4", "mxu_count: 0", "chip.mxu_count", "0"},
        OutOfRange{"vpu_lanes: 128", "vpu_lanes: 0", "chip.vpu_lanes", "0"},
        OutOfRange{"engines: 8", "engines: 4294967295", "chip.dma.engines", "4294967295"},
        OutOfRange{"chunk_bytes: 524288", "chunk_bytes: 1", "chip.dma.chunk_bytes", "1"},
        OutOfRange{"hop_latency_ns: 1000", "hop_latency_ns: -1", "ici.hop_latency_ns", "-1"},
        OutOfRange{"hop_latency_ns: 1000", "hop_latency_ns: inf", "ici.hop_latency_ns", "inf"},
        // Values that once passed and made times overflow (tests/errors/hardware_range_test.cc).
        OutOfRange{"mxu_efficiency: 0.92", "mxu_efficiency: 1e-16", "chip.cost.mxu_efficiency",
                   "1e-16"},
        OutOfRange{"int8_mxu_rate: 2", "int8_mxu_rate: 1e-300", "chip.cost.int8_mxu_rate",
                   "1e-300"},
        OutOfRange{"int32_dot_passes: 8", "int32_dot_passes: 0.5", "chip.cost.int32_dot_passes",
                   "0.5"},
        OutOfRange{"bandwidth_bytes_per_s: 8.19e11", "bandwidth_bytes_per_s: 1e-300",
                   "chip.hbm.bandwidth_bytes_per_s", "1e-300"}));

TEST(TopologyRanges, TheErrorSaysWhyTheRangeIsWhatItIs) {
  try {
    topologies::ParseTopology(
        Replace(topologies::PresetText("v5e-2x2"), "mxu_efficiency: 0.92", "mxu_efficiency: 1e-16"),
        "why.textproto");
    FAIL();
  } catch (const topologies::TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("must be at least 0.01 and at most 1 (fraction of the MXU "
                                    "peak a dot sustains; a chip whose dots reach less than 1% "
                                    "of its peak is no chip"));
  }
}

TEST(TopologyLoader, RefusesADirectoryByName) {
  const std::string dir = testing::TempPath("topology-dir");
  std::filesystem::create_directories(dir);
  try {
    topologies::LoadTopology(dir);
    FAIL();
  } catch (const topologies::TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir + " is a directory"));
    EXPECT_THAT(e.what(), Not(HasSubstr("field 'chip' is missing")));
  }
}

TEST(TopologyLoader, RefusesADeviceInsteadOfReadingIt) {
  try {
    topologies::LoadTopology("/dev/zero");  // would never end if read to its end
    FAIL();
  } catch (const topologies::TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/dev/zero is not a regular file"));
  }
}

TEST(TopologyLoader, ReadsAtMostItsStatedSize) {
  const std::string path = testing::TempPath("huge.textproto");
  {
    std::ofstream file(path);
    const std::string comment = "# " + std::string(1000, 'x') + "\n";
    for (size_t written = 0; written <= topologies::kMaxTopologyFileBytes;
         written += comment.size())
      file << comment;
  }
  try {
    topologies::LoadTopology(path);
    FAIL();
  } catch (const topologies::TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is larger than 1048576 bytes"));
  }
}

TEST(Sizes, MeshOfAnUnvalidatedTopologyRefusesAChipCountThatOverflows) {
  config::Topology t = testing::MakeTopology({2, 2}, {false, false});
  t.mutable_mesh()->set_shape(0, 65536);
  t.mutable_mesh()->set_shape(1, 65536);
  try {
    Mesh mesh(t);
    FAIL() << mesh.devices() << " devices";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("more than the 32768 devices a slice may have"));
  }
}

TEST(Sizes, ElementCountThatOverflowsIsRefused) {
  try {
    Array a({int64_t{1} << 40, int64_t{1} << 40}, DType::kF32);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("more elements than a 64-bit count holds"));
  }
}

TEST(HostMemory, AnArrayThatWouldNotFitSaysWhatItNeedsBeforeAllocating) {
  const uint64_t available = AvailableHostMemory();
  ASSERT_GT(available, 0u);
  // Twice what the machine has, so a std::bad_alloc would be the alternative.
  const int64_t elements = static_cast<int64_t>(std::min<uint64_t>(available, 1ull << 60) / 2);
  try {
    Array a({elements, 4}, DType::kF32);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_THAT(e.what(), HasSubstr("the array f32["));
    EXPECT_THAT(e.what(), HasSubstr("of host memory, but only"));
    EXPECT_THAT(e.what(), HasSubstr("run it timing-only (no payload, the same timing)"));
  }
}

// A 4-chip ring whose output block is 1-D.
ShardMap WithOutSpec(PartitionSpec out_spec) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  PallasCall call = pallas_call("rank", [](Kernel&, const Refs&) {}, grid, {{{256}, DType::kF32}});
  return shard_map(Mesh(testing::MakeTopology({2, 2}, {false, false})), {P{"x"}}, {out_spec}, call);
}

TEST(Specs, OutSpecWithMoreEntriesThanTheOutputsRankIsRefused) {
  try {
    WithOutSpec(P{"x", "y"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("out_specs[0] P('x', 'y') names 2 dimensions, but output 0 "
                                    "has rank 1"));
  }
}

TEST(Specs, BlockOffsetsRefusesASpecLongerThanTheArraysRank) {
  const Mesh mesh(testing::MakeTopology({2, 2}, {false, false}));
  try {
    P{"x", nullptr, "y"}.BlockOffsets(mesh, {8, 8}, 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("names 3 dimensions, but the array has shape (8, 8)"));
  }
}

}  // namespace
}  // namespace tpusim
