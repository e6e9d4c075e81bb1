#pragma once

// The kernel README.md's "Write your first collective kernel" walks through line by line:
// a unidirectional ring all-gather written with nothing but the DSL's raw calls.
// tests/docs/doc_examples_test.cc checks that the README shows this file's code, and runs
// the kernel on a slice against the host's concatenation of the shards.

#include <cstdint>
#include <string>

#include "dsl/pallas_call.h"
#include "dsl/shard_map.h"

namespace tpusim::examples {

// Every device starts with one shard `x` of `shard` elements in HBM and ends with all X
// shards of the axis in `out`, in axis order.
dsl::KernelFn RingAllGather(std::string axis, int64_t shard);

// The kernel as a program: pallas_call over `axis` of `mesh`, input x P(axis) (global
// [X * shard]), output out P() (every device holds the whole gathered array).
dsl::ShardMap RingAllGatherProgram(const dsl::Mesh& mesh, const std::string& axis, int64_t shard,
                                   dsl::DType dtype);

}  // namespace tpusim::examples
