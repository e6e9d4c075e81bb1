// Each generation's slice rules (topologies/generations.h, topologies/twist.h for twisted tori,
// docs/references.md §2): the presets keep them, a file that breaks one is refused with the
// rule and the fix in the message, and allow_nonphysical or a chip without a generation lets
// a hypothetical machine load.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "topologies/generations.h"
#include "topologies/topology_loader.h"
#include "topologies/twist.h"

namespace tpusim::topologies {
namespace {

using ::testing::HasSubstr;

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string LoadError(const std::string& text) {
  try {
    ParseTopology(text, "g.textproto");
  } catch (const TopologyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded:\n" << text;
  return "";
}

TEST(Generations, EveryPresetKeepsItsGenerationsRules) {
  for (const GenerationRules& rules : Generations()) {
    ASSERT_EQ(RulesOf(rules.generation), &rules);
    for (const std::string& shape : rules.shapes) {
      const std::string name = rules.prefix + "-" + shape;
      const auto t = LoadTopology(name);
      EXPECT_EQ(t.chip().generation(), rules.generation) << name;
      // A chip of chiplets is several devices: the mesh ends with the chiplet axis.
      const bool chiplets = rules.chiplets > 1;
      EXPECT_EQ(ShapeString(t), chiplets ? shape + "x" + std::to_string(rules.chiplets) : shape);
      EXPECT_LE(ChipCount(t), rules.max_chips) << name;
      EXPECT_EQ(DeviceCount(t), ChipCount(t) * rules.chiplets) << name;
      const std::vector<uint32_t> dims(t.mesh().shape().begin(),
                                       t.mesh().shape().end() - (chiplets ? 1 : 0));
      for (int a = 0; a < static_cast<int>(dims.size()); ++a)
        EXPECT_EQ(t.mesh().wraparound(a), WrapAllowed(rules, dims, a)) << name << " axis " << a;
    }
  }
  EXPECT_EQ(RulesOf(config::GENERATION_UNSPECIFIED), nullptr);
}

// docs/references.md §2: the pods and the largest slices, and the wraparound each has.
TEST(Generations, PresetsReachTheFullPods) {
  struct Case {
    const char* name;
    uint64_t chips;
    bool wraps;
  };
  for (const Case& c :
       {Case{"v5p-16x20x28", 8960, true}, Case{"v5p-16x16x24", 6144, true},
        Case{"tpu7x-16x24x24", 18432, true} /* devices: two chiplets per chip */,
        Case{"v4-16x16x16", 4096, true}, Case{"v5e-16x16", 256, true}, Case{"v6e-16x16", 256, true},
        Case{"v5e-1x1", 1, false}, Case{"v4-2x2x1", 4, false}, Case{"v5p-2x2x2", 8, false},
        Case{"v5e-8x16", 128, true}}) {
    const auto t = LoadTopology(c.name);
    EXPECT_EQ(DeviceCount(t), c.chips) << c.name;
    // The chips' last axis (a TPU7x mesh ends with the chiplet axis, which never wraps).
    const int last = t.mesh().shape_size() - (t.has_chiplets() ? 2 : 1);
    EXPECT_EQ(t.mesh().wraparound(last), c.wraps) << c.name;
  }
  // v5e-8x16 wraps its axis of 16 only.
  const auto t = LoadTopology("v5e-8x16");
  EXPECT_FALSE(t.mesh().wraparound(0));
  EXPECT_TRUE(t.mesh().wraparound(1));
}

TEST(Generations, AV5eAxisWrapsOnlyWhenItSpans16Chips) {
  const std::string text =
      Replace(PresetText("v5e-4x4"), "wraparound: [false, false]", "wraparound: [false, true]");
  EXPECT_EQ(LoadError(text),
            "topology g.textproto: field 'mesh.wraparound' wraps axis 'y' around, but a TPU v5e "
            "axis wraps around only when it spans 16 chips (docs/references.md §2), and axis 'y' "
            "spans 4. Set the axis's flag to false, or set allow_nonphysical: true to study a "
            "hypothetical machine.");
  EXPECT_THAT(LoadError(Replace(PresetText("v6e-4x4"), "wraparound: [false, false]",
                                "wraparound: [true, false]")),
              HasSubstr("a TPU v6e axis wraps around only when it spans 16 chips"));
}

TEST(Generations, V4AndV5pWrapOnlyWholeCubes) {
  EXPECT_EQ(LoadError(Replace(PresetText("v5p-2x4x4"), "wraparound: [false, false, false]",
                              "wraparound: [false, true, true]")),
            "topology g.textproto: field 'mesh.wraparound' wraps axis 'y' around, but a TPU v5p "
            "slice wraps around only when it is made of whole 4x4x4 cubes, three axes each a "
            "multiple of 4 chips (docs/references.md §2), and this 2x4x4 slice is not. Set the "
            "axis's flag to false, or set allow_nonphysical: true to study a hypothetical "
            "machine.");
  EXPECT_THAT(LoadError(Replace(PresetText("v4-2x2x1"), "wraparound: [false, false, false]",
                                "wraparound: [true, false, false]")),
              HasSubstr("a TPU v4 slice wraps around only when it is made of whole 4x4x4 cubes"));
  EXPECT_THAT(LoadError(Replace(PresetText("tpu7x-2x2x2"), "wraparound: [false, false, false]",
                                "wraparound: [false, false, true]")),
              HasSubstr("wraps axis 'z' around, but a TPU7x slice wraps around only"));
  // A slice of whole cubes may leave an axis unwrapped: a subset of the links.
  EXPECT_NO_THROW(ParseTopology(Replace(PresetText("v5p-4x4x4"), "wraparound: [true, true, true]",
                                        "wraparound: [true, false, true]"),
                                "g.textproto"));
}

TEST(Generations, AxesAndChipsStayWithinTheGeneration) {
  EXPECT_EQ(LoadError(Replace(Replace(PresetText("v5e-4x4"), "shape: [4, 4]", "shape: [4, 4, 2]"),
                              "wraparound: [false, false]", "wraparound: [false, false, false]")),
            "topology g.textproto: field 'mesh.shape' has 3 axes, but TPU v5e is a 2-D torus "
            "(docs/references.md §2). Give at most 2 axes, or set allow_nonphysical: true to "
            "study a hypothetical machine.");
  EXPECT_EQ(LoadError(Replace(PresetText("v5e-4x4"), "shape: [4, 4]", "shape: [16, 32]")),
            "topology g.textproto: field 'mesh.shape' is 16x32, 512 chips, but a TPU v5e slice "
            "has at most 256 (docs/references.md §2). Give a smaller shape, or set "
            "allow_nonphysical: true to study a hypothetical machine.");
  EXPECT_EQ(LoadError(Replace(PresetText("v6e-4x4"), "shape: [4, 4]", "shape: [32, 8]")),
            "topology g.textproto: field 'mesh.shape' is 32x8: axis 'x' spans 32 chips, but a "
            "TPU v6e axis spans at most 16 (docs/references.md §2). Shorten the axis, or set "
            "allow_nonphysical: true to study a hypothetical machine.");
  EXPECT_THAT(
      LoadError(Replace(PresetText("tpu7x-2x2x2"), "shape: [2, 2, 2]", "shape: [16, 24, 32]")),
      HasSubstr("is 16x24x32, 12288 chips, but a TPU7x slice has at most 9216"));
}

TEST(Generations, AllowNonphysicalLetsAHypotheticalMachineLoad) {
  const std::string wrapped =
      Replace(PresetText("v5e-4x4"), "wraparound: [false, false]", "wraparound: [true, true]");
  const auto t = ParseTopology("allow_nonphysical: true\n" + wrapped, "g.textproto");
  EXPECT_TRUE(t.mesh().wraparound(0));
  EXPECT_TRUE(t.allow_nonphysical());
  EXPECT_NO_THROW(
      ParseTopology("allow_nonphysical: true\n" +
                        Replace(PresetText("v5e-4x4"), "shape: [4, 4]", "shape: [64, 4]"),
                    "g.textproto"));
}

// Files written before chips had a generation (a user's ring of 256 v5e chips) keep loading.
TEST(Generations, AChipWithoutAGenerationIsNotChecked) {
  std::string text = Replace(PresetText("v5e-4x4"), "generation: V5E", "");
  text = Replace(text, "shape: [4, 4]", "shape: [256]");
  text = Replace(text, "wraparound: [false, false]", "wraparound: [true]");
  const auto t = ParseTopology(text, "ring256.textproto");
  EXPECT_EQ(t.chip().generation(), config::GENERATION_UNSPECIFIED);
  EXPECT_EQ(DeviceCount(t), 256u);
  EXPECT_TRUE(t.mesh().wraparound(0));
}

// Twisted tori (topologies/twist.h): which slices may be twisted.

const char kWrapped[] = "wraparound: [true, true, true]\n";
const char kTwistedLine[] = "  twisted: true\n";

// `preset` with its mesh twisted.
std::string TwistedText(const std::string& preset) {
  return Replace(PresetText(preset), kWrapped, std::string(kWrapped) + kTwistedLine);
}

std::string Nonphysical(const std::string& text) {
  return text + "allow_nonphysical: true\n";
}

TEST(TwistRules, TwistedPresetsAreTheShapesV4AndV5pSell) {
  int twisted = 0;
  for (const std::string& name : PresetNames()) {
    const config::Topology t = LoadTopology(name);
    if (!t.mesh().twisted()) continue;
    ++twisted;
    EXPECT_EQ(name, t.chip().name() == "TPU v4" ? "v4-" + ShapeString(t) + "-twisted"
                                                : "v5p-" + ShapeString(t) + "-twisted");
    EXPECT_THAT(TwistedShapes(t.chip().generation()), ::testing::Contains(ShapeString(t)));
    for (bool wraps : t.mesh().wraparound())
      EXPECT_TRUE(wraps) << name;
  }
  EXPECT_EQ(twisted, 8);
  // The same shapes untwisted are presets too: the plain torus to compare with.
  EXPECT_FALSE(LoadTopology("v5p-4x4x8").mesh().twisted());
  EXPECT_TRUE(LoadTopology("v5p-4x4x8-twisted").mesh().twisted());
  EXPECT_TRUE(TwistedShapes(config::V5E).empty());
}

TEST(TwistRules, ATwistNeedsAxesOfKAndTwiceK) {
  const std::string message =
      "topology g.textproto: field 'mesh.twisted' twists a 4x4x4 slice, but a twisted torus "
      "needs axes of two lengths, K chips and 2K (as 4x4x8 or 4x8x8; docs/model.md, \"Twisted "
      "tori\"). Give such a shape, or set twisted to false.";
  EXPECT_EQ(LoadError(TwistedText("v5p-4x4x4")), message);
  // Not a physical rule: a hypothetical machine cannot have it either.
  EXPECT_EQ(LoadError(Nonphysical(TwistedText("v5p-4x4x4"))), message);
}

TEST(TwistRules, ATwistNeedsEveryAxisToWrap) {
  const std::string text =
      Replace(PresetText("v5p-4x4x8-twisted"), kWrapped, "wraparound: [true, true, false]\n");
  EXPECT_EQ(LoadError(text),
            "topology g.textproto: field 'mesh.twisted' twists the wraparound links, but axis "
            "'z' does not wrap around. Set every axis's wraparound flag to true, or set twisted "
            "to false.");
}

TEST(TwistRules, OnlyV4AndV5pComeTwisted) {
  std::string text = Replace(PresetText("tpu7x-2x2x2"), "shape: [2, 2, 2]", "shape: [4, 4, 8]");
  text = Replace(text, "wraparound: [false, false, false]\n", std::string(kWrapped) + kTwistedLine);
  EXPECT_EQ(LoadError(text),
            "topology g.textproto: field 'mesh.twisted' twists a TPU7x slice, but only TPU v4 "
            "and v5p slices come as twisted tori (docs/references.md §2). Set twisted to false, "
            "or set allow_nonphysical: true to study a hypothetical machine.");
  // Hypothetical or not, a torus of two-chiplet chips is not twisted yet.
  EXPECT_THAT(LoadError(Nonphysical(text)), HasSubstr("field 'chiplets' is given with a twisted"));
}

TEST(TwistRules, OnlyTheShapesGoogleSellsComeTwisted) {
  const std::string text =
      Replace(TwistedText("v5p-4x4x4"), "shape: [4, 4, 4]", "shape: [12, 12, 24]");
  EXPECT_EQ(LoadError(text),
            "topology g.textproto: field 'mesh.twisted' twists a 12x12x24 TPU v5p slice, but "
            "TPU v5p comes twisted only as 4x4x8, 4x8x8, 8x8x16 and 8x16x16 "
            "(docs/references.md §2). Give one of those shapes, or set twisted to false, or set "
            "allow_nonphysical: true to study a hypothetical machine.");
  EXPECT_TRUE(ParseTopology(Nonphysical(text), "g.textproto").mesh().twisted());
  // The long axis first is the same torus, but not a shape Google names.
  EXPECT_THAT(LoadError(Replace(TwistedText("v4-4x4x4"), "shape: [4, 4, 4]", "shape: [8, 4, 4]")),
              HasSubstr("twists a 8x4x4 TPU v4 slice, but TPU v4 comes twisted only as"));
}

TEST(TwistRules, AChipOfNoGenerationIsHeldToTheShapeRuleOnly) {
  std::string text = Replace(TwistedText("v5p-4x4x4"), "shape: [4, 4, 4]", "shape: [4, 8, 8]");
  text = Replace(text, "generation: V5P", "generation: GENERATION_UNSPECIFIED");
  EXPECT_TRUE(ParseTopology(text, "g.textproto").mesh().twisted());
}

// A name is a preset exactly when PresetNames lists it: IsPreset reads the names from the
// generations' prefixes and shapes without composing any preset's text.
TEST(Generations, IsPresetAgreesWithTheListOfPresets) {
  const std::vector<std::string> names = PresetNames();
  for (const std::string& name : names)
    EXPECT_TRUE(IsPreset(name)) << name;
  for (const char* near_miss :
       {"v5e-4x4-twisted", "v5e-", "v5e4x4", "tpu7x-2x2x1-twisted", "v5p-4x4x8-twisted-twisted",
        "v5p-4x4x8twisted", "v4-2x2x1x", "", "-", "v5e-4x4 ", "V5E-4x4"}) {
    EXPECT_FALSE(IsPreset(near_miss)) << near_miss;
    EXPECT_EQ(std::count(names.begin(), names.end(), near_miss), 0) << near_miss;
  }
}

}  // namespace
}  // namespace tpusim::topologies
