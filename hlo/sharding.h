#pragma once

// HloSharding decoded from a sharding={...} attribute: {replicated}, {manual}, {unknown},
// {maximal device=0}, tiled {devices=[8,1]<=[8]} / {devices=[2,2]0,2,1,3} with
// last_tile_dim_replicate or last_tile_dims={manual}, and tuple shardings
// {{replicated}, {devices=[2]<=[2]}}. metadata={...} inside a sharding is skipped.

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/attribute.h"

namespace tpusim::hlo {

struct HloSharding {
  enum class Kind { kReplicated, kManual, kUnknown, kMaximal, kTiled, kTuple };

  Kind kind = Kind::kReplicated;
  int64_t device = -1;  // kMaximal
  // kTiled: the tile assignment's dimensions (including trailing replicated or subgroup
  // dimensions) and its devices in row-major order over them, expanded from the iota form.
  std::vector<int64_t> tile_assignment_dimensions;
  std::vector<int64_t> tile_assignment_devices;
  bool replicate_on_last_tile_dim = false;
  // last_tile_dims={manual, replicated}: the kinds of the trailing subgroup dimensions.
  std::vector<std::string> last_tile_dims;
  std::vector<HloSharding> tuple_elements;  // kTuple
  // shard_as N / shard_like N, when given (-1 otherwise).
  int64_t shard_as = -1;
  int64_t shard_like = -1;

  bool IsTiled() const { return kind == Kind::kTiled; }
  // Tiled: the dimensions that tile the data (without the trailing replicated/subgroup ones).
  std::vector<int64_t> DataTileDimensions() const;
};

HloSharding DecodeSharding(const Attribute& attribute);

}  // namespace tpusim::hlo
