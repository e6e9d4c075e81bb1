#include "sim/torus.h"

#include <gtest/gtest.h>

namespace tpusim::sim {
namespace {

TEST(Torus, NumbersChipsRowMajorLikeJax) {
  Torus t({2, 4}, {"x", "y"}, {false, false});
  EXPECT_EQ(t.chips(), 8u);
  EXPECT_EQ(t.ChipAt({1, 2}), 6u);
  EXPECT_EQ(t.CoordsOf(6), (Coords{1, 2}));
  EXPECT_EQ(t.Describe(6), "chip 6 (x=1, y=2)");
}

TEST(Torus, AxisWithoutWraparoundHasNoLinkBackToTheStart) {
  Torus t({4}, {"x"}, {false});
  EXPECT_EQ(t.LinkFrom(3, 0, +1), -1);
  EXPECT_EQ(t.LinkFrom(0, 0, -1), -1);
  EXPECT_GE(t.LinkFrom(0, 0, +1), 0);
  // 2 end chips x 1 link + 2 middle chips x 2 links.
  EXPECT_EQ(t.links().size(), 6u);
  // The "ring" neighbour of the last chip is reached the long way.
  EXPECT_EQ(t.Route(3, 0).size(), 3u);
}

TEST(Torus, WraparoundTakesTheShorterWay) {
  Torus t({16}, {"x"}, {true});
  const auto route = t.Route(15, 0);
  ASSERT_EQ(route.size(), 1u);
  EXPECT_EQ(t.link(route[0]).direction, +1);
  EXPECT_EQ(t.Route(0, 15).size(), 1u);
  EXPECT_EQ(t.link(t.Route(0, 15)[0]).direction, -1);
  EXPECT_EQ(t.Route(0, 8).size(), 8u);  // a tie goes the + way
  EXPECT_EQ(t.link(t.Route(0, 8)[0]).direction, +1);
}

TEST(Torus, RoutesAreDimensionOrdered) {
  Torus t({4, 4}, {"x", "y"}, {false, false});
  const auto route = t.Route(t.ChipAt({0, 0}), t.ChipAt({2, 3}));
  ASSERT_EQ(route.size(), 5u);
  EXPECT_EQ(t.link(route[0]).axis, 0);
  EXPECT_EQ(t.link(route[1]).axis, 0);
  for (size_t i = 2; i < route.size(); ++i)
    EXPECT_EQ(t.link(route[i]).axis, 1);
  // Each hop starts where the previous one ended.
  for (size_t i = 1; i < route.size(); ++i)
    EXPECT_EQ(t.link(route[i]).from, t.link(route[i - 1]).to);
  EXPECT_EQ(t.link(route.back()).to, t.ChipAt({2, 3}));
}

TEST(Torus, ThreeDimensionalTorusHasSixLinksPerChip) {
  Torus t({4, 4, 4}, {"x", "y", "z"}, {true, true, true});
  for (ChipId c = 0; c < t.chips(); ++c)
    EXPECT_EQ(t.LinksFrom(c).size(), 6u);
}

}  // namespace
}  // namespace tpusim::sim
