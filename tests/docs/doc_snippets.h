#pragma once

// The code blocks of docs/dsl.md that are not taken from the library, compiled here as the
// document shows them (tests/docs/doc_examples_test.cc checks the document against this
// file and runs them). They also register the kernel `my_ring`, the parameter example.

#include "dsl/kernel.h"
#include "dsl/shard_map.h"

namespace tpusim::docs {

// docs/dsl.md "Operands": binds a call's operands every way the document shows, and throws
// unless each way finds the same refs.
dsl::KernelFn BindOperands();

// docs/dsl.md "Programs": out = x @ w for x P('x', 'y') and w P('x', None), summed over y.
dsl::ShardMap DocProgram(const dsl::Mesh& mesh);

}  // namespace tpusim::docs
