#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim::topologies {
namespace {

using ::testing::HasSubstr;

TEST(Topology, EveryPresetLoadsAndNamesItself) {
  const auto names = PresetNames();
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) {
    const auto t = LoadTopology(name);
    EXPECT_EQ(t.name(), name);
    EXPECT_EQ(t.mesh().axis_names_size(), t.mesh().shape_size()) << name;
  }
}

TEST(Topology, V5eWrapsOnlyAxesOfLength16) {
  for (const auto& name : PresetNames()) {
    if (name.rfind("v5e", 0) != 0 && name.rfind("v6e", 0) != 0) continue;
    const auto t = LoadTopology(name);
    for (int a = 0; a < t.mesh().shape_size(); ++a)
      EXPECT_EQ(t.mesh().wraparound(a), t.mesh().shape(a) == 16) << name << " axis " << a;
  }
}

TEST(Topology, V5eNumbersMatchReferences) {
  const auto t = LoadTopology("v5e-4x4");
  EXPECT_DOUBLE_EQ(t.chip().clock_hz(), 1.5e9);
  EXPECT_DOUBLE_EQ(t.chip().hbm().bandwidth_bytes_per_s(), 8.19e11);
  EXPECT_DOUBLE_EQ(t.ici().link_bandwidth_bytes_per_s(), 4.5e10);
  // 4 MXU x 128 x 128 x 2 FLOP x 1.5 GHz = 1.97e14 FLOP/s (docs/references.md §1).
  EXPECT_NEAR(
      t.chip().mxu_count() * t.chip().mxu_size() * t.chip().mxu_size() * 2.0 * t.chip().clock_hz(),
      1.97e14, 0.01e14);
  EXPECT_EQ(t.mesh().axis_names(0), "x");
  EXPECT_EQ(t.mesh().axis_names(1), "y");
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string PresetWith(const std::string& from, const std::string& to) {
  return Replace(PresetText("v5e-2x2"), from, to);
}

TEST(Topology, SyntaxErrorNamesTheFileAndLine) {
  try {
    ParseTopology("name: \"broken\"\nchip {\n  clock_hz: \n", "bad.textproto");
    FAIL() << "expected TopologyError";
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.textproto:"));
  }
}

TEST(Topology, UnknownFieldIsRejectedWithItsName) {
  try {
    ParseTopology(PresetWith("mxu_count: 4", "mxu_count: 4\n  tensor_corez: 2"), "t.textproto");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor_corez"));
    EXPECT_THAT(e.what(), HasSubstr("t.textproto"));
  }
}

TEST(Topology, ZeroBandwidthIsImpossible) {
  try {
    ParseTopology(PresetWith("link_bandwidth_bytes_per_s: 4.5e10", "link_bandwidth_bytes_per_s: 0"),
                  "zero.textproto");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("zero.textproto"));
    EXPECT_THAT(e.what(), HasSubstr("ici.link_bandwidth_bytes_per_s"));
    EXPECT_THAT(e.what(), HasSubstr("greater than zero"));
  }
}

TEST(Topology, AxisNamesMustMatchTheShape) {
  try {
    ParseTopology(PresetWith("shape: [2, 2]", "shape: [2, 2]\n  axis_names: [\"data\"]"),
                  "n.textproto");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mesh.axis_names"));
    EXPECT_THAT(e.what(), HasSubstr("names 1 axes, but mesh.shape has 2"));
  }
}

TEST(Topology, ChunkSizeOfZeroIsRejected) {
  try {
    ParseTopology(PresetWith("chunk_bytes: 524288", "chunk_bytes: 0"), "c.textproto");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("chip.dma.chunk_bytes"));
  }
}

TEST(Topology, CustomAxisNamesAndPathsWork) {
  const std::string path = tpusim::testing::TempPath("ring.textproto");
  std::ofstream(path) << Replace(
      PresetWith("shape: [2, 2]", "shape: [8]\n  axis_names: [\"ring\"]"),
      "wraparound: [false, false]", "wraparound: [true]");
  const auto t = LoadTopology(path);
  EXPECT_EQ(t.mesh().axis_names(0), "ring");
  EXPECT_TRUE(t.mesh().wraparound(0));
}

TEST(Topology, UnknownNameListsThePresets) {
  try {
    LoadTopology("v9z-1x1");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("v9z-1x1"));
    EXPECT_THAT(e.what(), HasSubstr("v5e-4x4"));
  }
}

}  // namespace
}  // namespace tpusim::topologies
