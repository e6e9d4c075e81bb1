// tpusim describe: the module tree of a slice, with the parameters the model uses.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunTpusim;

TEST(CliDescribe, PrintsTheModuleTreeWithParameters) {
  const auto r = RunTpusim("describe v5e-2x2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("slice  topology=v5e-2x2"));
  for (const char* chip : {"chip_0_0", "chip_0_1", "chip_1_0", "chip_1_1"})
    EXPECT_THAT(r.out, HasSubstr(std::string("\n  ") + chip + "  id="));
  EXPECT_THAT(r.out,
              HasSubstr("\n    hbm  capacity=14.9 GiB  bandwidth=819 GB/s  timing=bandwidth"));
  EXPECT_THAT(r.out, HasSubstr("\n    dma  channels=8  chunk=512 KiB"));
  EXPECT_THAT(r.out, HasSubstr("\n    router  routing=dimension-ordered  links out=2"));
  // No wraparound on a 2-chip axis: chip (1,0) has only the x- link back to (0,0).
  EXPECT_THAT(r.out, HasSubstr("\n    ici_x-  to=chip_0_0  bandwidth=45 GB/s  latency=1.000 us"));
}

TEST(CliDescribe, ShowsOverridesOfOneLinkAndOneChip) {
  const std::string path = testing::TempPath("override.textproto");
  std::ofstream(path) << topologies::PresetText("v5e-2x2") << R"(
link_override { chip: [0, 0] direction: "x+" bandwidth_bytes_per_s: 2.25e10 latency_ns: 2000 }
chip_override { chip: [1, 1] hbm { bandwidth_bytes_per_s: 4.095e11 } dma { engines: 2 } }
)";
  const auto all = RunTpusim("describe " + path);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("ici_x+  to=chip_1_0  bandwidth=22.5 GB/s  latency=2.000 us"));
  EXPECT_THAT(all.out, HasSubstr("ici_y+  to=chip_0_1  bandwidth=45 GB/s  latency=1.000 us"));
  const auto chip = RunTpusim("describe " + path + " --chip 1,1");
  ASSERT_EQ(chip.exit_code, 0) << chip.err;
  EXPECT_THAT(chip.out, HasSubstr("hbm  capacity=14.9 GiB  bandwidth=409.5 GB/s"));
  EXPECT_THAT(chip.out, HasSubstr("dma  channels=2"));
  EXPECT_THAT(chip.out, Not(HasSubstr("chip_0_0")));
}

TEST(CliDescribe, ListsTheMemoryTimingModels) {
  const auto r = RunTpusim("describe --models");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bandwidth"));
  EXPECT_THAT(r.out, HasSubstr("row_buffer"));
  EXPECT_THAT(r.out, HasSubstr("row_miss_ns"));
  // and the compute models a chip's cost can choose
  EXPECT_THAT(r.out, HasSubstr("compute models"));
  EXPECT_THAT(r.out, HasSubstr("roofline"));
}

TEST(CliDescribe, BadChipOrModelIsAUsageError) {
  const auto chip = RunTpusim("describe v5e-2x2 --chip 5,5");
  EXPECT_EQ(chip.exit_code, 2);
  EXPECT_THAT(chip.err, HasSubstr("--chip 5,5 is not a chip of the 2x2 mesh"));
  const std::string path = testing::TempPath("bad_model.textproto");
  std::string text = topologies::PresetText("v5e-2x2");
  text.replace(text.find("hbm {"), 5, "hbm {\n    model: \"sram\"");
  std::ofstream(path) << text;
  const auto model = RunTpusim("describe " + path);
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_THAT(model.err, HasSubstr("timing model 'sram', which is not registered"));
  EXPECT_THAT(model.err, HasSubstr("'row_buffer'"));
  const auto none = RunTpusim("describe");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("give a topology"));
}

// A TPU7x mesh counts devices, two chiplets per chip: the header says so, where a mesh of
// one-device chips says chips.
TEST(CliDescribe, CountsTheDevicesOfChipsOfChiplets) {
  const auto r = RunTpusim("describe tpu7x-2x2x1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mesh=x:2, y:2, z:1, chiplet:2  devices=8 (4 chips of 2)  "));
  EXPECT_THAT(RunTpusim("describe v5e-2x2").out, HasSubstr("  chips=4  "));
}

// describe takes run's --slices, --slow-chip and --slow-link, and shows the slice run would
// build with them.
TEST(CliDescribe, ShowsTheSlicesAndTheSlowChipsAndLinksRunWouldBuild) {
  const auto sliced = RunTpusim("describe v5e-2x4 --slices 2");
  ASSERT_EQ(sliced.exit_code, 0) << sliced.err;
  EXPECT_THAT(sliced.out, HasSubstr("slice  topology=v5e-2x4-2slices  mesh=slice:2, x:2, y:4  "
                                    "chips=16"));
  EXPECT_THAT(sliced.out, HasSubstr("dcn=25 GB/s per host of 8 chips, 10.000 us"));
  const auto link = RunTpusim("describe v5e-2x2 --slow-link 0,0:x+=4");
  ASSERT_EQ(link.exit_code, 0) << link.err;
  EXPECT_THAT(link.out, HasSubstr("ici_x+  to=chip_1_0  bandwidth=11.25 GB/s  latency=1.000 us"));
  EXPECT_THAT(link.out, HasSubstr("ici_x+  to=chip_1_1  bandwidth=45 GB/s"));
  const auto chip = RunTpusim("describe v5e-2x2 --slow-chip 0,0=2 --chip 0,0");
  ASSERT_EQ(chip.exit_code, 0) << chip.err;
  EXPECT_THAT(chip.out, HasSubstr("hbm  capacity=14.9 GiB  bandwidth=409.5 GB/s"));
  const auto d2d = RunTpusim("describe tpu7x-2x2x1 --slow-link 0,0,0,0:chiplet+=2 --chip 0,0,0,0");
  ASSERT_EQ(d2d.exit_code, 0) << d2d.err;
  EXPECT_THAT(d2d.out, HasSubstr("d2d_chiplet+  to=chip_0_0_0_1  bandwidth=270 GB/s"));
}

TEST(CliDescribe, BadSlicesOrSlowFlagsAreUsageErrors) {
  const auto chip = RunTpusim("describe v5e-2x2 --slow-chip 9=2");
  EXPECT_EQ(chip.exit_code, 2);
  EXPECT_THAT(chip.err, HasSubstr("--slow-chip names chip 9, and the slice has 4 chips"));
  const auto link = RunTpusim("describe v5e-2x2 --slow-link 0,0:z+=2");
  EXPECT_EQ(link.exit_code, 2);
  EXPECT_THAT(link.err, HasSubstr("--slow-link names direction 'z+' of chip (0, 0)"));
  const auto slices = RunTpusim("describe v5e-2x2 --slices 2");
  EXPECT_EQ(slices.exit_code, 2);
  EXPECT_THAT(slices.err, HasSubstr("field 'dcn.chips_per_host' is 8, which does not divide"));
  const auto models = RunTpusim("describe --models --slices 2");
  EXPECT_EQ(models.exit_code, 2);
  EXPECT_THAT(models.err, HasSubstr("so it takes no topology, --chip, --slices, --slow-chip or "
                                    "--slow-link"));
}

}  // namespace
}  // namespace tpusim
