#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>

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
    EXPECT_THAT(e.what(), HasSubstr("at least 1000000"));
  }
}

// The loader's ranges are declarations of base/param.h: each is sound, named once, and the
// message of a value outside one quotes that declaration's bounds, unit and reason.
TEST(Topology, FieldRangesAreSoundDeclarationsThatTheMessagesQuote) {
  std::set<std::string> names;
  for (const auto& range : FieldRanges()) {
    EXPECT_EQ(range.Problem(), "") << range.name();
    EXPECT_TRUE(names.insert(range.name()).second) << range.name() << " is declared twice";
    ASSERT_TRUE(range.min() && range.max()) << range.name();
    EXPECT_FALSE(range.unit().empty()) << range.name();
  }
  const auto& clock = *std::find_if(FieldRanges().begin(), FieldRanges().end(),
                                    [](const auto& range) { return range.name() == "clock"; });
  try {
    ParseTopology(PresetWith("clock_hz: 1.5e9", "clock_hz: 5"), "slow.textproto");
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'chip.clock_hz' is 5, outside its range: it must be at "
                                    "least 1000000 and at most 100000000000 (" +
                                    clock.unit() + "; " + clock.description() + ")"));
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
      PresetWith("shape: [2, 2]", "shape: [16]\n  axis_names: [\"ring\"]"),
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

// The time model's fields (docs/time-model.md): each is range-checked when the file loads, and
// the error names the field.
std::string FieldError(const std::string& from, const std::string& to) {
  try {
    ParseTopology(PresetWith(from, to), "c.textproto");
  } catch (const TopologyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded with " << to;
  return "";
}

TEST(Topology, TimeModelFieldsAreRangeChecked) {
  struct Case {
    const char *from, *to, *field;
  };
  for (const Case& c :
       {Case{"op_launch_ns: 1700", "op_launch_ns: -1", "chip.cost.op_launch_ns"},
        Case{"xla_mxu_efficiency: 0.94", "xla_mxu_efficiency: 1.5", "chip.cost.xla_mxu_efficiency"},
        Case{"xla_hbm_efficiency: 0.868", "xla_hbm_efficiency: 0", "chip.cost.xla_hbm_efficiency"},
        Case{"xla_pipeline_step_bytes: 1e8", "xla_pipeline_step_bytes: -1",
             "chip.cost.xla_pipeline_step_bytes"},
        Case{"issue_latency_ns: 0", "issue_latency_ns: -5", "chip.dma.issue_latency_ns"},
        Case{"signal_latency_ns: 2800", "signal_latency_ns: -5", "ici.signal_latency_ns"}}) {
    EXPECT_THAT(FieldError(c.from, c.to), HasSubstr(std::string("field '") + c.field + "'"));
  }
  EXPECT_THAT(
      FieldError("op_launch_ns: 1700", "op_launch_ns: 1700 model: \"\""),
      HasSubstr("field 'chip.cost.model' is empty; name a timing model, e.g. \"roofline\""));
}

// Overrides (link_override, chip_override): each is checked against the mesh when the file
// loads, and each error names the override, the field and what to do.
std::string OverrideError(const std::string& overrides, const std::string& shape = "") {
  std::string text = PresetText("v5e-2x2");
  if (!shape.empty()) text = Replace(text, "shape: [2, 2]", shape);
  try {
    ParseTopology(text + overrides, "o.textproto");
  } catch (const TopologyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded: " << overrides;
  return "";
}

TEST(TopologyOverrides, CoordinatesMustNameAChipOfTheMesh) {
  EXPECT_EQ(OverrideError(R"(link_override { chip: [0, 0, 0] direction: "x+" latency_ns: 1 })"),
            "topology o.textproto: field 'link_override[0].chip' has 3 coordinates, but the mesh "
            "has 2 axes; give one per axis, e.g. chip: [3, 1]");
  EXPECT_EQ(OverrideError(R"(chip_override { chip: [0, 2] dma { engines: 2 } })"),
            "topology o.textproto: field 'chip_override[0].chip' has coordinate 2 on axis 'y', "
            "which has 2 chips (0 to 1)");
}

TEST(TopologyOverrides, ALinkMustExist) {
  // v5e-2x2 has no wraparound: chip (1, 0) is at the + edge of x.
  EXPECT_EQ(OverrideError(R"(link_override { chip: [1, 0] direction: "x+" latency_ns: 1 })"),
            "topology o.textproto: field 'link_override[0]' names the x+ link of chip (1, 0), "
            "which does not exist: axis 'x' has no wraparound and the chip is at its edge");
  EXPECT_EQ(OverrideError(R"(link_override { chip: [0, 0] direction: "y-" latency_ns: 1 })"),
            "topology o.textproto: field 'link_override[0]' names the y- link of chip (0, 0), "
            "which does not exist: axis 'y' has no wraparound and the chip is at its edge");
  EXPECT_EQ(OverrideError(R"(link_override { chip: [0, 0] direction: "y+" latency_ns: 1 })",
                          "shape: [2, 1]"),
            "topology o.textproto: field 'link_override[0]' names the y+ link of chip (0, 0), "
            "which does not exist: axis 'y' has one chip");
  // With wraparound the edge chip has the link back to the start (a hypothetical 2-chip ring).
  EXPECT_NO_THROW(
      ParseTopology("allow_nonphysical: true\n" +
                        Replace(PresetText("v5e-2x2"), "wraparound: [false, false]",
                                "wraparound: [true, false]") +
                        R"(link_override { chip: [1, 0] direction: "x+" latency_ns: 1 })",
                    "wrap.textproto"));
}

TEST(TopologyOverrides, ADirectionIsAMeshAxisAndASign) {
  for (const char* direction : {"z+", "x", "+", "x*", ""}) {
    EXPECT_EQ(OverrideError(std::string("link_override { chip: [0, 0] direction: \"") + direction +
                            "\" latency_ns: 1 }"),
              std::string("topology o.textproto: field 'link_override[0].direction' is '") +
                  direction + "'; give a mesh axis and + or -, e.g. 'x+', 'y+'")
        << direction;
  }
}

TEST(TopologyOverrides, EachLinkOrChipIsOverriddenOnce) {
  EXPECT_EQ(OverrideError(R"(link_override { chip: [0, 1] direction: "x+" latency_ns: 1 }
link_override { chip: [0, 1] direction: "x+" bandwidth_bytes_per_s: 1e10 })"),
            "topology o.textproto: field 'link_override[1]' overrides the x+ link of chip (0, 1) "
            "a second time; merge the two");
  EXPECT_EQ(OverrideError(R"(chip_override { chip: [1, 1] dma { engines: 2 } }
chip_override { chip: [1, 1] hbm { bandwidth_bytes_per_s: 1e11 } })"),
            "topology o.textproto: field 'chip_override[1]' overrides chip (1, 1) a second time; "
            "merge the two");
  // The two directions of one link pair are two links.
  EXPECT_NO_THROW(ParseTopology(PresetText("v5e-2x2") +
                                    R"(link_override { chip: [0, 0] direction: "x+" latency_ns: 1 }
link_override { chip: [1, 0] direction: "x-" latency_ns: 1 })",
                                "pair.textproto"));
}

TEST(TopologyOverrides, AnOverrideMustChangeSomething) {
  EXPECT_EQ(OverrideError(R"(link_override { chip: [0, 0] direction: "x+" })"),
            "topology o.textproto: field 'link_override[0]' changes nothing; give "
            "bandwidth_bytes_per_s, latency_ns or both");
  EXPECT_EQ(OverrideError(R"(chip_override { chip: [0, 0] })"),
            "topology o.textproto: field 'chip_override[0]' changes nothing; give hbm, vmem, "
            "smem or dma fields");
}

TEST(TopologyOverrides, ValuesAreCheckedLikeTheSlicesOwn) {
  EXPECT_THAT(
      OverrideError(R"(link_override { chip: [0, 0] direction: "x+" bandwidth_bytes_per_s: 0 })"),
      HasSubstr("field 'link_override[0].bandwidth_bytes_per_s'"));
  EXPECT_THAT(OverrideError(R"(link_override { chip: [0, 0] direction: "x+" latency_ns: -1 })"),
              HasSubstr("field 'link_override[0].latency_ns'"));
  EXPECT_THAT(OverrideError(R"(chip_override { chip: [0, 0] dma { engines: 65 } })"),
              HasSubstr("field 'chip_override[0].dma.engines'"));
  EXPECT_THAT(OverrideError(R"(chip_override { chip: [0, 0] hbm { model: "" } })"),
              HasSubstr("field 'chip_override[0].hbm.model' is empty"));
  EXPECT_THAT(OverrideError(R"(chip_override { chip: [0, 0] hbm {
  parameter { name: "banks" value: 8 } parameter { name: "banks" value: 16 } } })"),
              HasSubstr("gives 'banks' twice"));
}

TEST(TopologyOverrides, ChipAtAndLinkAtApplyThem) {
  const auto t = ParseTopology(PresetText("v5e-2x2") + R"(
link_override { chip: [0, 1] direction: "x+" bandwidth_bytes_per_s: 2.25e10 }
link_override { chip: [1, 1] direction: "x-" latency_ns: 5000 }
chip_override { chip: [1, 0] hbm { bandwidth_bytes_per_s: 4.095e11 } dma { engines: 2 } }
chip_override { chip: [0, 1] hbm { model: "row_buffer" parameter { name: "banks" value: 8 } } }
)",
                               "ok.textproto");
  const auto slow = LinkAt(t, {0, 1}, "x+");
  EXPECT_EQ(slow.bandwidth_bytes_per_s, 2.25e10);
  EXPECT_EQ(slow.latency_ns, 1000);  // not overridden: the slice's
  const auto late = LinkAt(t, {1, 1}, "x-");
  EXPECT_EQ(late.bandwidth_bytes_per_s, 4.5e10);
  EXPECT_EQ(late.latency_ns, 5000);
  EXPECT_EQ(LinkAt(t, {0, 0}, "x+").bandwidth_bytes_per_s, 4.5e10);
  EXPECT_EQ(LinkAt(t, {1, 1}, "y-").latency_ns, 1000);
  const auto chip = ChipAt(t, {1, 0});
  EXPECT_EQ(chip.hbm().bandwidth_bytes_per_s(), 4.095e11);
  EXPECT_EQ(chip.hbm().capacity_bytes(), t.chip().hbm().capacity_bytes());  // kept
  EXPECT_EQ(chip.dma().engines(), 2u);
  EXPECT_EQ(chip.dma().chunk_bytes(), t.chip().dma().chunk_bytes());
  const auto modelled = ChipAt(t, {0, 1});
  EXPECT_EQ(modelled.hbm().model(), "row_buffer");
  ASSERT_EQ(modelled.hbm().parameter_size(), 1);
  EXPECT_EQ(modelled.hbm().parameter(0).name(), "banks");
  EXPECT_EQ(ChipAt(t, {0, 0}).hbm().bandwidth_bytes_per_s(), 8.19e11);
  EXPECT_FALSE(ChipAt(t, {0, 0}).hbm().has_model());
}

}  // namespace
}  // namespace tpusim::topologies
