// The typed C++ API of ProgramContext: each method calls its op by name, so C++ programs
// and an HLO interpreter run the same code.

#include "dsl/program/context.h"

namespace tpusim::dsl {

namespace {

Attributes GatherAttrs(const std::string& axis_name, int axis, bool tiled) {
  return {{"axis_name", axis_name}, {"axis", axis}, {"tiled", tiled}};
}

Attributes ScatterAttrs(const std::string& axis_name, int scatter_dimension, bool tiled) {
  return {{"axis_name", axis_name}, {"scatter_dimension", scatter_dimension}, {"tiled", tiled}};
}

Attributes AllToAllAttrs(const std::string& axis_name, int split_axis, int concat_axis,
                         bool tiled) {
  return {{"axis_name", axis_name},
          {"split_axis", split_axis},
          {"concat_axis", concat_axis},
          {"tiled", tiled}};
}

}  // namespace

Value ProgramContext::dot(const Value& a, const Value& b, std::optional<DType> preferred,
                          Precision precision) {
  Attributes attrs = {{"precision", precision}};
  if (preferred) attrs.emplace("preferred_element_type", *preferred);
  return Call("dot", {a, b}, attrs).at(0);
}

Value ProgramContext::add(const Value& a, const Value& b) {
  return Call("add", {a, b}).at(0);
}

Value ProgramContext::multiply(const Value& a, const Value& b) {
  return Call("multiply", {a, b}).at(0);
}

Value ProgramContext::max(const Value& a, const Value& b) {
  return Call("max", {a, b}).at(0);
}

Value ProgramContext::relu(const Value& x) {
  return Call("relu", {x}).at(0);
}

Value ProgramContext::astype(const Value& x, DType dtype) {
  return Call("astype", {x}, {{"dtype", dtype}}).at(0);
}

Value ProgramContext::dynamic_slice(const Value& x, const std::vector<int64_t>& start_indices,
                                    const std::vector<int64_t>& slice_sizes) {
  return Call("dynamic_slice", {x},
              {{"start_indices", start_indices}, {"slice_sizes", slice_sizes}})
      .at(0);
}

Value ProgramContext::concatenate(const std::vector<Value>& xs, int dimension) {
  return Call("concatenate", xs, {{"dimension", dimension}}).at(0);
}

Value ProgramContext::zeros(const Shape& shape, DType dtype) {
  return Call("zeros", {}, {{"shape", shape}, {"dtype", dtype}}).at(0);
}

Value ProgramContext::all_gather(const Value& x, const std::string& axis_name, int axis,
                                 bool tiled) {
  return Call("all_gather", {x}, GatherAttrs(axis_name, axis, tiled)).at(0);
}

Value ProgramContext::psum(const Value& x, const std::vector<std::string>& axis_name) {
  return Call("psum", {x}, {{"axis_name", axis_name}}).at(0);
}

Value ProgramContext::psum_scatter(const Value& x, const std::string& axis_name,
                                   int scatter_dimension, bool tiled) {
  return Call("psum_scatter", {x}, ScatterAttrs(axis_name, scatter_dimension, tiled)).at(0);
}

Value ProgramContext::ppermute(const Value& x, const std::string& axis_name, const IntPairs& perm) {
  return Call("ppermute", {x}, {{"axis_name", axis_name}, {"perm", perm}}).at(0);
}

Value ProgramContext::all_to_all(const Value& x, const std::string& axis_name, int split_axis,
                                 int concat_axis, bool tiled) {
  return Call("all_to_all", {x}, AllToAllAttrs(axis_name, split_axis, concat_axis, tiled)).at(0);
}

AsyncValues ProgramContext::all_gather_start(const Value& x, const std::string& axis_name, int axis,
                                             bool tiled) {
  return CallStart("all_gather", {x}, GatherAttrs(axis_name, axis, tiled));
}

AsyncValues ProgramContext::psum_start(const Value& x, const std::vector<std::string>& axis_name) {
  return CallStart("psum", {x}, {{"axis_name", axis_name}});
}

AsyncValues ProgramContext::psum_scatter_start(const Value& x, const std::string& axis_name,
                                               int scatter_dimension, bool tiled) {
  return CallStart("psum_scatter", {x}, ScatterAttrs(axis_name, scatter_dimension, tiled));
}

AsyncValues ProgramContext::ppermute_start(const Value& x, const std::string& axis_name,
                                           const IntPairs& perm) {
  return CallStart("ppermute", {x}, {{"axis_name", axis_name}, {"perm", perm}});
}

AsyncValues ProgramContext::all_to_all_start(const Value& x, const std::string& axis_name,
                                             int split_axis, int concat_axis, bool tiled) {
  return CallStart("all_to_all", {x}, AllToAllAttrs(axis_name, split_axis, concat_axis, tiled));
}

}  // namespace tpusim::dsl
