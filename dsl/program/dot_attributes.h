#pragma once

// The attributes the dot ops share (dot, dot_general): the result's dtype and the
// precision, declared once in dsl/program/dot_general_ops.cc.

#include <vector>

#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

// preferred_element_type (optional: the operands' dtype) and precision (default DEFAULT).
std::vector<AttrSpec> DotResultAttributes();

}  // namespace tpusim::dsl
