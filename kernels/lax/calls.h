#pragma once

// Inside the lax collectives: the checked form of a spec and one pallas_call maker per
// collective. Makers take a spec that Checked() returned.

#include "kernels/lax/collectives.h"

namespace tpusim::kernels::lax {

// Validates `spec` against the mesh and x (throwing as OutputType documents) and returns
// it with negative dimension indices made non-negative, as JAX canonicalises them.
CollectiveSpec Checked(const dsl::Mesh& mesh, const CollectiveSpec& spec, const dsl::ShapeDtype& x);

dsl::PallasCall MakeAllGather(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                              const dsl::ShapeDtype& x, const dsl::ShapeDtype& out);
dsl::PallasCall MakePsumScatter(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                                const dsl::ShapeDtype& x, const dsl::ShapeDtype& out);
dsl::PallasCall MakePsum(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                         const dsl::ShapeDtype& x);
dsl::PallasCall MakePpermute(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                             const dsl::ShapeDtype& x);
dsl::PallasCall MakeAllToAll(const dsl::Mesh& mesh, const CollectiveSpec& spec,
                             const dsl::ShapeDtype& x, const dsl::ShapeDtype& out);

// Devices per group of a checked spec: the size of its (first) axis, or of its replica groups.
int GroupSize(const dsl::Mesh& mesh, const CollectiveSpec& spec);

}  // namespace tpusim::kernels::lax
