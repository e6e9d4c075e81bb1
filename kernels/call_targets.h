#pragma once

// The library's pallas_call targets (kernels/call_targets.cc) take their attributes from their
// kernels' parameter declarations; this is how, so a test can hold a target to its kernel.

#include <string>
#include <vector>

#include "dsl/program/op_registry.h"

namespace tpusim::kernels {

// The attributes of a call to registry entry `kernel` by name: the declarations of `names`
// among its KernelInfo::params (dsl::AttrSpec::Of), `axis` spelled axis_name and required.
// Throws Error(kKernelMisuse) when the kernel is not registered or does not declare a name.
std::vector<dsl::AttrSpec> KernelAttributes(const std::string& kernel,
                                            const std::vector<std::string>& names);

}  // namespace tpusim::kernels
