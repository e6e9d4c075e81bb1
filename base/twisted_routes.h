#pragma once

// Shortest routes on a twisted torus (docs/model.md, "Twisted tori"): where a twisted
// wraparound link lands, and the first hop of a shortest route between two devices. The
// model's Torus (sim/torus.h) routes every DMA and signal with it, and the lax collectives'
// cost estimate (kernels/lax/cost_model.h) walks the same routes, so both count the hops the
// twisted wiring really takes.

#include <cstdint>
#include <vector>

#include "base/device_grid.h"

namespace tpusim::base {

class TwistedRoutes {
 public:
  TwistedRoutes() = default;
  // `twist`: per axis, what crossing its wraparound link the + way adds to every axis's
  // coordinate (topologies::TwistShifts); every axis wraps around. Empty: a plain torus, for
  // which NextHop must not be called.
  TwistedRoutes(const DeviceGrid& grid, std::vector<std::vector<int>> twist);

  bool empty() const { return twist_.empty(); }
  // Where the wraparound link of `axis`, crossed in `direction`, lands: `there` (already
  // wrapped along `axis`) shifted by the twist.
  void AddTwist(Coords& there, int axis, int direction) const;
  // The first hop of a shortest route from `at` to `to`, as axis * 2 + (the - way ? 1 : 0);
  // -1 when at == to. Following it hop by hop walks the whole route.
  int NextHop(ChipId at, ChipId to) const;

 private:
  std::vector<int> shape_;
  std::vector<uint32_t> strides_;  // devices between neighbours along each axis (row-major)
  std::vector<std::vector<int>> twist_;
  // By the coordinate difference (to - at, per axis, offset by axis_size - 1, row-major):
  // where in hops_ the first hops of its shortest routes begin (the next entry: end).
  std::vector<uint32_t> hop_begin_;
  std::vector<int8_t> hops_;  // axis * 2 + (the - way ? 1 : 0)
  std::vector<uint32_t> difference_strides_;
};

}  // namespace tpusim::base
