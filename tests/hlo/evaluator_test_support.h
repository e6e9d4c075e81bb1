#pragma once

// What the reference evaluator's tests share: arrays from literal values, a module's text
// evaluated on its devices, and the error an evaluation throws. Values go in and come out
// through dsl::Array's GetFlat/SetFlat, not the evaluator's own element access.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/array.h"
#include "hlo/parser.h"
#include "hlo/reference/evaluator.h"

namespace tpusim::hlo::reference::testing {

inline dsl::Array MakeArray(dsl::DType dtype, const dsl::Shape& shape,
                            const std::vector<double>& values) {
  dsl::Array array(shape, dtype);
  EXPECT_EQ(static_cast<int64_t>(values.size()), array.size());
  for (int64_t i = 0; i < array.size() && i < static_cast<int64_t>(values.size()); ++i)
    array.SetFlat(i, values[static_cast<size_t>(i)]);
  return array;
}

inline dsl::Array F32(const dsl::Shape& shape, const std::vector<double>& values) {
  return MakeArray(dsl::DType::kF32, shape, values);
}

inline std::vector<double> Values(const dsl::Array& array) {
  std::vector<double> values;
  for (int64_t i = 0; i < array.size(); ++i)
    values.push_back(array.GetFlat(i));
  return values;
}

inline Module ParseText(const std::string& text) {
  return ParseModule(text, "test.hlo");
}

// A module of one entry computation with `body` for its instructions, on `partitions`
// partitions and `replicas` replicas.
inline std::string ModuleText(const std::string& body, int partitions = 1, int replicas = 1,
                              const std::string& computations = "") {
  return "HloModule m, num_partitions=" + std::to_string(partitions) +
         ", replica_count=" + std::to_string(replicas) + "\n\n" + computations +
         "\nENTRY %main {\n" + body + "\n}\n";
}

// Every device's root arrays.
inline std::vector<std::vector<dsl::Array>> EvaluateText(
    const std::string& text, const std::vector<std::vector<dsl::Array>>& parameters) {
  return Evaluate(ParseText(text), parameters);
}

// The root arrays of a one-device module without parameters.
inline std::vector<dsl::Array> EvaluateOne(const std::string& text,
                                           const std::vector<dsl::Array>& parameters = {}) {
  const auto results = EvaluateText(text, {parameters});
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? std::vector<dsl::Array>{} : results[0];
}

// The error evaluating `text` throws; fails the test when it evaluates.
inline Error EvaluationFailure(const std::string& text,
                               const std::vector<std::vector<dsl::Array>>& parameters = {{}}) {
  try {
    (void)EvaluateText(text, parameters);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
    return error;
  }
  ADD_FAILURE() << "expected an evaluation error for:\n" << text;
  return Error(ErrorKind::kInvalidArgument, "(evaluated)");
}

// The add computation most collectives and reductions call.
inline const char* kAddF32 =
    "%add (a: f32[], b: f32[]) -> f32[] {\n"
    "  %a = f32[] parameter(0)\n"
    "  %b = f32[] parameter(1)\n"
    "  ROOT %sum = f32[] add(%a, %b)\n"
    "}\n";

}  // namespace tpusim::hlo::reference::testing
