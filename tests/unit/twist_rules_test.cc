// Which slices may be twisted (topologies/twist.h, docs/references.md §2): the twisted presets
// load, and a file that twists what cannot be twisted, or what its generation does not sell
// twisted, is refused with the rule and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  EXPECT_TRUE(ParseTopology(Nonphysical(text), "g.textproto").mesh().twisted());
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

}  // namespace
}  // namespace tpusim::topologies
