#pragma once

// Chip coordinates, the ICI links that exist between torus neighbours (one per direction),
// and dimension-ordered routes over them; on a twisted torus, shortest routes over its
// twisted wraparound links (docs/model.md, "Twisted tori").

#include <cstdint>
#include <string>
#include <vector>

#include "base/twisted_routes.h"
#include "sim/base_names.h"

namespace tpusim::sim {

using LinkId = uint32_t;

struct Link {
  ChipId from;
  ChipId to;
  int axis;
  int direction;     // +1 or -1
  std::string name;  // "x+", "y-"
};

class Torus {
 public:
  // `twist`: per axis, what crossing its wraparound link the + way adds to every axis's
  // coordinate (topologies::TwistShifts; every axis must wrap); empty for a plain torus.
  // With `slices_over_dcn`, axis 0 counts slices that the data-center network joins
  // (config::MultisliceConfig): it has no ICI links. Instead every chip has one DCN link to
  // its counterpart (the same coordinates on the other axes) in each other slice, numbered
  // after its ICI links, with direction 0 (sim/dcn.h books them on the hosts' NICs). A
  // torus is twisted or over the DCN, not both (the loader refuses the pair).
  Torus(DeviceGrid grid, std::vector<bool> wraparound, std::vector<std::vector<int>> twist = {},
        bool slices_over_dcn = false);
  Torus(std::vector<int> shape, std::vector<std::string> axis_names, std::vector<bool> wraparound,
        std::vector<std::vector<int>> twist = {})
      : Torus(DeviceGrid(std::move(shape), std::move(axis_names)), std::move(wraparound),
              std::move(twist)) {}

  const DeviceGrid& grid() const { return grid_; }
  int axes() const { return grid_.axes(); }
  uint32_t chips() const { return grid_.chips(); }
  const std::vector<int>& shape() const { return grid_.shape(); }
  const std::vector<std::string>& axis_names() const { return grid_.axis_names(); }
  bool wraparound(int axis) const { return wraparound_[axis]; }
  bool twisted() const { return !twisted_.empty(); }
  int axis_size(int axis) const { return grid_.axis_size(axis); }
  int AxisIndex(const std::string& name) const { return grid_.AxisIndex(name); }
  Coords CoordsOf(ChipId chip) const { return grid_.CoordsOf(chip); }
  ChipId ChipAt(const Coords& coords) const { return grid_.ChipAt(coords); }
  bool Contains(const Coords& coords) const { return grid_.Contains(coords); }
  std::string Describe(ChipId chip) const { return grid_.Describe(chip); }

  // The link leaving `chip` along `axis` in `direction`, or -1 when there is none (the
  // edge of an axis without wraparound).
  int64_t LinkFrom(ChipId chip, int axis, int direction) const;
  const Link& link(LinkId id) const { return links_[id]; }
  const std::vector<Link>& links() const { return links_; }
  // Links leaving `chip`, in axis order, + before -, then its DCN links by slice.
  std::vector<LinkId> LinksFrom(ChipId chip) const;

  bool slices_over_dcn() const { return dcn_; }
  bool IsDcn(LinkId id) const { return links_[id].direction == 0; }
  // The DCN link from `chip` to its counterpart in `slice`, another slice than its own.
  LinkId DcnLinkFrom(ChipId chip, int slice) const;

  // Dimension-ordered: axis 0 first (over the DCN in one link, when it counts slices). On an
  // axis with wraparound the shorter way round is taken (the + direction on a tie); without
  // wraparound the only way there. On a twisted torus, a shortest route: hop by hop,
  // NextLink's.
  std::vector<LinkId> Route(ChipId from, ChipId to) const;
  // The first link of Route(at, to), or -1 when at == to, without building the route: a
  // router decides hop by hop, and dimension-ordered hops agree with the whole route.
  int64_t NextLink(ChipId at, ChipId to) const;

 private:
  DeviceGrid grid_;
  std::vector<bool> wraparound_;
  std::vector<uint32_t> strides_;  // chips between neighbours along each axis (row-major)
  std::vector<Link> links_;
  std::vector<int64_t> link_index_;  // (chip * axes + axis) * 2 + (direction > 0 ? 0 : 1)
  bool dcn_ = false;
  std::vector<LinkId> dcn_first_;  // by chip, its first DCN link (slices_over_dcn only)

  void AddDcnLinks(ChipId chip);

  // Twisted tori only: the routes' first hops, shared with the lax cost estimate.
  int64_t TwistedNextLink(ChipId at, ChipId to) const {
    const int hop = twisted_.NextHop(at, to);
    return hop < 0 ? -1 : LinkFrom(at, hop / 2, hop % 2 ? -1 : +1);
  }
  base::TwistedRoutes twisted_;
};

}  // namespace tpusim::sim
