#pragma once

// Running a lax collective the way a program would: every device of the mesh gets its own
// shard of one global array (dimension 0 split over every mesh axis), through shard_map.

#include <string>
#include <vector>

#include "dsl/shard_map.h"
#include "kernels/lax/collectives.h"

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
