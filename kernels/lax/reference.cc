// Host references for the lax collectives, straight from jax.lax's definitions: data is
// moved byte for byte, and sums are taken in double and rounded once to the dtype.

#include <algorithm>
#include <map>

#include "kernels/lax/calls.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

// The same bytes under another shape of as many elements.
Array Reshaped(const Array& a, const Shape& shape) {
  Array r(shape, a.dtype());
  r.bytes() = a.bytes();
  return r;
}

Shape Inserted(Shape shape, int dim, int64_t size) {
  shape.insert(shape.begin() + dim, size);
  return shape;
}

// Row-major multi-index of flat element i.
Shape Unflatten(int64_t i, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

int64_t Flatten(const Shape& index, const Shape& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + index[d];
  return i;
}

// The sum (max, min) over the group, in double, rounded once to the dtype.
Array Reduce(Reduction reduction, const std::vector<Array>& x, const std::vector<int>& group) {
  const Array& first = x[group[0]];
  Array result(first.shape(), first.dtype());
  for (int64_t e = 0; e < first.size(); ++e) {
    double r = first.GetFlat(e);
    for (size_t i = 1; i < group.size(); ++i) {
      const double v = x[group[i]].GetFlat(e);
      r = reduction == Reduction::kSum   ? r + v
          : reduction == Reduction::kMax ? std::max(r, v)
                                         : std::min(r, v);
    }
    result.SetFlat(e, r);
  }
  return result;
}

// The mean over the group, in double, rounded once to `dtype`.
Array Mean(const std::vector<Array>& x, const std::vector<int>& group, DType dtype) {
  const Array& first = x[group[0]];
  Array result(first.shape(), dtype);
  for (int64_t e = 0; e < first.size(); ++e) {
    double sum = 0;
    for (int device : group)
      sum += x[device].GetFlat(e);
    result.SetFlat(e, sum / static_cast<double>(group.size()));
  }
  return result;
}

Array AllGather(const CollectiveSpec& c, const ShapeDtype& out, const std::vector<Array>& x,
                const std::vector<int>& group) {
  Array result(out.shape, out.dtype);
  for (size_t i = 0; i < group.size(); ++i) {
    const Array& shard = x[group[i]];
    Shape offsets(out.shape.size(), 0);
    if (c.tiled) {
      offsets[c.axis] = static_cast<int64_t>(i) * shard.shape()[c.axis];
      result.Place(shard, offsets);
    } else {
      offsets[c.axis] = static_cast<int64_t>(i);
      result.Place(Reshaped(shard, Inserted(shard.shape(), c.axis, 1)), offsets);
    }
  }
  return result;
}

Array PsumScatter(const CollectiveSpec& c, const ShapeDtype& out, const Array& sum, int me) {
  Shape offsets(sum.shape().size(), 0);
  Shape sizes = sum.shape();
  const int64_t tile = c.tiled ? out.shape[c.axis] : 1;
  offsets[c.axis] = me * tile;
  sizes[c.axis] = tile;
  return Reshaped(sum.Slice(offsets, sizes), out.shape);
}

// out[o]: o's position along concat_axis names the source device, the rest (with this
// device's tile put back along split_axis) the element of the source's x.
Array AllToAll(const CollectiveSpec& c, const ShapeDtype& out, const std::vector<Array>& x,
               const std::vector<int>& group, int me) {
  Array result(out.shape, out.dtype);
  const Shape& in_shape = x[group[0]].shape();
  const int n = static_cast<int>(group.size());
  for (int64_t e = 0; e < result.size(); ++e) {
    Shape index = Unflatten(e, out.shape);
    int source = 0;
    if (c.tiled) {
      const int64_t tile = out.shape[c.concat_axis] / n;
      source = static_cast<int>(index[c.concat_axis] / tile);
      index[c.concat_axis] %= tile;
      index[c.axis] += me * (in_shape[c.axis] / n);
    } else {
      source = static_cast<int>(index[c.concat_axis]);
      index.erase(index.begin() + c.concat_axis);
      index.insert(index.begin() + c.axis, me);
    }
    result.SetFlat(e, x[group[source]].GetFlat(Flatten(index, in_shape)));
  }
  return result;
}

}  // namespace

std::vector<Array> Reference(const Mesh& mesh, const CollectiveSpec& spec,
                             const std::vector<Array>& x) {
  const ShapeDtype in{x.at(0).shape(), x.at(0).dtype()};
  const CollectiveSpec c = Checked(mesh, spec, in);
  const ShapeDtype out = OutputType(mesh, spec, in);
  // Every named axis at once (psum over several axes sums over all of them).
  const DeviceGroups groups = GroupsOf(mesh, c);
  std::vector<Array> results;
  for (int device = 0; device < mesh.devices(); ++device) {
    const std::vector<int>& group = groups.GroupOf(device);
    const int me = groups.RingOf(device).index;
    switch (c.kind) {
      case Collective::kAllGather:
        results.push_back(AllGather(c, out, x, group));
        break;
      case Collective::kPsum:
        results.push_back(c.mean ? Mean(x, group, out.dtype) : Reduce(c.reduction, x, group));
        break;
      case Collective::kPsumScatter:
        results.push_back(PsumScatter(c, out, Reduce(c.reduction, x, group), me));
        break;
      case Collective::kPpermute: {
        Array result(out.shape, out.dtype);
        for (const auto& [s, d] : c.perm) {
          if (d == me) result = x[group[s]];
        }
        results.push_back(std::move(result));
        break;
      }
      case Collective::kAllToAll:
        results.push_back(AllToAll(c, out, x, group, me));
        break;
      case Collective::kBroadcast:
        results.push_back(x[group[0]]);
        break;
    }
  }
  return results;
}

}  // namespace tpusim::kernels::lax
