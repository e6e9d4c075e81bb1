// Twisted tori (docs/model.md, "Twisted tori"): where a twisted wraparound link lands, and
// shortest routes over such links.
//
// A twisted torus is the integer lattice Z^axes folded by the generators g_a = n_a e_a -
// twist[a]: crossing axis a's wraparound the + way moves n_a along a and lands where the
// coordinates are shifted by twist[a], so the lattice points p and p + g_a are one chip. Every
// hop moves one step along one axis, so a route from `at` to `to` is a walk in the lattice
// from coordinates(at) to some point of coordinates(to) + (combinations of the g_a), and the
// shortest one walks to a nearest such point (in hops: the sum of |component|s), one axis
// after the other. Which points are nearest depends only on the coordinate difference, so
// they are found once per difference here, and each hop looks up their first hops.

#include "base/twisted_routes.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <limits>
#include <set>

namespace tpusim::base {

TwistedRoutes::TwistedRoutes(const DeviceGrid& grid, std::vector<std::vector<int>> twist)
    : shape_(grid.shape()), twist_(std::move(twist)) {
  const int k = grid.axes();
  if (twist_.empty()) return;
  assert(static_cast<int>(twist_.size()) == k);
  strides_.assign(static_cast<size_t>(k), 1);
  for (int a = k - 1; a > 0; --a)
    strides_[a - 1] = strides_[a] * static_cast<uint32_t>(shape_[a]);
  difference_strides_.assign(static_cast<size_t>(k), 1);
  for (int a = k - 1; a > 0; --a)
    difference_strides_[a - 1] = difference_strides_[a] * (2 * shape_[a] - 1);
  const size_t differences = difference_strides_[0] * (2 * shape_[0] - 1);
  std::vector<Coords> generators(k, Coords(k, 0));
  for (int a = 0; a < k; ++a) {
    for (int b = 0; b < k; ++b)
      generators[a][b] = (a == b ? shape_[a] : 0) - twist_[a][b];
  }
  // Coefficients of the generators tried per difference. With axes of K and 2K chips the
  // nearest points need at most 2 of a K-axis's generator and 3 of a 2K-axis's (the K-axes'
  // twists add up to at most 4K along a 2K-axis; 3 x 2K brings that back within K).
  constexpr int kReach = 3;
  hop_begin_.assign(differences + 1, 0);
  hops_.clear();
  Coords difference(k), point(k), plain(k);
  std::vector<int> c(k);
  std::set<Coords> nearest;  // lexicographic order
  for (size_t index = 0; index < differences; ++index) {
    size_t rest = index;
    for (int a = 0; a < k; ++a) {
      difference[a] = static_cast<int>(rest / difference_strides_[a]) - (shape_[a] - 1);
      rest %= difference_strides_[a];
    }
    int best_hops = std::numeric_limits<int>::max();
    nearest.clear();
    std::fill(c.begin(), c.end(), -kReach);
    while (true) {
      int hops = 0;
      for (int a = 0; a < k; ++a) {
        point[a] = difference[a];
        for (int g = 0; g < k; ++g)
          point[a] += c[g] * generators[g][a];
        hops += std::abs(point[a]);
      }
      if (hops < best_hops) {
        best_hops = hops;
        nearest.clear();
      }
      if (hops == best_hops) nearest.insert(point);
      int a = k - 1;
      while (a >= 0 && c[a] == kReach)
        c[a--] = -kReach;
      if (a < 0) break;
      ++c[a];
    }
    // The plain torus's route (the shorter way round each axis, + on a tie), when it is one
    // of the shortest: traffic the twist does not speed up keeps the routes a kernel written
    // for the plain torus expects (docs/model.md, "Twisted tori").
    for (int a = 0; a < k; ++a) {
      const int n = shape_[a];
      const int forward = (difference[a] % n + n) % n;
      plain[a] = forward <= n - forward ? forward : forward - n;
    }
    if (nearest.count(plain)) nearest = {plain};
    // Each nearest point's first hop: along its first axis that is not 0. The zero
    // difference (the chip itself) has none.
    for (const Coords& p : nearest) {
      for (int a = 0; a < k; ++a) {
        if (p[a] == 0) continue;
        hops_.push_back(static_cast<int8_t>(a * 2 + (p[a] < 0 ? 1 : 0)));
        break;
      }
    }
    hop_begin_[index + 1] = static_cast<uint32_t>(hops_.size());
  }
}

void TwistedRoutes::AddTwist(Coords& there, int axis, int direction) const {
  for (size_t b = 0; b < shape_.size(); ++b) {
    const int n = shape_[b];
    there[b] = ((there[b] + direction * twist_[axis][b]) % n + n) % n;
  }
}

int TwistedRoutes::NextHop(ChipId at, ChipId to) const {
  size_t index = 0;
  int destination_sum = 0;
  for (size_t axis = 0; axis < shape_.size(); ++axis) {
    const auto n = static_cast<uint32_t>(shape_[axis]);
    const auto here = static_cast<int>(at / strides_[axis] % n);
    const auto there = static_cast<int>(to / strides_[axis] % n);
    index +=
        static_cast<size_t>(there - here + static_cast<int>(n) - 1) * difference_strides_[axis];
    destination_sum += there;
  }
  const uint32_t begin = hop_begin_[index];
  const uint32_t ties = hop_begin_[index + 1] - begin;
  if (ties == 0) return -1;
  // Ties between nearest points are split by the destination, so that the traffic to
  // different chips spreads over the tied paths (docs/model.md, "Twisted tori").
  return hops_[begin + static_cast<uint32_t>(destination_sum) % ties];
}

}  // namespace tpusim::base
