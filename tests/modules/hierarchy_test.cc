// The module tree (sim/slice.h): Slice -> Chip -> {TensorCore, Memory x3, DmaEngine, Router,
// IciLink per outgoing direction}, named by SystemC's hierarchical names
// (`slice.chip_1_3.hbm`), with every link direction of the torus exactly one module.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/chip.h"
#include "sim/dma_engine.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/router.h"
#include "sim/slice.h"
#include "sim/tensor_core.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::MemorySpace;
using ::testing::HasSubstr;

class HierarchyTest : public ModuleTest {};

template <typename Module>
Module* Find(const std::string& name) {
  return dynamic_cast<Module*>(sc_core::sc_find_object(name.c_str()));
}

// Every object of type Module under `root`, in tree order.
template <typename Module>
std::vector<Module*> All(sc_core::sc_object& root) {
  std::vector<Module*> found;
  std::function<void(sc_core::sc_object&)> walk = [&](sc_core::sc_object& object) {
    if (auto* module = dynamic_cast<Module*>(&object)) found.push_back(module);
    for (sc_core::sc_object* child : object.get_child_objects())
      walk(*child);
  };
  walk(root);
  return found;
}

TEST_F(HierarchyTest, ModulesAreNamedAfterTheirPlaceInTheTree) {
  // 2 x 4, the y axis wrapping.
  sim::Slice slice("slice", testing::MakeTopology({2, 4}, {false, true}), TimingOnly());
  const ChipId id = slice.torus().ChipAt({1, 3});
  sim::Chip& chip = slice.chip(id);
  EXPECT_EQ(Find<sim::Chip>("slice.chip_1_3"), &chip);
  EXPECT_EQ(Find<sim::Memory>("slice.chip_1_3.hbm"), &chip.memory(MemorySpace::kHbm));
  EXPECT_EQ(Find<sim::Memory>("slice.chip_1_3.vmem"), &chip.memory(MemorySpace::kVmem));
  EXPECT_EQ(Find<sim::Memory>("slice.chip_1_3.smem"), &chip.memory(MemorySpace::kSmem));
  EXPECT_EQ(Find<sim::TensorCore>("slice.chip_1_3.core"), &chip.core());
  EXPECT_EQ(Find<sim::DmaEngine>("slice.chip_1_3.dma"), &chip.dma());
  EXPECT_EQ(Find<sim::Router>("slice.chip_1_3.router"), &chip.router());
  EXPECT_EQ(std::string(chip.memory(MemorySpace::kHbm).name()), "slice.chip_1_3.hbm");
  EXPECT_EQ(chip.memory(MemorySpace::kHbm).chip(), id);
  // x has no wraparound: chip (1, 3) is at its + edge. y wraps: both ways exist.
  EXPECT_NE(Find<sim::IciLink>("slice.chip_1_3.ici_x-"), nullptr);
  EXPECT_EQ(Find<sim::IciLink>("slice.chip_1_3.ici_x+"), nullptr);
  auto* y_plus = Find<sim::IciLink>("slice.chip_1_3.ici_y+");
  ASSERT_NE(y_plus, nullptr);
  EXPECT_EQ(y_plus->link().to, slice.torus().ChipAt({1, 0}));
  EXPECT_EQ(&y_plus->next(), &slice.chip(slice.torus().ChipAt({1, 0})).router());
  EXPECT_NE(Find<sim::IciLink>("slice.chip_0_0.ici_x+"), nullptr);
  EXPECT_EQ(Find<sim::IciLink>("slice.chip_0_0.ici_x-"), nullptr);
}

struct Shape {
  std::vector<int> shape;
  std::vector<bool> wraparound;
};

class EveryLinkTest : public ModuleTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(EveryLinkTest, IsOneModuleUnderTheChipItLeaves) {
  sim::Slice slice("slice", testing::MakeTopology(GetParam().shape, GetParam().wraparound),
                   TimingOnly());
  const sim::Torus& torus = slice.torus();
  const std::vector<sim::IciLink*> modules = All<sim::IciLink>(slice);
  EXPECT_EQ(modules.size(), torus.links().size());
  for (sim::LinkId id = 0; id < torus.links().size(); ++id) {
    const sim::Link& link = torus.link(id);
    const std::string name =
        "slice.chip_" + torus.grid().DescribeCoords(link.from) + ".ici_" + link.name;
    int matches = 0;
    for (const sim::IciLink* module : modules) {
      if (module->link().from != link.from || module->link().name != link.name) continue;
      ++matches;
      EXPECT_EQ(std::string(module->name()), name);
      EXPECT_EQ(module->link().to, link.to) << name;
      EXPECT_EQ(module->get_parent_object(), &slice.chip(link.from)) << name;
    }
    EXPECT_EQ(matches, 1) << name;
    sim::IciLink* found = Find<sim::IciLink>(name);
    ASSERT_NE(found, nullptr) << name;
    EXPECT_EQ(&found->next(), &slice.chip(link.to).router()) << name;
  }
  // And where the torus has no link, there is no module.
  for (ChipId chip = 0; chip < torus.chips(); ++chip) {
    for (int axis = 0; axis < torus.axes(); ++axis) {
      for (int direction : {+1, -1}) {
        if (torus.LinkFrom(chip, axis, direction) >= 0) continue;
        const std::string name = "slice.chip_" + torus.grid().DescribeCoords(chip) + ".ici_" +
                                 torus.axis_names()[static_cast<size_t>(axis)] +
                                 (direction > 0 ? "+" : "-");
        EXPECT_EQ(sc_core::sc_find_object(name.c_str()), nullptr) << name;
      }
    }
  }
  // Each chip has one of each of its other modules.
  EXPECT_EQ(All<sim::Chip>(slice).size(), torus.chips());
  EXPECT_EQ(All<sim::Memory>(slice).size(), 3 * torus.chips());
  EXPECT_EQ(All<sim::Router>(slice).size(), torus.chips());
  EXPECT_EQ(All<sim::DmaEngine>(slice).size(), torus.chips());
  EXPECT_EQ(All<sim::TensorCore>(slice).size(), torus.chips());
}

INSTANTIATE_TEST_SUITE_P(Shapes, EveryLinkTest,
                         ::testing::Values(Shape{{1}, {false}}, Shape{{2}, {true}},
                                           Shape{{5}, {false}}, Shape{{4, 4}, {true, true}},
                                           Shape{{2, 4}, {false, true}},
                                           Shape{{3, 2, 4}, {true, false, true}}));

TEST_F(HierarchyTest, DescribeTreeListsEachModuleWithItsParameters) {
  const auto topology = testing::MakeTopology({2}, {false}, [](config::Topology& t) {
    auto* link = t.add_link_override();
    link->add_chip(0);
    link->set_direction("x+");
    link->set_bandwidth_bytes_per_s(2.25e10);
    link->set_latency_ns(500);
    auto* chip = t.add_chip_override();
    chip->add_chip(1);
    chip->mutable_hbm()->set_model("row_buffer");
    auto* banks = chip->mutable_hbm()->add_parameter();
    banks->set_name("banks");
    banks->set_value(16);
  });
  sim::Slice slice("slice", topology, TimingOnly());
  const std::string tree = sim::DescribeTree(slice);
  EXPECT_THAT(tree, HasSubstr("slice  topology="));
  EXPECT_THAT(tree, HasSubstr("\n  chip_0  id=0  name=TPU v5e\n"));
  EXPECT_THAT(tree, HasSubstr("\n    hbm  capacity="));
  EXPECT_THAT(tree, HasSubstr("bandwidth=819 GB/s  timing=bandwidth\n"));
  // The overridden link, and the other direction as the slice's ici says.
  EXPECT_THAT(tree,
              HasSubstr("\n    ici_x+  to=chip_1  bandwidth=22.5 GB/s  latency=500.000 ns\n"));
  EXPECT_THAT(tree, HasSubstr("\n    ici_x-  to=chip_0  bandwidth=45 GB/s  latency=1.000 us\n"));
  // Chip 1's HBM is timed by the row-buffer model, a module of its own.
  EXPECT_THAT(tree, HasSubstr("timing=row_buffer\n"));
  EXPECT_THAT(tree, HasSubstr("\n    hbm_row_buffer  row=1 KiB  banks=16  row miss=30.000 ns"));
}

}  // namespace
}  // namespace tpusim::modules
