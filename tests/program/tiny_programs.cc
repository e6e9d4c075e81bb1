// Tiny programs for the registry and CLI tests (family "tiny"): y = all_gather(x) @ w with
// x row-sharded over the axis parameter, scheduled three ways; one more layout of that
// problem (tiny_local: y stays row-sharded, so nothing moves), and one entry that computes
// something else with the same types and layout as tiny_local (tiny_rows: relu(x @ w)).
// tiny_exact is a user's f32 program checked against an exact f32 reference, as a user
// might write one: at DEFAULT precision its one bf16 pass misses it.
// Compiled into program_tests and into a plugin that the CLI tests --load.

#include <algorithm>

#include "base/errors.h"
#include "dsl/program/context.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using dsl::AsyncValues;
using dsl::DType;
using dsl::P;
using dsl::ProgramContext;
using dsl::Value;

enum class Schedule { kSync, kAsync, kF32, kLocalRows, kReluRows };

// m is the batch size (rows of x), default 64; k and n default to 128.
std::vector<Param> TinyParams() {
  return {AxisParam(), MParam().Default(64), KParam().Default(128), NParam().Default(128),
          DTypeParam({DType::kBF16, DType::kF32})};
}

Workload Make(Schedule schedule, const dsl::Mesh& mesh, const Params& params) {
  const MatmulProblem args = MatmulProblemOf(params);
  const std::string axis = params.String("axis");
  const int devices = mesh.AxisSize(axis);
  if (args.m % devices != 0) {
    throw ParamError({"m"}, "tiny programs: m " + std::to_string(args.m) +
                                " does not split over the " + std::to_string(devices) +
                                " devices of axis '" + axis + "'; use a multiple of " +
                                std::to_string(devices) + ".");
  }
  dsl::ProgramBody body = [schedule, axis](ProgramContext& ctx, const std::vector<Value>& in) {
    const Value& x = in[0];
    const Value& w = in[1];
    if (schedule == Schedule::kLocalRows) return std::vector<Value>{ctx.dot(x, w)};
    if (schedule == Schedule::kReluRows) return std::vector<Value>{ctx.relu(ctx.dot(x, w))};
    if (schedule == Schedule::kAsync) {
      AsyncValues started = ctx.all_gather_start(x, axis, 0, /*tiled=*/true);
      Value local = ctx.dot(x, w);  // issued while the gather moves
      Value gathered = ctx.all_gather_done(started);
      return std::vector<Value>{ctx.dot(gathered, w)};
    }
    Value gathered = ctx.all_gather(x, axis, 0, /*tiled=*/true);
    if (schedule == Schedule::kF32) return std::vector<Value>{ctx.dot(gathered, w, DType::kF32)};
    return std::vector<Value>{ctx.dot(gathered, w)};
  };
  const bool row_sharded = schedule == Schedule::kLocalRows || schedule == Schedule::kReluRows;
  const dsl::PartitionSpec out = row_sharded ? P{axis, nullptr} : P{nullptr, nullptr};
  Workload w{dsl::shard_map(mesh, {P{axis, nullptr}, P{nullptr, nullptr}}, {out}, body, "tiny")};
  AddMatmulOperands(w, args);
  const DType out_dtype = schedule == Schedule::kF32 ? DType::kF32 : args.dtype;
  if (!w.expected.empty() && out_dtype != args.dtype) {
    dsl::Array converted(w.expected[0].shape(), out_dtype);
    for (int64_t i = 0; i < converted.size(); ++i)
      converted.SetFlat(i, w.expected[0].GetFlat(i));
    w.expected[0] = std::move(converted);
  }
  if (!w.expected.empty() && schedule == Schedule::kReluRows) {
    for (int64_t i = 0; i < w.expected[0].size(); ++i)
      w.expected[0].SetFlat(i, std::max(w.expected[0].GetFlat(i), 0.0));
  }
  // One entry declares its outputs; the others leave compare to learn them from a
  // functional workload's reference.
  if (schedule == Schedule::kF32) w.out_types = {{{args.m, args.n}, out_dtype}};
  return w;
}

KernelInfo Program(const std::string& name, const std::string& summary, Schedule schedule,
                   const std::string& family) {
  KernelInfo info{name,
                  summary,
                  TinyParams(),
                  [schedule](const dsl::Mesh& mesh, const Params& params) {
                    return Make(schedule, mesh, params);
                  },
                  nullptr,
                  nullptr};
  info.kind = EntryKind::kProgram;
  info.family = family;
  return info;
}

// Registration order, not name order, is the family's order.
const Registration sync(Program("tiny/sync", "all_gather x, then dot", Schedule::kSync, "tiny"));
const Registration async(Program("tiny/async", "all_gather_start x, a dot, done, then dot",
                                 Schedule::kAsync, "tiny"));
const Registration f32(Program("tiny/f32", "all_gather x, then dot into f32", Schedule::kF32,
                               "tiny"));
const Registration local(Program("tiny_local",
                                 "dot of the local rows: tiny's problem, y left row-sharded",
                                 Schedule::kLocalRows, ""));
// x @ w of f32 at the precision parameter, against the exact product (1e-6 relative).
Workload MakeExact(const dsl::Mesh& mesh, const Params& params) {
  const MatmulProblem args = {params.Int("m"), params.Int("k"),   params.Int("n"),
                              DType::kF32,     params.functional, params.seed};
  const dsl::Precision precision = dsl::ParsePrecision(params.String("precision"));
  dsl::ProgramBody body = [precision](ProgramContext& ctx, const std::vector<Value>& in) {
    return std::vector<Value>{ctx.dot(in[0], in[1], DType::kF32, precision)};
  };
  Workload w{dsl::shard_map(mesh, {P{}, P{}}, {P{}}, body, "tiny_exact")};
  AddMatmulOperands(w, args);
  w.rtol = 1e-6;
  w.atol = 1e-6;
  return w;
}

KernelInfo ExactProgram() {
  KernelInfo info{
      "tiny_exact",
      "f32 x @ w at the precision parameter, checked against the exact product",
      {MParam().Default(64), KParam().Default(128), NParam().Default(128), PrecisionParam()},
      MakeExact,
      nullptr,
      nullptr};
  info.kind = EntryKind::kProgram;
  return info;
}

const Registration exact(ExactProgram());
const Registration rows(Program("tiny_rows", "relu of the local rows' dot: y stays row-sharded",
                                Schedule::kReluRows, ""));

}  // namespace
}  // namespace tpusim::kernels
