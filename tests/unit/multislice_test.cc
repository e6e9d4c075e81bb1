// Multi-slice topologies (config::MultisliceConfig, docs/model.md "Multi-slice"): how the loader
// adds the slice axis, each error a bad multislice or dcn block gives, and how the torus routes
// between slices over one DCN link.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/torus.h"
#include "topologies/topology_loader.h"

namespace tpusim::topologies {
namespace {

using ::testing::HasSubstr;

// v5e-2x4 (one 8-chip host per slice, docs/references.md §2a) with `block` appended.
config::Topology Load(const std::string& block, const std::string& preset = "v5e-2x4") {
  return ParseTopology(PresetText(preset) + block, "m.textproto");
}

std::string ErrorOf(const std::string& block, const std::string& preset = "v5e-2x4") {
  try {
    Load(block, preset);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Multislice, TheMeshGainsASliceAxisInFront) {
  const auto t = Load("multislice { slices: 3 }");
  ASSERT_EQ(t.mesh().shape_size(), 3);
  EXPECT_EQ(t.mesh().shape(0), 3u);
  EXPECT_EQ(t.mesh().shape(1), 2u);
  EXPECT_EQ(t.mesh().axis_names(0), "slice");
  EXPECT_FALSE(t.mesh().wraparound(0));
  EXPECT_EQ(DeviceCount(t), 24u);
}

TEST(Multislice, ALoadedTopologyValidatesAgainUnchanged) {
  auto t = Load("multislice { slices: 2 axis_name: \"dcn\" }");
  config::Topology again = t;
  ValidateTopology(again, "again");
  EXPECT_EQ(again.SerializeAsString(), t.SerializeAsString());
  EXPECT_EQ(again.mesh().axis_names(0), "dcn");
}

TEST(Multislice, WithSlicesNamesTheCountAndReplacesAnEarlierOne) {
  const auto two = WithSlices(LoadTopology("v5e-4x4"), 2, "v5e-4x4");
  EXPECT_EQ(two.name(), "v5e-4x4-2slices");
  EXPECT_EQ(DeviceCount(two), 32u);
  const auto four = WithSlices(two, 4, "v5e-4x4");
  EXPECT_EQ(four.mesh().shape_size(), 3);
  EXPECT_EQ(DeviceCount(four), 64u);
}

TEST(Multislice, AnOverrideNamesAChipWithinASliceAndHoldsInEverySlice) {
  const auto t = Load(
      "multislice { slices: 2 }\n"
      "chip_override { chip: [0, 1] hbm { bandwidth_bytes_per_s: 4.1e11 } }\n"
      "link_override { chip: [0, 1] direction: \"y+\" latency_ns: 5000 }");
  for (int slice : {0, 1}) {
    EXPECT_DOUBLE_EQ(ChipAt(t, {slice, 0, 1}).hbm().bandwidth_bytes_per_s(), 4.1e11) << slice;
    EXPECT_DOUBLE_EQ(ChipAt(t, {slice, 0, 2}).hbm().bandwidth_bytes_per_s(), 8.19e11) << slice;
    EXPECT_DOUBLE_EQ(LinkAt(t, {slice, 0, 1}, "y+").latency_ns, 5000) << slice;
  }
}

TEST(Multislice, ZeroSlicesIsAnError) {
  const std::string e = ErrorOf("multislice { slices: 0 }");
  EXPECT_THAT(e, HasSubstr("field 'multislice.slices' is 0, outside its range"));
}

TEST(Multislice, MissingSlicesIsAnError) {
  EXPECT_THAT(ErrorOf("multislice { axis_name: \"s\" }"),
              HasSubstr("field 'multislice.slices' is missing"));
}

TEST(Multislice, MissingDcnIsAnErrorThatSaysWhatToGive) {
  // v4 has no DCN figures in its preset.
  const std::string e = ErrorOf("multislice { slices: 2 }", "v4-4x4x4");
  EXPECT_THAT(e, HasSubstr("field 'dcn' is missing"));
  EXPECT_THAT(e, HasSubstr("give dcn { chips_per_host nic_bandwidth_bytes_per_s latency_ns }"));
}

TEST(Multislice, TwistedSlicesAreRefusedWithThePlainOnesAsTheFix) {
  const std::string e = ErrorOf("multislice { slices: 2 }", "v5p-4x4x8-twisted");
  EXPECT_THAT(e, HasSubstr("field 'multislice' joins twisted slices"));
  EXPECT_THAT(e, HasSubstr("join the plain slices of the same shape (mesh.twisted: false)"));
  EXPECT_EQ(ErrorOf("multislice { slices: 2 }", "v5p-4x4x8"), "no error");
}

TEST(Multislice, MissingNicBandwidthIsAnError) {
  const std::string e =
      ErrorOf("multislice { slices: 2 }\ndcn { chips_per_host: 4 latency_ns: 10000 }", "v4-4x4x4");
  EXPECT_THAT(e, HasSubstr("field 'dcn.nic_bandwidth_bytes_per_s' is missing; give it in bytes "
                           "per second"));
}

TEST(Multislice, ChipsPerHostMustDivideTheSlice) {
  // v5e's host has 8 chips; a 2x2 slice is half a host.
  const std::string e = ErrorOf("multislice { slices: 2 }", "v5e-2x2");
  EXPECT_THAT(e, HasSubstr("field 'dcn.chips_per_host' is 8, which does not divide the slice's 4 "
                           "chips"));
  EXPECT_THAT(e, HasSubstr("give a divisor of 4"));
}

TEST(Multislice, TheSliceAxisNameMustNotBeAnIciAxis) {
  const std::string e = ErrorOf("multislice { slices: 2 axis_name: \"x\" }");
  EXPECT_THAT(e, HasSubstr("field 'multislice.axis_name' is 'x', which names an axis of the "
                           "slice's own mesh too"));
}

TEST(Multislice, AMeshThatStartsWithTheSliceAxisMustAgreeWithTheCount) {
  auto text = PresetText("v5e-2x4");
  text.replace(text.find("shape: [2, 4]"), 13, "shape: [3, 2, 4]");
  text.replace(text.find("wraparound: [false, false]"), 26, "wraparound: [false, false, false]");
  text.replace(text.find("mesh {"), 6, "mesh {\n  axis_names: [\"slice\", \"x\", \"y\"]");
  try {
    ParseTopology(text + "multislice { slices: 2 }", "m.textproto");
    FAIL() << "expected TopologyError";
  } catch (const TopologyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'mesh.shape' starts with the multislice axis 'slice' "
                                    "of length 3, but multislice.slices is 2"));
  }
}

TEST(Multislice, TooManyChipsInAllIsAnError) {
  EXPECT_THAT(ErrorOf("multislice { slices: 2 }", "v5p-16x20x28"),
              HasSubstr("field 'multislice.slices (times the slice's 8960 chips, the chip count)' "
                        "is 17920, outside its range"));
}

}  // namespace
}  // namespace tpusim::topologies

namespace tpusim::sim {
namespace {

TEST(MultisliceTorus, EachChipHasOneDcnLinkToEveryOtherSliceAndNoIciAlongTheSliceAxis) {
  Torus t(DeviceGrid({3, 4}, {"slice", "x"}), {false, true}, /*twist=*/{},
          /*slices_over_dcn=*/true);
  for (ChipId chip = 0; chip < t.chips(); ++chip) {
    int dcn = 0;
    for (LinkId link : t.LinksFrom(chip))
      dcn += t.IsDcn(link);
    EXPECT_EQ(dcn, 2) << chip;
  }
  EXPECT_EQ(t.LinkFrom(0, 0, +1), -1);
  const LinkId to_2 = t.DcnLinkFrom(t.ChipAt({0, 1}), 2);
  EXPECT_EQ(t.link(to_2).to, t.ChipAt({2, 1}));
  EXPECT_EQ(t.link(to_2).name, "slice2");
}

TEST(MultisliceTorus, ARouteToAnotherSliceCrossesTheDcnFirstThenIci) {
  Torus t(DeviceGrid({3, 4}, {"slice", "x"}), {false, true}, /*twist=*/{},
          /*slices_over_dcn=*/true);
  const ChipId from = t.ChipAt({0, 0});
  const ChipId to = t.ChipAt({2, 1});
  const auto route = t.Route(from, to);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_TRUE(t.IsDcn(route[0]));
  EXPECT_EQ(t.link(route[0]).to, t.ChipAt({2, 0}));
  EXPECT_FALSE(t.IsDcn(route[1]));
  EXPECT_EQ(t.link(route[1]).to, to);
  EXPECT_EQ(t.NextLink(from, to), static_cast<int64_t>(route[0]));
  EXPECT_EQ(t.NextLink(t.ChipAt({2, 0}), to), static_cast<int64_t>(route[1]));
}

}  // namespace
}  // namespace tpusim::sim
