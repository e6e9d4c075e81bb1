// Module tests of Router (sim/router.h): routes are dimension-ordered (axis 0 first), take the
// shorter way round an axis with wraparound (+ on a tie) and the only way without. A router
// decides one hop at a time; following its decisions must give Torus::Route.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/chip.h"
#include "sim/chunk.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/path_cache.h"
#include "sim/router.h"
#include "sim/slice.h"
#include "sim/torus.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;
using sim::LinkId;
using sim::Router;
using sim::Torus;

class RouterTest : public ModuleTest {
 protected:
  // One router per chip of `torus`, not wired: OutputFor needs only the torus.
  void MakeRouters(const Torus& torus) {
    routers_.clear();
    for (ChipId chip = 0; chip < torus.chips(); ++chip) {
      routers_.push_back(
          std::make_unique<Router>(("router_" + std::to_string(chip)).c_str(), chip, torus));
    }
  }

  // The links a chunk to `to` crosses from `from`, each router deciding its own hop.
  std::vector<LinkId> FollowRouters(const Torus& torus, ChipId from, ChipId to,
                                    MemorySpace space = MemorySpace::kHbm) {
    std::vector<LinkId> route;
    const uint64_t address = sim::MakeAddress(to, space, 64);
    ChipId at = from;
    for (uint32_t hop = 0; hop <= torus.chips(); ++hop) {
      const int output = routers_[at]->OutputFor(address);
      if (output < routers_[at]->memories()) {
        EXPECT_EQ(at, to);
        EXPECT_EQ(output, static_cast<int>(space));
        return route;
      }
      const LinkId link =
          torus.LinksFrom(at)[static_cast<size_t>(output - routers_[at]->memories())];
      EXPECT_EQ(torus.link(link).from, at);
      route.push_back(link);
      at = torus.link(link).to;
    }
    ADD_FAILURE() << "the routers go round in circles from " << from << " to " << to;
    return route;
  }

  // "(1,1) x+, (2,1) x+, ..." for messages and hand-written expectations.
  static std::string Describe(const Torus& torus, const std::vector<LinkId>& route) {
    std::string text;
    for (LinkId id : route) {
      const sim::Link& link = torus.link(id);
      // Piece by piece: GCC 12 at -O3 misreads "," + std::string as an overlapping copy.
      text += text.empty() ? "(" : ", (";
      const auto coords = torus.CoordsOf(link.from);
      for (size_t i = 0; i < coords.size(); ++i) {
        if (i) text += ',';
        text += std::to_string(coords[i]);
      }
      text += ") ";
      text += link.name;
    }
    return text;
  }

  std::vector<std::unique_ptr<Router>> routers_;
};

TEST_F(RouterTest, FollowsTorusRouteBetweenEveryPairOfChips) {
  const std::pair<std::vector<int>, std::vector<bool>> shapes[] = {{{8}, {true}},
                                                                   {{7}, {false}},
                                                                   {{4, 4}, {true, true}},
                                                                   {{4, 4}, {false, false}},
                                                                   {{3, 5}, {false, true}},
                                                                   {{2, 2, 2}, {true, true, true}},
                                                                   {{4, 3, 2}, {true, false, true}},
                                                                   {{5, 4, 3}, {true, true, true}}};
  for (const auto& [shape, wraparound] : shapes) {
    std::vector<std::string> names = {"x", "y", "z"};
    names.resize(shape.size());
    const Torus torus(shape, names, wraparound);
    MakeRouters(torus);
    for (ChipId from = 0; from < torus.chips(); ++from) {
      for (ChipId to = 0; to < torus.chips(); ++to) {
        const auto route = FollowRouters(torus, from, to);
        ASSERT_EQ(route, torus.Route(from, to))
            << "from " << torus.Describe(from) << " to " << torus.Describe(to) << ": "
            << Describe(torus, route) << " vs " << Describe(torus, torus.Route(from, to));
      }
    }
  }
}

TEST_F(RouterTest, TakesAxesInOrderAndTheShorterWayRound) {
  const Torus ring({4}, {"x"}, {true});
  MakeRouters(ring);
  // A tie (two hops either way) goes +.
  EXPECT_EQ(Describe(ring, FollowRouters(ring, 0, 2)), "(0) x+, (1) x+");
  EXPECT_EQ(Describe(ring, FollowRouters(ring, 3, 1)), "(3) x+, (0) x+");
  EXPECT_EQ(Describe(ring, FollowRouters(ring, 0, 3)), "(0) x-");

  const Torus line({4}, {"x"}, {false});
  MakeRouters(line);
  EXPECT_EQ(Describe(line, FollowRouters(line, 3, 0)), "(3) x-, (2) x-, (1) x-");

  const Torus mesh({4, 4}, {"x", "y"}, {true, true});
  MakeRouters(mesh);
  // x first (one hop back round), then y (a tie: +).
  EXPECT_EQ(Describe(mesh, FollowRouters(mesh, mesh.ChipAt({0, 0}), mesh.ChipAt({3, 2}))),
            "(0,0) x-, (3,0) y+, (3,1) y+");

  const Torus cube({4, 4, 4}, {"x", "y", "z"}, {true, true, true});
  MakeRouters(cube);
  EXPECT_EQ(Describe(cube, FollowRouters(cube, cube.ChipAt({1, 1, 1}), cube.ChipAt({3, 0, 2}))),
            "(1,1,1) x+, (2,1,1) x+, (3,1,1) y-, (3,0,1) z+");
  const Torus open_cube({4, 4, 4}, {"x", "y", "z"}, {false, false, false});
  MakeRouters(open_cube);
  EXPECT_EQ(Describe(open_cube, FollowRouters(open_cube, open_cube.ChipAt({3, 0, 3}),
                                              open_cube.ChipAt({0, 1, 3}))),
            "(3,0,3) x-, (2,0,3) x-, (1,0,3) x-, (0,0,3) y+");
}

TEST_F(RouterTest, SendsWhatIsForItsOwnChipToTheAddressedMemory) {
  const Torus torus({2, 2}, {"x", "y"}, {false, false});
  MakeRouters(torus);
  for (MemorySpace space : {MemorySpace::kHbm, MemorySpace::kVmem, MemorySpace::kSmem}) {
    EXPECT_EQ(routers_[3]->OutputFor(sim::MakeAddress(3, space, 12345)), static_cast<int>(space));
    EXPECT_TRUE(FollowRouters(torus, 0, 3, space).size() == 2);
  }
}

TEST_F(RouterTest, AChunkThatCarriesItsRouteTakesTheRoutesNextLink) {
  const Torus torus({4, 4}, {"x", "y"}, {true, true});
  MakeRouters(torus);
  // y before x: not what the routers would choose, but a source-routed chunk says so.
  const ChipId from = torus.ChipAt({0, 0});
  const ChipId to = torus.ChipAt({1, 1});
  const std::vector<LinkId> route = {
      static_cast<LinkId>(torus.LinkFrom(from, 1, +1)),
      static_cast<LinkId>(torus.LinkFrom(torus.ChipAt({0, 1}), 0, +1))};
  ChunkPayload chunk(sim::MakeAddress(to, MemorySpace::kHbm, 0), 64);
  chunk.chunk().route = route.data();
  const int first = routers_[from]->OutputFor(chunk.payload().get_address(), &chunk.chunk());
  EXPECT_EQ(torus.LinksFrom(from)[static_cast<size_t>(first - routers_[from]->memories())],
            route[0]);
  const ChipId via = torus.ChipAt({0, 1});
  const int second = routers_[via]->OutputFor(chunk.payload().get_address(), &chunk.chunk());
  EXPECT_EQ(torus.LinksFrom(via)[static_cast<size_t>(second - routers_[via]->memories())],
            route[1]);
  EXPECT_EQ(chunk.chunk().next_link, 2u);
  EXPECT_EQ(routers_[to]->OutputFor(chunk.payload().get_address(), &chunk.chunk()), 0);
}

TEST_F(RouterTest, PathToGivesTheLinkModulesOfTheRouteAndTheDestinationMemory) {
  // Chip (1, 2)'s HBM has a timing model in front of it: its path ends at that model, which
  // the DMA engine must call by TLM (no direct booking).
  const auto topology = testing::MakeTopology({2, 4}, {false, true}, [](config::Topology& t) {
    auto* o = t.add_chip_override();
    o->add_chip(1);
    o->add_chip(2);
    o->mutable_hbm()->set_model("row_buffer");
  });
  sim::Slice slice("slice", topology, TimingOnly());
  Elaborate();
  const Torus& torus = slice.torus();
  auto link_module = [&](LinkId id) -> sim::IciLink& {
    for (const auto& link : slice.chip(torus.link(id).from).links()) {
      if (link->link().name == torus.link(id).name) return *link;
    }
    throw std::logic_error("no module for link " + std::to_string(id));
  };
  const ChipId modelled = torus.ChipAt({1, 2});
  for (ChipId from = 0; from < torus.chips(); ++from) {
    for (ChipId to = 0; to < torus.chips(); ++to) {
      for (MemorySpace space : {MemorySpace::kHbm, MemorySpace::kVmem}) {
        // The routers' hop-by-hop choice (the DMA engine's way: it builds no route) gives
        // the links of the whole route, in order.
        const std::vector<LinkId> route = torus.Route(from, to);
        base::InlineVector<sim::PathHop, 4> path;
        slice.chip(from).router().PathTo(sim::MakeAddress(to, space, 0), path);
        ASSERT_EQ(path.size(), route.size() + 1) << from << " -> " << to;
        for (size_t i = 0; i < route.size(); ++i) {
          sim::IciLink& link = link_module(route[i]);
          EXPECT_EQ(path[i].target, static_cast<tlm::tlm_fw_transport_if<>*>(&link))
              << from << " -> " << to << ", hop " << i;
          EXPECT_EQ(path[i].direct, &link.chunk_timing()) << from << " -> " << to << ", hop " << i;
        }
        sim::Memory& memory = slice.chip(to).memory(space);
        if (to == modelled && space == MemorySpace::kHbm) {
          EXPECT_EQ(path.back().direct, nullptr) << "a timing model is booked by TLM";
          EXPECT_NE(path.back().target, static_cast<tlm::tlm_fw_transport_if<>*>(&memory));
          EXPECT_EQ(memory.timing_model(), "row_buffer");
        } else {
          EXPECT_EQ(path.back().target, static_cast<tlm::tlm_fw_transport_if<>*>(&memory));
          EXPECT_EQ(path.back().direct, &memory.chunk_timing());
        }
      }
    }
  }
}

// A DMA engine remembers its last paths (sim/path_cache.h): whatever it is asked in whatever
// order, it must give what the routers' own walk gives, on a plain torus, a twisted one and
// two slices over the DCN; and it walks again only for a pair of memories it has forgotten.
void ExpectCachedPathsMatchTheWalk(const config::Topology& topology, bool twisted = false) {
  sim::Slice slice("slice", topology, TimingOnly());
  Elaborate();
  const Torus& torus = slice.torus();
  ASSERT_EQ(torus.twisted(), twisted);
  const std::vector<MemorySpace> spaces = {MemorySpace::kHbm, MemorySpace::kVmem,
                                           MemorySpace::kSmem};
  for (ChipId from = 0; from < torus.chips(); ++from) {
    Router& router = slice.chip(from).router();
    sim::PathCache cache;
    // Twice round every destination and memory, and then back and forth between a few, so
    // that entries are both found and replaced.
    std::vector<std::pair<uint64_t, uint64_t>> asks;
    for (int round = 0; round < 2; ++round) {
      for (ChipId to = 0; to < torus.chips(); ++to) {
        for (MemorySpace space : spaces)
          asks.emplace_back(sim::MakeAddress(from, MemorySpace::kHbm, 128),
                            sim::MakeAddress(to, space, 64 * to));
      }
    }
    for (int i = 0; i < 20; ++i) {
      const ChipId to = static_cast<ChipId>((from + 1 + i % 3) % torus.chips());
      asks.emplace_back(sim::MakeAddress(from, spaces[i % 2], 0),
                        sim::MakeAddress(to, MemorySpace::kHbm, 0));
    }
    for (const auto& ask : asks) {
      // Named copies, not structured bindings: clang before 16 does not let a lambda capture
      // those.
      const uint64_t source = ask.first, destination = ask.second;
      const bool within = sim::AddressChip(source) == sim::AddressChip(destination) &&
                          sim::AddressSlot(source) == sim::AddressSlot(destination);
      int walks = 0;
      auto walk = [&](sim::PathCache::Path& path) {
        ++walks;
        router.PathTo(source, path);
        if (!within) router.PathTo(destination, path);
      };
      const uint64_t key = sim::PathCache::KeyOf(source, destination, within);
      const sim::PathCache::Path cached = cache.Find(key, walk);
      sim::PathCache::Path walked;
      router.PathTo(source, walked);
      if (!within) router.PathTo(destination, walked);
      ASSERT_EQ(cached.size(), walked.size()) << from << " -> " << sim::AddressChip(destination);
      for (size_t h = 0; h < walked.size(); ++h) {
        EXPECT_EQ(cached[h].target, walked[h].target) << from << ", hop " << h;
        EXPECT_EQ(cached[h].direct, walked[h].direct) << from << ", hop " << h;
      }
      // Asked again at once, it is remembered: no walk.
      const int before = walks;
      const sim::PathCache::Path& again = cache.Find(key, walk);
      EXPECT_EQ(walks, before) << "the path just found is remembered";
      EXPECT_EQ(again.size(), walked.size());
    }
  }
}

class PathCacheTest : public ModuleTest {};

TEST_F(PathCacheTest, GivesTheRoutersPathsOnAPlainTorus) {
  ExpectCachedPathsMatchTheWalk(testing::MakeTopology({4, 3}, {true, false}));
}

TEST_F(PathCacheTest, GivesTheRoutersPathsOnATwistedTorus) {
  ExpectCachedPathsMatchTheWalk(
      testing::MakeTopology({2, 2, 4}, {true, true, true},
                            [](config::Topology& t) { t.mutable_mesh()->set_twisted(true); }),
      /*twisted=*/true);
}

TEST_F(PathCacheTest, GivesTheRoutersPathsOverTwoSlices) {
  ExpectCachedPathsMatchTheWalk(topologies::ParseTopology(
      topologies::PresetText("v5e-2x4") + "multislice { slices: 2 }", "two.textproto"));
}

TEST(PathCacheKey, TellsSourcesDestinationsAndCopiesWithinOneMemoryApart) {
  const uint64_t hbm0 = sim::MakeAddress(0, MemorySpace::kHbm, 0);
  const uint64_t hbm1 = sim::MakeAddress(1, MemorySpace::kHbm, 0);
  const uint64_t vmem1 = sim::MakeAddress(1, MemorySpace::kVmem, 0);
  using sim::PathCache;
  EXPECT_EQ(PathCache::KeyOf(hbm0, hbm1, false), PathCache::KeyOf(hbm0 + 4096, hbm1 + 512, false))
      << "offsets within a memory do not change the path";
  EXPECT_NE(PathCache::KeyOf(hbm0, hbm1, false), PathCache::KeyOf(hbm0, vmem1, false));
  EXPECT_NE(PathCache::KeyOf(hbm0, hbm1, false), PathCache::KeyOf(hbm1, hbm0, false));
  EXPECT_NE(PathCache::KeyOf(hbm0, hbm0, true), PathCache::KeyOf(hbm0, hbm0, false));
  EXPECT_NE(PathCache::KeyOf(hbm0, hbm0, true), PathCache::KeyOf(hbm0, hbm1, false));
  // On a chip of two cores each core's VMEM is a memory of its own, at either end.
  const uint64_t vmem0 = sim::MakeAddress(0, MemorySpace::kVmem, 0);
  const uint64_t vmem0_core1 = sim::MakeAddress(0, sim::MemorySlot(MemorySpace::kVmem, 1), 0);
  const uint64_t vmem1_core1 = sim::MakeAddress(1, sim::MemorySlot(MemorySpace::kVmem, 1), 0);
  EXPECT_NE(PathCache::KeyOf(vmem0, hbm1, false), PathCache::KeyOf(vmem0_core1, hbm1, false));
  EXPECT_NE(PathCache::KeyOf(hbm0, vmem1, false), PathCache::KeyOf(hbm0, vmem1_core1, false));
}

}  // namespace
}  // namespace tpusim::modules
