// Kernels called by name (the op "pallas_call" with a call_target_name, as an XLA HLO
// custom-call names its target: dsl/program/op_registry.h, kernels/call_targets.cc) run the
// very call the typed C++ API runs: the same time, events, DMAs and bytes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "dsl/program/context.h"
#include "dsl/program/op_registry.h"
#include "dsl/shard_map.h"
#include "kernels/agw_matmul.h"
#include "kernels/all_gather.h"
#include "kernels/matmul.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// out = inputs @ weights on a 2x2 mesh, as seed003 lays it out: inputs [M, K] P('x', 'y'),
// weights [K, N] P('x', None), out [M, N] P('x', None).
constexpr int64_t kM = 256, kK = 512, kN = 256;

RunResult RunSeedLayout(const ProgramBody& body) {
  const Mesh mesh(testing::MakeTopology({2, 2}, {false, false}));
  auto program = shard_map(mesh, {P{"x", "y"}, P{"x", nullptr}}, {P{"x", nullptr}}, body);
  auto run = testing::RunAndCheckTrace(program, {Array::Random({kM, kK}, DType::kBF16, 21),
                                                 Array::Random({kK, kN}, DType::kBF16, 22)});
  EXPECT_TRUE(run.result.ok) << run.result.error;
  return run.result;
}

void ExpectSameRun(const RunResult& typed, const RunResult& by_name) {
  ASSERT_TRUE(typed.ok && by_name.ok);
  EXPECT_EQ(typed.stats.end_time, by_name.stats.end_time);
  EXPECT_EQ(typed.stats.events, by_name.stats.events);
  EXPECT_EQ(typed.stats.dmas, by_name.stats.dmas);
  EXPECT_EQ(typed.peak_hbm_bytes, by_name.peak_hbm_bytes);
  ASSERT_EQ(typed.outputs.size(), by_name.outputs.size());
  for (size_t i = 0; i < typed.outputs.size(); ++i) {
    const Comparison c = CompareExact(by_name.outputs[i], typed.outputs[i]);
    EXPECT_TRUE(c.equal) << c.detail;
  }
}

// seed003 (d): all-gather the weights over x, slice K-chunk y, matmul, all-reduce over y.
TEST(PallasCallByName, ComposedKernelsTimeAndComputeAsTheTypedCalls) {
  const int64_t kx = kK / 2, ky = kK / 2, rows = kM / 2;
  const RunResult typed = RunSeedLayout([&](ProgramContext& ctx, const std::vector<Value>& in) {
    kernels::MatmulPlan local;
    local.m = rows;
    local.k = ky;
    local.n = kN;
    Value w =
        ctx.pallas_call(kernels::RingAllGatherCall("x", 2, {{kx, kN}, DType::kBF16}), {in[1]})[0];
    Value chunk = ctx.dynamic_slice(w, {ctx.axis_index("y") * ky, 0}, {ky, kN});
    Value partial =
        ctx.pallas_call(kernels::MatmulCall(kernels::PlanMatmul(local)), {in[0], chunk})[0];
    return ctx.pallas_call(kernels::RingAllReduceCall(ctx.mesh(), "y", {{rows, kN}, DType::kBF16}),
                           {partial});
  });
  const RunResult by_name = RunSeedLayout([&](ProgramContext& ctx, const std::vector<Value>& in) {
    Value w = ctx.Call("pallas_call", {in[1]},
                       {{"call_target_name", "all_gather_ring"}, {"axis_name", "x"}})[0];
    Value chunk = ctx.dynamic_slice(w, {ctx.axis_index("y") * ky, 0}, {ky, kN});
    Value partial = ctx.Call("pallas_call", {in[0], chunk}, {{"call_target_name", "matmul"}})[0];
    return ctx.Call("pallas_call", {partial},
                    {{"call_target_name", "all_reduce_ring"}, {"axis_name", "y"}});
  });
  ExpectSameRun(typed, by_name);
}

// seed003 (f): the fused kernel, started asynchronously by name.
TEST(PallasCallByName, AFusedKernelStartedByNameRunsAsTheTypedCall) {
  const RunResult typed = RunSeedLayout([](ProgramContext& ctx, const std::vector<Value>& in) {
    kernels::AgwMatmulProblem problem;
    problem.x_axis = "x";
    problem.y_axis = "y";
    problem.m = kM;
    problem.k = kK;
    problem.n = kN;
    AsyncValues started =
        ctx.pallas_call_start(kernels::AgwMatmulCall(ctx.mesh(), problem, /*fused=*/true), in);
    return ctx.pallas_call_done(started);
  });
  const RunResult by_name = RunSeedLayout([](ProgramContext& ctx, const std::vector<Value>& in) {
    AsyncValues started = ctx.CallStart(
        "pallas_call", in,
        {{"call_target_name", "agw_matmul_ar_fused"}, {"axis_name", "x"}, {"axis2", "y"}});
    return ctx.CallDone(started);
  });
  ExpectSameRun(typed, by_name);
}

TEST(PallasCallByName, TheOpAndItsTargetsAreRegistered) {
  const OpRegistry& registry = OpRegistry::Get();
  const auto ops = registry.Names();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "pallas_call"), ops.end());
  EXPECT_THAT(registry.CallTargetNames(),
              ::testing::IsSupersetOf({"agw_matmul_ar", "agw_matmul_ar_fused", "all_gather_bidi",
                                       "all_gather_ring", "all_reduce_ring", "matmul"}));
}

std::string Failure(const ProgramBody& body) {
  const Mesh mesh(testing::MakeTopology({4}, {true}));
  auto program = shard_map(mesh, {P{}}, {P{}}, body);
  auto run = testing::RunAndCheckTrace(program, {Array::Random({8, 128}, DType::kF32, 1)}, {},
                                       "pallas_call_by_name_failure");
  EXPECT_FALSE(run.result.ok);
  return run.result.error;
}

TEST(PallasCallByName, MistakesNameTheTargetAndTheFix) {
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", in, {{"call_target_name", "all_gahter_ring"}});
              }),
              HasSubstr("pallas_call: unknown call_target_name 'all_gahter_ring'; the kernels "
                        "programs can call by name are: agw_matmul_ar, agw_matmul_ar_fused, "
                        "all_gather_bidi, all_gather_ring"));
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", in);
              }),
              HasSubstr("pallas_call: the attribute 'call_target_name' (string: the kernel to "
                        "call: a registered pallas_call target) is required"));
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", in,
                                {{"call_target_name", "all_gather_ring"}, {"axis", "x"}});
              }),
              HasSubstr("pallas_call: unknown attribute 'axis'; pallas_call takes: "
                        "call_target_name (string, required), axis_name (string, required)."));
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", {in[0], in[0]}, {{"call_target_name", "matmul"}});
              }),
              HasSubstr("pallas_call matmul: needs a [M, K] and b [K, N] of one dtype, but got "
                        "f32[8,128] and f32[8,128]."));
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", {in[0], in[0]},
                                {{"call_target_name", "all_gather_ring"}, {"axis_name", "x"}});
              }),
              HasSubstr("pallas_call all_gather_ring: takes one operand, x; got (f32[8,128], "
                        "f32[8,128])."));
  // The kernel's own checks of a value are the call's errors: they name its attribute.
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", {in[0], ctx.zeros({128, 128}, DType::kF32)},
                                {{"call_target_name", "matmul"}, {"bm", 16}});
              }),
              HasSubstr("pallas_call matmul: bm 16 must be between 1 and m (8)."));
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call("pallas_call", {in[0], ctx.zeros({128, 128}, DType::kF32)},
                                {{"call_target_name", "matmul"}, {"bk", -1}});
              }),
              HasSubstr("pallas_call: the attribute 'bk' is -1, out of its range: allowed 1 to "
                        "2147483647 (block contracting dim)."));
  // An attribute the kernel leaves to itself (Auto()) may be absent; a value of an enum
  // parameter outside its values is refused by its declaration.
  EXPECT_THAT(Failure([](ProgramContext& ctx, const std::vector<Value>& in) {
                return ctx.Call(
                    "pallas_call", {in[0], ctx.zeros({128, 128}, DType::kF32)},
                    {{"call_target_name", "agw_matmul_ar"}, {"axis_name", "x"}, {"bn", 0}});
              }),
              HasSubstr("pallas_call: the attribute 'bn' is 0, out of its range: allowed 1 to "
                        "2147483647 (the column chunk of N that one all-reduce step works on)."));
}

// dsl::AttrSpec::Of: each parameter type has its attribute type, a default its attribute
// default, Auto() an optional attribute; a value is then checked by the declaration.
TEST(AttrSpecOf, MapsEachParameterTypeAndChecksValuesByTheDeclaration) {
  using base::Param;
  const AttrSpec bytes = AttrSpec::Of(Param::Bytes("size", "bytes moved").Default("4K"));
  EXPECT_EQ(bytes.type, AttrType::kInt);
  EXPECT_EQ(bytes.default_value->AsInt(), 4096);
  EXPECT_EQ(AttrSpec::Of(Param::Double("ratio", "a fraction")).type, AttrType::kFloat);
  EXPECT_TRUE(AttrSpec::Of(Param::Bool("flag", "a switch").Default(true)).default_value->AsBool());
  const AttrSpec dtype =
      AttrSpec::Of(Param::Enum("dtype", {"bf16", "f32"}, "element type").Default("f32"));
  EXPECT_EQ(dtype.type, AttrType::kDType);
  EXPECT_EQ(dtype.default_value->AsDType(), DType::kF32);
  const AttrSpec direction = AttrSpec::Of(Param::Enum("direction", {"right", "left"}, "way"));
  EXPECT_EQ(direction.type, AttrType::kString);
  EXPECT_FALSE(direction.default_value || direction.optional);
  EXPECT_TRUE(AttrSpec::Of(Param::Int("chunks", "DMAs").Auto("chosen")).optional);
  EXPECT_EQ(AttrSpec::Of(Param::String("axis", "mesh axis"), "axis_name").name, "axis_name");
  const AttrSpec dims =
      AttrSpec::Of(Param::Ints("dims", "batch dims").Default(std::vector<int64_t>{}).Min(0));
  EXPECT_EQ(dims.type, AttrType::kInts);
  EXPECT_TRUE(dims.default_value->AsInts().empty());

  OpDef op;
  op.name = "probe";
  op.attributes = {AttrSpec::Of(Param::Int("chunks", "DMAs per step").Range(1, 64)), dtype, dims};
  EXPECT_EQ(ResolveAttributes(op, {{"chunks", 64}}).at("chunks").AsInt(), 64);
  EXPECT_EQ(ResolveAttributes(op, {{"chunks", 1}, {"dims", 2}}).at("dims").AsInts(),
            std::vector<int64_t>{2});
  EXPECT_THAT(
      [&] {
        ResolveAttributes(op, {{"chunks", 1}, {"dims", std::vector<int64_t>{0, -1}}});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("out of its range: allowed each at least 0 (batch dims).")));
  EXPECT_THAT(
      [&] {
        ResolveAttributes(op, {{"chunks", 65}});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("probe: the attribute 'chunks' is 65, out of its range: allowed 1 "
                    "to 64 (DMAs per step).")));
  EXPECT_THAT(
      [&] {
        ResolveAttributes(op, {{"chunks", 2}, {"dtype", DType::kInt8}});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("probe: the attribute 'dtype' is int8, not one of bf16, f32 (element type).")));
}

// The list parameters are the list attributes, dtype and precision attributes enums over
// their names; a computation is the one attribute that is not a parameter. A list's range
// bounds each element of an attribute value as it does a parameter's.
TEST(AttrSpecOf, MapsTheListsDTypesAndPrecisionsAndKeepsComputationsApart) {
  using base::Param;
  EXPECT_EQ(AttrSpec::Of(Param::IntLists("groups", "device groups")).type, AttrType::kIntLists);
  EXPECT_EQ(AttrSpec::Of(Param::IntPairs("perm", "pairs")).type, AttrType::kIntPairs);
  EXPECT_EQ(AttrSpec::Of(Param::Strings("axes", "mesh axes")).type, AttrType::kStrings);
  const AttrSpec weights =
      AttrSpec::Of(Param::Doubles("weights", "shares").Default(std::vector<double>{0.5}));
  EXPECT_EQ(weights.type, AttrType::kFloats);
  EXPECT_EQ(weights.default_value->AsFloats(), std::vector<double>{0.5});
  const AttrSpec dtype = AttrSpec::Of(DTypeAttr("dtype", "the result's dtype").Default("uint32"));
  EXPECT_EQ(dtype.type, AttrType::kDType);
  EXPECT_EQ(dtype.default_value->AsDType(), DType::kUInt32);
  const AttrSpec precision = AttrSpec::Of(PrecisionAttr("precision", "passes").Default("HIGH"));
  EXPECT_EQ(precision.type, AttrType::kPrecision);
  EXPECT_EQ(precision.default_value->AsPrecision(), Precision::kHigh);
  const AttrSpec reducer = AttrSpec::Computation("computation", "the reducer");
  EXPECT_EQ(reducer.type, AttrType::kComputation);
  EXPECT_FALSE(reducer.declared || reducer.default_value || reducer.optional);

  OpDef op;
  op.name = "probe";
  op.attributes = {AttrSpec::Of(Param::IntLists("groups", "device groups").Min(0)), dtype};
  EXPECT_EQ(ResolveAttributes(op, {{"groups", IntLists{{0, 1}}}}).at("dtype").AsDType(),
            DType::kUInt32);
  EXPECT_THAT(
      [&] {
        ResolveAttributes(op, {{"groups", IntLists{{0, 1}, {2, -3}}}});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr(
          "probe: the attribute 'groups' is [[0, 1], [2, -3]], out of its range: allowed each "
          "at least 0 (device groups).")));
}

// A target's attributes are its kernel's parameter declarations (kernels/call_targets.h):
// each attribute is a parameter the kernel's registry entry declares, with its description,
// default and allowed values; only `axis` is renamed (axis_name) and required.
TEST(PallasCallByName, EveryTargetsAttributesAreItsKernelsDeclarations) {
  const OpRegistry& registry = OpRegistry::Get();
  ASSERT_FALSE(registry.CallTargetNames().empty());
  for (const auto& name : registry.CallTargetNames()) {
    const kernels::KernelInfo* kernel = kernels::Registry::Get().Find(name);
    ASSERT_NE(kernel, nullptr) << name << " is no registered kernel";
    const std::vector<AttrSpec> attributes = registry.FindCallTarget(name).Attributes();
    EXPECT_FALSE(attributes.empty()) << name;
    for (const AttrSpec& attribute : attributes) {
      ASSERT_TRUE(attribute.declared) << name << "." << attribute.name;
      const kernels::Param* param = kernel->FindParam(attribute.declared->name());
      ASSERT_NE(param, nullptr) << name << "." << attribute.name;
      const bool axis = param->name() == "axis";
      EXPECT_EQ(attribute.name, axis ? "axis_name" : param->name());
      EXPECT_EQ(attribute.description, param->description());
      EXPECT_EQ(attribute.declared->AllowedText(), param->AllowedText());
      EXPECT_EQ(attribute.declared->Summary(),
                axis ? param->Required().Summary() : param->Summary());
      if (param->default_value() && !axis) {
        ASSERT_TRUE(attribute.default_value) << name << "." << attribute.name;
        EXPECT_EQ(attribute.default_value->ToString(), param->default_value()->ToString());
      }
      EXPECT_EQ(attribute.optional, !param->auto_text().empty());
    }
  }
  // matmul's precision is an enum of precisions: a precision attribute, default DEFAULT.
  const auto matmul = registry.FindCallTarget("matmul").Attributes();
  const auto precision = std::find_if(matmul.begin(), matmul.end(),
                                      [](const AttrSpec& a) { return a.name == "precision"; });
  ASSERT_NE(precision, matmul.end());
  EXPECT_EQ(precision->type, AttrType::kPrecision);
  EXPECT_EQ(precision->default_value->AsPrecision(), Precision::kDefault);
}

}  // namespace
}  // namespace tpusim
