// custom-call in an HLO module (hlo/run/lowering.cc): a tpu_custom_call (a Pallas kernel)
// runs the registered kernel kernel_map names for it, or is charged from the cost estimate
// in its backend_config; one with neither, and any other target, is an error that names the
// op and the fix. Timing-only runs on v5e-2x2 (a custom call has no host numerics).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "base/errors.h"
#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;

// A module of one custom-call on a bf16 [256,512] and a [512,256], with `config` after it.
std::string Module(const std::string& config) {
  return R"(HloModule m, num_partitions=4

ENTRY %e (a: bf16[256,512], b: bf16[512,256]) -> bf16[256,256] {
  %a = bf16[256,512]{1,0} parameter(0)
  %b = bf16[512,256]{1,0} parameter(1)
  ROOT %cc = bf16[256,256]{1,0} custom-call(bf16[256,512]{1,0} %a, bf16[512,256]{1,0} %b), )" +
         config + "\n}\n";
}

struct Ran {
  kernels::Workload workload;
  dsl::RunResult result;
  std::map<std::string, dsl::OpTime> ops;
};

Ran RunCustomCall(const std::string& text, const kernels::ParamValues& given = {}) {
  auto module = std::make_shared<const hlo::Module>(hlo::ParseModule(text, "cc.hlo"));
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(module, "cc.hlo");
  kernels::Params params = info.Bind(given);
  params.functional = false;
  Ran r{info.make(mesh, params), {}, {}};
  dsl::RunOptions options;
  options.functional = false;
  r.result = r.workload.program.Run(r.workload.inputs, options);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  for (const dsl::OpTime& op : r.result.op_times)
    r.ops[op.name] = op;
  return r;
}

std::string ErrorOf(const std::string& text, const kernels::ParamValues& given = {}) {
  try {
    RunCustomCall(text, given);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string Notes(const Ran& r) {
  std::string all;
  for (const std::string& note : r.workload.notes)
    all += note + "\n";
  return all;
}

const char* kPallas =
    R"(custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "TUxJUgA=", "cost_estimate": {"flops": 67108864, "transcendentals": 0, "bytes_accessed": 524288}}, "kernel_name": "my_matmul"})";

// Charged from XLA's estimate: its flops on the MXU at bf16 and its bytes through HBM, the
// roofline the time model gives any XLA op of that work (within a cycle's rounding).
TEST(HloCustomCall, APallasKernelWithACostEstimateIsChargedFromIt) {
  const Ran r = RunCustomCall(Module(kPallas));
  EXPECT_THAT(Notes(r), HasSubstr("its backend_config's cost_estimate (kernel 'my_matmul')"));
  const config::Topology topology = topologies::LoadTopology("v5e-2x2");
  const double formula = testing::ModelSeconds(
      topology.chip(),
      testing::XlaDotWork(67108864.0, base::MxuInput::kBF16, base::Precision::kDefault, 524288, 0));
  EXPECT_NEAR(r.ops.at("cc").total * 1e-12, formula, 1e-8);
}

// kernel_map names a registered kernel for it: the call runs that kernel's pallas_call.
TEST(HloCustomCall, KernelMapRunsTheRegisteredKernel) {
  const Ran mapped = RunCustomCall(Module(kPallas), {{"kernel_map", "my_matmul=matmul"}});
  EXPECT_THAT(Notes(mapped), HasSubstr("the registered kernel matmul (kernel_map)"));
  EXPECT_EQ(mapped.ops.at("cc").kind, "kernel");
  const Ran estimated = RunCustomCall(Module(kPallas));
  EXPECT_NE(mapped.ops.at("cc").total, estimated.ops.at("cc").total);
}

TEST(HloCustomCall, APallasKernelWithoutAnEstimateOrAMappingIsAnError) {
  const std::string error = ErrorOf(Module(
      R"(custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "TUxJUgA="}, "kernel_name": "my_matmul"})"));
  EXPECT_THAT(error, HasSubstr("'cc' (custom-call)"));
  EXPECT_THAT(error, HasSubstr("no cost_estimate"));
  EXPECT_THAT(error, HasSubstr("kernel_map=my_matmul=ENTRY"));
}

TEST(HloCustomCall, AnotherTargetIsAnErrorNamingIt) {
  const std::string error = ErrorOf(Module(R"(custom_call_target="MyKernel")"));
  EXPECT_THAT(error, HasSubstr("'cc' (custom-call)"));
  EXPECT_THAT(error, HasSubstr("custom-call target 'MyKernel' is not modelled"));
  EXPECT_THAT(error, HasSubstr("unknown_ops to free"));
}

}  // namespace
}  // namespace tpusim
