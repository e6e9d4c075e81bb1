#pragma once

// Running a lax collective the way a program would: every device of the mesh gets its own
// shard of one global array (dimension 0 split over every mesh axis), through shard_map.

#include <ostream>
#include <string>
#include <vector>

#include "dsl/shard_map.h"
#include "kernels/lax/collectives.h"
#include "topologies/topology.pb.h"

namespace tpusim::testing {

// A collective in JAX's terms: axis is all_gather's axis, psum_scatter's
// scatter_dimension or all_to_all's split_axis.
inline kernels::lax::CollectiveSpec LaxSpec(kernels::lax::Collective kind,
                                            std::vector<std::string> axes, int axis = 0,
                                            bool tiled = false, int concat_axis = 0) {
  kernels::lax::CollectiveSpec s{kind, std::move(axes)};
  s.axis = axis;
  s.tiled = tiled;
  s.concat_axis = concat_axis;
  return s;
}

// One collective on one topology (LaxTopology's names), on per-device x of `shape`.
struct LaxCase {
  std::string name;
  std::string topology;
  kernels::lax::CollectiveSpec spec;
  dsl::Shape shape;  // per device
  dsl::DType dtype;
};

inline void PrintTo(const LaxCase& c, std::ostream* os) {
  *os << c.name;
}

// The test-local topologies the lax tests name: "ring5", "ring2" (no wraparound), "line6",
// "mesh3x2", "mesh2x3x2" (no wraparound), "ring5_small_vmem" and "ring4_small_vmem" (256 KiB
// of VMEM: reduction chunks and staging slots of a few KiB, so blocks go in many pieces and
// rounds); any other name is a preset.
config::Topology LaxTopology(const std::string& name);

// P((all mesh axes), None, ...) for an array of `rank` dims; P() for rank 0.
dsl::PartitionSpec SplitDim0OverMesh(const dsl::Mesh& mesh, size_t rank);

struct LaxRun {
  dsl::ShardMap program;
  std::vector<dsl::Array> shards;  // per device: what it gets as x
  dsl::RunResult result;
};
// Runs `spec` on per-device x of `shape` and `dtype` (distinct values on every device in
// functional runs; placeholders otherwise).
LaxRun RunLax(const dsl::Mesh& mesh, const kernels::lax::CollectiveSpec& spec,
              const dsl::Shape& shape, dsl::DType dtype, bool functional = true);

}  // namespace tpusim::testing
