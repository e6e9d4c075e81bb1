// Chips of two chiplets (config::ChipletConfig, docs/model.md "Chiplets"): how the loader adds
// the chiplet axis after the mesh, that a TPU7x mesh counts two devices per chip, that the link
// along the axis is the die-to-die link, and each error a bad chiplets block gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mesh.h"
#include "topologies/topology_loader.h"

namespace tpusim::topologies {
namespace {

using ::testing::HasSubstr;

// The preset `preset` with `block` appended.
config::Topology Load(const std::string& block, const std::string& preset = "tpu7x-2x2x1") {
  return ParseTopology(PresetText(preset) + block, "c.textproto");
}

std::string ErrorOf(const std::string& block, const std::string& preset = "tpu7x-2x2x1") {
  try {
    Load(block, preset);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "no error";
}

// The tpu7x file's chiplets block with `field` replaced by `with`.
std::string Tpu7xWith(const std::string& field, const std::string& with) {
  std::string text = PresetText("tpu7x-2x2x1");
  const size_t at = text.find(field);
  text.replace(at, text.find('\n', at) - at, with);
  return text;
}

std::string ParseError(const std::string& text) {
  try {
    ParseTopology(text, "c.textproto");
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Chiplets, ATpu7xMeshCountsTwoDevicesPerChip) {
  const auto t = LoadTopology("tpu7x-2x2x1");
  ASSERT_EQ(t.mesh().shape_size(), 4);
  EXPECT_EQ(t.mesh().axis_names(3), "chiplet");
  EXPECT_EQ(t.mesh().shape(3), 2u);
  EXPECT_FALSE(t.mesh().wraparound(3));
  EXPECT_EQ(DeviceCount(t), 8u);
  EXPECT_EQ(ChipCount(t), 4u);
  EXPECT_EQ(dsl::Mesh(t).devices(), 8);
  EXPECT_EQ(dsl::Mesh(t).AxisSize("chiplet"), 2);
  EXPECT_EQ(DeviceCount(LoadTopology("tpu7x-2x2x2")), 16u);
  // Each device is one chiplet: one TensorCore, half the chip's HBM (docs/references.md §1).
  const auto chip = ChipAt(t, {0, 0, 0, 1});
  EXPECT_EQ(chip.tensor_cores(), 1u);
  EXPECT_EQ(chip.hbm().capacity_bytes(), 96ull << 30);
  EXPECT_DOUBLE_EQ(chip.hbm().bandwidth_bytes_per_s(), 7.38e12 / 2);
}

TEST(Chiplets, ThePodIs18432Devices) {
  const auto t = LoadTopology("tpu7x-16x24x24");
  EXPECT_EQ(DeviceCount(t), 18432u);
  EXPECT_EQ(ChipCount(t), 9216u);
  EXPECT_THAT(t.description(), HasSubstr("9216 chips = 18432 devices"));
}

TEST(Chiplets, OtherGenerationsKeepOneDevicePerChip) {
  for (const char* preset : {"v4-2x2x1", "v5p-2x2x1", "v5e-2x2", "v6e-2x2"}) {
    const auto t = LoadTopology(preset);
    EXPECT_FALSE(t.has_chiplets()) << preset;
    EXPECT_EQ(t.mesh().axis_names(t.mesh().axis_names_size() - 1),
              t.mesh().shape_size() == 3 ? "z" : "y")
        << preset;
  }
  EXPECT_EQ(LoadTopology("v5p-2x2x1").chip().tensor_cores(), 2u);  // megacore, unchanged
}

TEST(Chiplets, TheChipletAxisLinkIsTheD2dLinkAndIciLinksKeepTheirSettings) {
  const auto t = LoadTopology("tpu7x-2x2x1");
  const LinkSettings d2d = LinkAt(t, {0, 0, 0, 0}, "chiplet+");
  EXPECT_DOUBLE_EQ(d2d.bandwidth_bytes_per_s, t.chiplets().d2d_bandwidth_bytes_per_s());
  EXPECT_DOUBLE_EQ(d2d.latency_ns, t.chiplets().d2d_latency_ns());
  const LinkSettings ici = LinkAt(t, {0, 0, 0, 1}, "x+");
  EXPECT_DOUBLE_EQ(ici.bandwidth_bytes_per_s, t.ici().link_bandwidth_bytes_per_s());
  // The chip's 9e10 B/s per link, half for each chiplet (docs/references.md §2).
  EXPECT_DOUBLE_EQ(2 * ici.bandwidth_bytes_per_s, 9e10);
}

TEST(Chiplets, ALoadedTopologyValidatesAgainUnchanged) {
  const auto t = LoadTopology("tpu7x-2x2x2");
  config::Topology again = t;
  ValidateTopology(again, "again");
  EXPECT_EQ(again.SerializeAsString(), t.SerializeAsString());
}

TEST(Chiplets, AnOverrideNamesAChipAndHoldsForBothItsChiplets) {
  const auto t = Load(
      "chip_override { chip: [1, 0, 0] hbm { bandwidth_bytes_per_s: 1e12 } }\n"
      "link_override { chip: [1, 0, 0] direction: \"y+\" latency_ns: 5000 }");
  for (int chiplet : {0, 1}) {
    EXPECT_DOUBLE_EQ(ChipAt(t, {1, 0, 0, chiplet}).hbm().bandwidth_bytes_per_s(), 1e12);
    EXPECT_DOUBLE_EQ(ChipAt(t, {0, 0, 0, chiplet}).hbm().bandwidth_bytes_per_s(), 3.69e12);
    EXPECT_DOUBLE_EQ(LinkAt(t, {1, 0, 0, chiplet}, "y+").latency_ns, 5000);
  }
}

TEST(Chiplets, ABadD2dBandwidthIsAnErrorNamingTheFieldAndRange) {
  const std::string e =
      ParseError(Tpu7xWith("d2d_bandwidth_bytes_per_s:", "d2d_bandwidth_bytes_per_s: 0"));
  EXPECT_THAT(e, HasSubstr("field 'chiplets.d2d_bandwidth_bytes_per_s' is 0, outside its range: "
                           "it must be at least 1000000"));
}

TEST(Chiplets, AMissingD2dLatencyIsAnError) {
  const std::string e = ParseError(Tpu7xWith("d2d_latency_ns:", ""));
  EXPECT_THAT(e, HasSubstr("field 'chiplets.d2d_latency_ns' is missing; give it in ns"));
}

TEST(Chiplets, OneChipletPerChipIsAnError) {
  const std::string e = ParseError(Tpu7xWith("count: 2", "count: 1"));
  EXPECT_THAT(e, HasSubstr("field 'chiplets.count' is 1, outside its range: it must be at "
                           "least 2"));
}

TEST(Chiplets, TheChipletAxisNameMustNotBeAMeshAxis) {
  const std::string e = ParseError(Tpu7xWith("count: 2", "count: 2\n  axis_name: \"z\""));
  EXPECT_THAT(e, HasSubstr("field 'chiplets.axis_name' is 'z', which names an axis of the "
                           "chips' own mesh too; give the chiplet axis another name"));
}

TEST(Chiplets, AMeshThatEndsWithTheChipletAxisMustAgreeWithTheCount) {
  std::string text = PresetText("tpu7x-2x2x1");
  text.replace(text.find("shape: [2, 2, 1]"), 16, "shape: [2, 2, 1, 3]");
  text.replace(text.find("wraparound: [false, false, false]"), 33,
               "wraparound: [false, false, false, false]\n  axis_names: [\"x\", \"y\", \"z\", "
               "\"chiplet\"]");
  EXPECT_THAT(ParseError(text), HasSubstr("field 'mesh.shape' ends with the chiplet axis "
                                          "'chiplet' of length 3, but chiplets.count is 2"));
}

TEST(Chiplets, MultisliceWithChipletsIsRefusedWithTheFix) {
  const std::string e = ErrorOf(
      "dcn { chips_per_host: 4 nic_bandwidth_bytes_per_s: 5e10 latency_ns: 10000 }\n"
      "multislice { slices: 2 }");
  EXPECT_THAT(e, HasSubstr("field 'chiplets' is given with multislice"));
  EXPECT_THAT(e, HasSubstr("drop multislice or chiplets"));
}

TEST(Chiplets, ATwistedMeshWithChipletsIsRefusedWithTheFix) {
  std::string text = PresetText("tpu7x-2x2x1");
  text.replace(text.find("shape: [2, 2, 1]"), 16, "shape: [4, 4, 8]");
  text.replace(text.find("wraparound: [false, false, false]"), 33,
               "wraparound: [true, true, true]\n  twisted: true");
  const std::string e = ParseError(text + "allow_nonphysical: true\n");
  EXPECT_THAT(e, HasSubstr("field 'chiplets' is given with a twisted mesh"));
  EXPECT_THAT(e, HasSubstr("set mesh.twisted: false or drop chiplets"));
}

}  // namespace
}  // namespace tpusim::topologies
