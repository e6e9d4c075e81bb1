#include "tests/lax/lax_support.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim::testing {

using namespace dsl;

config::Topology LaxTopology(const std::string& name) {
  auto small_vmem = [](config::Topology& t) {
    t.mutable_chip()->mutable_vmem()->set_capacity_bytes(256 << 10);
  };
  if (name == "ring5") return MakeTopology({5}, {true});
  if (name == "ring2") return MakeTopology({2}, {false});
  if (name == "line6") return MakeTopology({6}, {false});
  if (name == "mesh3x2") return MakeTopology({3, 2}, {false, false});
  if (name == "mesh2x3x2") return MakeTopology({2, 3, 2}, {false, false, false});
  if (name == "ring5_small_vmem") return MakeTopology({5}, {true}, small_vmem);
  if (name == "ring4_small_vmem") return MakeTopology({4}, {true}, small_vmem);
  return topologies::LoadTopology(name);
}

PartitionSpec SplitDim0OverMesh(const Mesh& mesh, size_t rank) {
  const PartitionSpec::Entry all(mesh.axis_names());
  switch (rank) {
    case 0:
      return P{};
    case 1:
      return P{all};
    case 2:
      return P{all, nullptr};
    case 3:
      return P{all, nullptr, nullptr};
    default:
      return P{all, nullptr, nullptr, nullptr};
  }
}

LaxRun RunLax(const Mesh& mesh, const kernels::lax::CollectiveSpec& spec, const Shape& shape,
              DType dtype, bool functional) {
  const ShapeDtype x{shape, dtype};
  const ShapeDtype out = kernels::lax::OutputType(mesh, spec, x);
  Shape global = shape.empty() ? Shape{1} : shape;
  global[0] *= mesh.devices();
  // int32 data gets distinct values, so a misplaced element cannot go unnoticed.
  Array input = !functional              ? Array::Placeholder(global, dtype)
                : dtype == DType::kInt32 ? Array::Iota(global, dtype)
                                         : Array::Random(global, dtype, 17);
  LaxRun run{
      shard_map(mesh, {SplitDim0OverMesh(mesh, std::max<size_t>(shape.size(), 1))},
                {SplitDim0OverMesh(mesh, out.shape.size())}, kernels::lax::MakeCall(mesh, spec, x)),
      {},
      {}};
  if (functional) {
    for (int d = 0; d < mesh.devices(); ++d) {
      Shape offsets(global.size(), 0);
      offsets[0] = d * global[0] / mesh.devices();
      Shape sizes = global;
      sizes[0] /= mesh.devices();
      Array shard = input.Slice(offsets, sizes);
      Array reshaped(shape, dtype);
      reshaped.bytes() = shard.bytes();
      run.shards.push_back(std::move(reshaped));
    }
  }
  RunOptions options;
  options.functional = functional;
  // A scalar result has no dimension to split over the mesh: P() is its only spec, though
  // it differs per device (an untiled psum_scatter). The test checks every device's block
  // against the reference itself.
  options.check_replication = !out.shape.empty();
  if (functional) {
    run.result = RunAndCheckTrace(run.program, {input}, options, "lax").result;
  } else {
    run.result = run.program.Run({input}, options);
  }
  return run;
}

}  // namespace tpusim::testing
