#include "sim/torus.h"

#include <cassert>

namespace tpusim::sim {

Torus::Torus(DeviceGrid grid, std::vector<bool> wraparound, std::vector<std::vector<int>> twist,
             bool slices_over_dcn)
    : grid_(std::move(grid)), wraparound_(std::move(wraparound)), dcn_(slices_over_dcn) {
  if (!twist.empty()) twisted_ = base::TwistedRoutes(grid_, std::move(twist));
  strides_.assign(axes(), 1);
  for (int axis = axes() - 1; axis > 0; --axis)
    strides_[axis - 1] = strides_[axis] * static_cast<uint32_t>(axis_size(axis));
  link_index_.assign(static_cast<size_t>(chips()) * axes() * 2, -1);
  for (ChipId chip = 0; chip < chips(); ++chip) {
    const Coords here = CoordsOf(chip);
    for (int axis = 0; axis < axes(); ++axis) {
      const int n = axis_size(axis);
      if (n < 2 || (dcn_ && axis == 0)) continue;
      for (int direction : {+1, -1}) {
        Coords there = here;
        there[axis] += direction;
        if (there[axis] < 0 || there[axis] >= n) {
          if (!wraparound_[axis]) continue;
          there[axis] = (there[axis] + n) % n;
          if (twisted()) twisted_.AddTwist(there, axis, direction);
        }
        link_index_[(static_cast<size_t>(chip) * axes() + axis) * 2 + (direction > 0 ? 0 : 1)] =
            static_cast<int64_t>(links_.size());
        links_.push_back(Link{chip, ChipAt(there), axis, direction,
                              axis_names()[axis] + (direction > 0 ? "+" : "-")});
      }
    }
    if (dcn_) AddDcnLinks(chip);
  }
}

void Torus::AddDcnLinks(ChipId chip) {
  dcn_first_.push_back(static_cast<LinkId>(links_.size()));
  const int own = static_cast<int>(chip / strides_[0]);
  for (int slice = 0; slice < axis_size(0); ++slice) {
    if (slice == own) continue;
    const ChipId to =
        chip - static_cast<ChipId>(own) * strides_[0] + static_cast<ChipId>(slice) * strides_[0];
    links_.push_back(Link{chip, to, 0, 0, axis_names()[0] + std::to_string(slice)});
  }
}

LinkId Torus::DcnLinkFrom(ChipId chip, int slice) const {
  const int own = static_cast<int>(chip / strides_[0]);
  assert(dcn_ && slice != own);
  return dcn_first_[chip] + static_cast<LinkId>(slice < own ? slice : slice - 1);
}

int64_t Torus::LinkFrom(ChipId chip, int axis, int direction) const {
  return link_index_[(static_cast<size_t>(chip) * axes() + axis) * 2 + (direction > 0 ? 0 : 1)];
}

std::vector<LinkId> Torus::LinksFrom(ChipId chip) const {
  std::vector<LinkId> out;
  for (int axis = 0; axis < axes(); ++axis) {
    for (int direction : {+1, -1}) {
      const int64_t link = LinkFrom(chip, axis, direction);
      if (link >= 0) out.push_back(static_cast<LinkId>(link));
    }
  }
  for (int i = 0; dcn_ && i + 1 < axis_size(0); ++i)
    out.push_back(dcn_first_[chip] + static_cast<LinkId>(i));
  return out;
}

std::vector<LinkId> Torus::Route(ChipId from, ChipId to) const {
  std::vector<LinkId> route;
  if (twisted()) {
    for (ChipId at = from; at != to; at = links_[route.back()].to)
      route.push_back(static_cast<LinkId>(TwistedNextLink(at, to)));
    return route;
  }
  Coords at = CoordsOf(from);
  for (const base::RouteLeg& leg : base::DimensionOrderedRoute(grid_, wraparound_, from, to)) {
    const int n = axis_size(leg.axis);
    if (dcn_ && leg.axis == 0) {  // one DCN link to the destination's slice
      at[0] += leg.direction * leg.hops;
      route.push_back(DcnLinkFrom(from, at[0]));
      continue;
    }
    for (int h = 0; h < leg.hops; ++h) {
      const int64_t link = LinkFrom(ChipAt(at), leg.axis, leg.direction);
      assert(link >= 0);
      route.push_back(static_cast<LinkId>(link));
      at[leg.axis] = ((at[leg.axis] + leg.direction) % n + n) % n;
    }
  }
  return route;
}

int64_t Torus::NextLink(ChipId at, ChipId to) const {
  if (twisted()) return TwistedNextLink(at, to);
  for (int axis = 0; axis < axes(); ++axis) {
    const int n = axis_size(axis);
    const int here = static_cast<int>(at / strides_[axis] % static_cast<uint32_t>(n));
    const int there = static_cast<int>(to / strides_[axis] % static_cast<uint32_t>(n));
    if (here == there) continue;
    if (dcn_ && axis == 0) return DcnLinkFrom(at, there);
    int direction;
    if (wraparound_[axis]) {
      const int forward = ((there - here) % n + n) % n;
      direction = forward <= n - forward ? +1 : -1;
    } else {
      direction = there > here ? +1 : -1;
    }
    return LinkFrom(at, axis, direction);
  }
  return -1;
}

}  // namespace tpusim::sim
