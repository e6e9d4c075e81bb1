// Twisted tori (docs/model.md, "Twisted tori"): where the twisted wraparound links land, and
// that routes over them are shortest, deterministic and agree hop by hop with NextLink.

#include <gtest/gtest.h>

#include <deque>

#include "sim/torus.h"
#include "topologies/twist.h"

namespace tpusim::sim {
namespace {

Torus Twisted(const std::vector<int>& shape) {
  return Torus(shape, {"x", "y", "z"}, std::vector<bool>(shape.size(), true),
               topologies::TwistShifts(shape));
}

// Hops from `from` to every chip over the torus's links, breadth first.
std::vector<int> Distances(const Torus& t, ChipId from) {
  std::vector<int> hops(t.chips(), -1);
  std::deque<ChipId> frontier{from};
  hops[from] = 0;
  while (!frontier.empty()) {
    const ChipId at = frontier.front();
    frontier.pop_front();
    for (LinkId l : t.LinksFrom(at)) {
      const ChipId next = t.link(l).to;
      if (hops[next] >= 0) continue;
      hops[next] = hops[at] + 1;
      frontier.push_back(next);
    }
  }
  return hops;
}

TEST(TwistedTorus, KAxesWrapHalfWayAlongThe2KAxes) {
  using Shifts = std::vector<std::vector<int>>;
  EXPECT_EQ(topologies::TwistShifts({4, 4, 8}), (Shifts{{0, 0, 4}, {0, 0, 4}, {0, 0, 0}}));
  EXPECT_EQ(topologies::TwistShifts({4, 8, 8}), (Shifts{{0, 4, 4}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(topologies::TwistShifts({16, 8, 8}), (Shifts{{0, 0, 0}, {8, 0, 0}, {8, 0, 0}}));
  EXPECT_TRUE(topologies::TwistShifts({4, 4, 4}).empty());
  EXPECT_TRUE(topologies::TwistShifts({4, 8, 16}).empty());
  EXPECT_TRUE(topologies::TwistShifts({4, 4, 12}).empty());
}

TEST(TwistedTorus, WraparoundLinksLandShifted) {
  const Torus t = Twisted({4, 4, 8});
  // x+ from (3, 1, 2) lands at (0, 1, 6); x- from (0, 1, 6) comes back.
  const LinkId plus = static_cast<LinkId>(t.LinkFrom(t.ChipAt({3, 1, 2}), 0, +1));
  EXPECT_EQ(t.link(plus).to, t.ChipAt({0, 1, 6}));
  EXPECT_EQ(t.link(t.LinkFrom(t.ChipAt({0, 1, 6}), 0, -1)).to, t.ChipAt({3, 1, 2}));
  // y's wraparound shifts z too, by half of it, either way: (1, 3, 5) -> (1, 0, 1).
  EXPECT_EQ(t.link(t.LinkFrom(t.ChipAt({1, 3, 5}), 1, +1)).to, t.ChipAt({1, 0, 1}));
  // z's own wraparound is plain; inner links are untouched.
  EXPECT_EQ(t.link(t.LinkFrom(t.ChipAt({1, 2, 7}), 2, +1)).to, t.ChipAt({1, 2, 0}));
  EXPECT_EQ(t.link(t.LinkFrom(t.ChipAt({1, 2, 3}), 0, +1)).to, t.ChipAt({2, 2, 3}));
  // Six links per chip, each with its reverse.
  for (ChipId c = 0; c < t.chips(); ++c) {
    ASSERT_EQ(t.LinksFrom(c).size(), 6u);
    for (LinkId l : t.LinksFrom(c)) {
      const Link& link = t.link(l);
      EXPECT_EQ(t.link(t.LinkFrom(link.to, link.axis, -link.direction)).to, c);
    }
  }
  EXPECT_TRUE(t.twisted());
  EXPECT_FALSE(Torus({4, 4, 8}, {"x", "y", "z"}, {true, true, true}).twisted());
}

// Every route is a shortest path over the twisted links (breadth-first distances), each
// hop starts where the last ended, and NextLink names each hop of Route.
TEST(TwistedTorus, RoutesAreShortestAndAgreeWithNextLink) {
  for (const std::vector<int>& shape :
       {std::vector<int>{4, 4, 8}, std::vector<int>{4, 8, 8}, std::vector<int>{8, 4, 4}}) {
    const Torus t = Twisted(shape);
    for (ChipId from = 0; from < t.chips(); ++from) {
      const std::vector<int> hops = Distances(t, from);
      for (ChipId to = 0; to < t.chips(); ++to) {
        const std::vector<LinkId> route = t.Route(from, to);
        ASSERT_EQ(static_cast<int>(route.size()), hops[to])
            << t.Describe(from) << " to " << t.Describe(to);
        ChipId at = from;
        for (LinkId l : route) {
          ASSERT_EQ(t.NextLink(at, to), static_cast<int64_t>(l));
          ASSERT_EQ(t.link(l).from, at);
          at = t.link(l).to;
        }
        EXPECT_EQ(at, to);
        EXPECT_EQ(t.NextLink(to, to), -1);
      }
    }
  }
}

// The twist shortens routes: on 4x4x8, the diameter and the mean hops between chips (what an
// all-to-all's bytes cross) both drop below the plain torus's.
TEST(TwistedTorus, ShortensRoutesOn4x4x8) {
  const Torus plain({4, 4, 8}, {"x", "y", "z"}, {true, true, true});
  const Torus twisted = Twisted({4, 4, 8});
  auto measure = [](const Torus& t) {
    int diameter = 0;
    long total = 0;
    for (ChipId from = 0; from < t.chips(); ++from) {
      for (ChipId to = 0; to < t.chips(); ++to) {
        const int hops = static_cast<int>(t.Route(from, to).size());
        diameter = std::max(diameter, hops);
        total += hops;
      }
    }
    return std::make_pair(diameter, total);
  };
  const auto [plain_diameter, plain_total] = measure(plain);
  const auto [twisted_diameter, twisted_total] = measure(twisted);
  EXPECT_EQ(plain_diameter, 8);  // 2 + 2 + 4
  EXPECT_LT(twisted_diameter, plain_diameter);
  EXPECT_LT(twisted_total, plain_total);
}

// Where the plain torus's dimension-ordered route is one of the shortest (here: along z, the
// axis whose wraparound is not twisted), a twisted torus takes it too.
TEST(TwistedTorus, KeepsThePlainRouteWhereItIsShortest) {
  const Torus plain({4, 4, 8}, {"x", "y", "z"}, {true, true, true});
  const Torus twisted = Twisted({4, 4, 8});
  for (int z = 0; z < 8; ++z) {
    for (int to = 0; to < 8; ++to)
      EXPECT_EQ(twisted.Route(twisted.ChipAt({1, 2, z}), twisted.ChipAt({1, 2, to})),
                plain.Route(plain.ChipAt({1, 2, z}), plain.ChipAt({1, 2, to})));
  }
  // Across x's twisted wraparound the plain route is no longer a route: (0, 0, 0) to
  // (3, 0, 0) takes 3 hops inside the slice, not 1.
  EXPECT_EQ(twisted.Route(0, twisted.ChipAt({3, 0, 0})).size(), 3u);
}

TEST(TwistedTorus, RoutesAreDeterministic) {
  const Torus a = Twisted({4, 8, 8});
  const Torus b = Twisted({4, 8, 8});
  for (ChipId from = 0; from < a.chips(); from += 7) {
    for (ChipId to = 0; to < a.chips(); to += 3)
      ASSERT_EQ(a.Route(from, to), b.Route(from, to));
  }
}

}  // namespace
}  // namespace tpusim::sim
