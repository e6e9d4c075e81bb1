// What an HLO module's ops are charged (hlo/run/lowering.cc), in timing-only runs on v5e-2x2.
// Compute ops: each one's time is the time model's XLA op (docs/time-model.md, "Program
// level") of the work written out here by hand: a dot's or convolution's FLOPs from its
// dimension numbers, one vector operation per element per operation, operands read and
// results written through HBM once. custom-call: a tpu_custom_call (a Pallas kernel) runs
// the registered kernel kernel_map names for it, or is charged from the cost estimate in
// its backend_config; one with neither, and any other target, is an error that names the op
// and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

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

Ran RunTimingOnly(const std::string& text, const kernels::ParamValues& given = {}) {
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
    RunTimingOnly(text, given);
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
TEST(HloOpCost, APallasKernelWithACostEstimateIsChargedFromIt) {
  const Ran r = RunTimingOnly(Module(kPallas));
  EXPECT_THAT(Notes(r), HasSubstr("its backend_config's cost_estimate (kernel 'my_matmul')"));
  const config::Topology topology = topologies::LoadTopology("v5e-2x2");
  const double formula = testing::ModelSeconds(
      topology.chip(),
      testing::XlaDotWork(67108864.0, base::MxuInput::kBF16, base::Precision::kDefault, 524288, 0));
  EXPECT_NEAR(r.ops.at("cc").total * 1e-12, formula, 1e-8);
}

// kernel_map names a registered kernel for it: the call runs that kernel's pallas_call.
TEST(HloOpCost, KernelMapRunsTheRegisteredKernel) {
  const Ran mapped = RunTimingOnly(Module(kPallas), {{"kernel_map", "my_matmul=matmul"}});
  EXPECT_THAT(Notes(mapped), HasSubstr("the registered kernel matmul (kernel_map)"));
  EXPECT_EQ(mapped.ops.at("cc").kind, "kernel");
  const Ran estimated = RunTimingOnly(Module(kPallas));
  EXPECT_NE(mapped.ops.at("cc").total, estimated.ops.at("cc").total);
}

TEST(HloOpCost, APallasKernelWithoutAnEstimateOrAMappingIsAnError) {
  const std::string error = ErrorOf(Module(
      R"(custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "TUxJUgA="}, "kernel_name": "my_matmul"})"));
  EXPECT_THAT(error, HasSubstr("'cc' (custom-call)"));
  EXPECT_THAT(error, HasSubstr("no cost_estimate"));
  EXPECT_THAT(error, HasSubstr("kernel_map=my_matmul=ENTRY"));
}

TEST(HloOpCost, AnotherTargetIsAnErrorNamingIt) {
  const std::string error = ErrorOf(Module(R"(custom_call_target="MyKernel")"));
  EXPECT_THAT(error, HasSubstr("'cc' (custom-call)"));
  EXPECT_THAT(error, HasSubstr("custom-call target 'MyKernel' is not modelled"));
  EXPECT_THAT(error, HasSubstr("unknown_ops to free"));
}

struct OpCase {
  std::string name;
  std::string body;  // the entry's instructions; the op is %op
  base::XlaOp work;
  std::string computations = "";  // called by the op, beside %add and %less
};

void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<OpCase> OpCases() {
  const double f = 4;  // bytes of an f32
  auto work = [](std::vector<base::XlaDot> dots, double vector_ops, double read, double written) {
    base::XlaOp op;
    op.dots = std::move(dots);
    op.vector_ops = vector_ops;
    op.hbm_read_bytes = read;
    op.hbm_write_bytes = written;
    return op;
  };
  const auto f32 = base::MxuInput::kF32, bf16 = base::MxuInput::kBF16;
  const auto dflt = base::Precision::kDefault;
  return {
      // 256 x 1024 elements, one subtraction each.
      {"subtract",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %y = f32[256,1024]{1,0} parameter(1)\n"
       "  ROOT %op = f32[256,1024]{1,0} subtract(f32[256,1024]{1,0} %x, f32[256,1024]{1,0} %y)",
       work({}, 256 * 1024, 2 * 256 * 1024 * f, 256 * 1024 * f)},
      // A batch of 4 [128,256] @ [256,64]: 2 x 4 x 128 x 256 x 64 FLOPs at bf16's one pass.
      {"dot_with_batch_dims",
       "  %a = bf16[4,128,256]{2,1,0} parameter(0)\n  %b = bf16[4,256,64]{2,1,0} parameter(1)\n"
       "  ROOT %op = bf16[4,128,64]{2,1,0} dot(bf16[4,128,256]{2,1,0} %a, bf16[4,256,64]{2,1,0} "
       "%b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
       "rhs_contracting_dims={1}",
       work({{2.0 * 4 * 128 * 256 * 64, bf16, dflt}}, 0, (4 * 128 * 256 + 4 * 256 * 64) * 2.0,
            4 * 128 * 64 * 2.0)},
      // f32 at HIGHEST: the same FLOPs at six passes.
      {"dot_highest",
       "  %a = f32[128,256]{1,0} parameter(0)\n  %b = f32[256,64]{1,0} parameter(1)\n"
       "  ROOT %op = f32[128,64]{1,0} dot(f32[128,256]{1,0} %a, f32[256,64]{1,0} %b), "
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}",
       work({{2.0 * 128 * 256 * 64, f32, base::Precision::kHighest}}, 0, (128 * 256 + 256 * 64) * f,
            128 * 64 * f)},
      // A 3x3 convolution over 16x16 images of 32 features to 64 (same padding): the dot of
      // every output element with its 3 x 3 x 32 window, 2 FLOPs each.
      {"convolution",
       "  %x = f32[8,16,16,32]{3,2,1,0} parameter(0)\n  %w = f32[3,3,32,64]{3,2,1,0} parameter(1)\n"
       "  ROOT %op = f32[8,16,16,64]{3,2,1,0} convolution(f32[8,16,16,32]{3,2,1,0} %x, "
       "f32[3,3,32,64]{3,2,1,0} %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       work({{2.0 * 8 * 16 * 16 * 64 * 3 * 3 * 32, f32, dflt}}, 0,
            (8 * 16 * 16 * 32 + 3 * 3 * 32 * 64) * f, 8 * 16 * 16 * 64 * f)},
      // A sum over rows: one add per input element; the init scalar is read too.
      {"reduce",
       "  %x = f32[256,1024]{1,0} parameter(0)\n"
       "  %zero = f32[] constant(0)\n"
       "  ROOT %op = f32[256]{0} reduce(f32[256,1024]{1,0} %x, f32[] %zero), dimensions={1}, "
       "to_apply=%add",
       work({}, 256 * 1024, 256 * 1024 * f + f, 256 * f)},
      // Memory-bound ops: operands read, result written, one vector op per result element.
      {"transpose",
       "  %x = f32[256,1024]{1,0} parameter(0)\n"
       "  ROOT %op = f32[1024,256]{1,0} transpose(f32[256,1024]{1,0} %x), dimensions={1,0}",
       work({}, 256 * 1024, 256 * 1024 * f, 256 * 1024 * f)},
      // concatenate copies its operands into place, as an XLA copy does: no vector ops.
      {"concatenate",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %y = f32[128,1024]{1,0} parameter(1)\n"
       "  ROOT %op = f32[384,1024]{1,0} concatenate(f32[256,1024]{1,0} %x, f32[128,1024]{1,0} "
       "%y), dimensions={0}",
       work({}, 0, 384 * 1024 * f, 384 * 1024 * f)},
      {"pad",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %zero = f32[] constant(0)\n"
       "  ROOT %op = f32[258,1032]{1,0} pad(f32[256,1024]{1,0} %x, f32[] %zero), "
       "padding=1_1x4_4",
       work({}, 258 * 1032, 256 * 1024 * f + f, 258 * 1032 * f)},
      {"broadcast",
       "  %x = f32[1024]{0} parameter(0)\n"
       "  ROOT %op = f32[256,1024]{1,0} broadcast(f32[1024]{0} %x), dimensions={1}",
       work({}, 256 * 1024, 1024 * f, 256 * 1024 * f)},
      // A 2x2 max-pool window: one op per window element of each result element.
      {"reduce_window",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %zero = f32[] constant(0)\n"
       "  ROOT %op = f32[128,512]{1,0} reduce-window(f32[256,1024]{1,0} %x, f32[] %zero), "
       "window={size=2x2 stride=2x2}, to_apply=%add",
       work({}, 128 * 512 * 4, 256 * 1024 * f + f, 128 * 512 * f)},
      {"select",
       "  %p = pred[256,1024]{1,0} parameter(0)\n  %x = f32[256,1024]{1,0} parameter(1)\n"
       "  %y = f32[256,1024]{1,0} parameter(2)\n"
       "  ROOT %op = f32[256,1024]{1,0} select(pred[256,1024]{1,0} %p, f32[256,1024]{1,0} %x, "
       "f32[256,1024]{1,0} %y)",
       work({}, 256 * 1024, 256 * 1024 * (1 + 2 * f), 256 * 1024 * f)},
      {"convert",
       "  %x = f32[256,1024]{1,0} parameter(0)\n"
       "  ROOT %op = bf16[256,1024]{1,0} convert(f32[256,1024]{1,0} %x)",
       work({}, 256 * 1024, 256 * 1024 * f, 256 * 1024 * 2.0)},
      // Sorting rows of 1024: log2(1024) = 10 vector ops per element.
      {"sort",
       "  %x = f32[256,1024]{1,0} parameter(0)\n"
       "  ROOT %op = f32[256,1024]{1,0} sort(f32[256,1024]{1,0} %x), dimensions={1}, "
       "to_apply=%less",
       work({}, 256 * 1024 * 10.0, 256 * 1024 * f, 256 * 1024 * f)},
      // The slice only, copied as an XLA copy is (no vector ops); the scalar start indices
      // are the copy's addresses, not HBM traffic.
      {"dynamic_slice",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %i = s32[] parameter(1)\n"
       "  %j = s32[] parameter(2)\n"
       "  ROOT %op = f32[64,1024]{1,0} dynamic-slice(f32[256,1024]{1,0} %x, s32[] %i, s32[] %j), "
       "dynamic_slice_sizes={64,1024}",
       work({}, 0, 64 * 1024 * f, 64 * 1024 * f)},
      // Written into x's buffer in place, as an XLA copy is: the update read and written
      // once (not x), no vector ops.
      {"dynamic_update_slice",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %u = f32[64,1024]{1,0} parameter(1)\n"
       "  %i = s32[] parameter(2)\n  %j = s32[] parameter(3)\n"
       "  ROOT %op = f32[256,1024]{1,0} dynamic-update-slice(f32[256,1024]{1,0} %x, "
       "f32[64,1024]{1,0} %u, s32[] %i, s32[] %j)",
       work({}, 0, 64 * 1024 * f, 64 * 1024 * f)},
      // 256 rows of 1024 picked by index: the indices and the rows read, the rows written,
      // one vector op per element gathered.
      {"gather",
       "  %x = f32[4096,1024]{1,0} parameter(0)\n  %i = s32[256,1]{1,0} parameter(1)\n"
       "  ROOT %op = f32[256,1024]{1,0} gather(f32[4096,1024]{1,0} %x, s32[256,1]{1,0} %i), "
       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
       "slice_sizes={1,1024}",
       work({}, 256 * 1024, 256 * 4 + 256 * 1024 * f, 256 * 1024 * f)},
      // 256 rows of updates added in at their indices, in place: the indices, the updates and
      // the rows they combine with read, those rows written, one add per update element.
      {"scatter",
       "  %x = f32[4096,1024]{1,0} parameter(0)\n  %i = s32[256,1]{1,0} parameter(1)\n"
       "  %u = f32[256,1024]{1,0} parameter(2)\n"
       "  ROOT %op = f32[4096,1024]{1,0} scatter(f32[4096,1024]{1,0} %x, s32[256,1]{1,0} %i, "
       "f32[256,1024]{1,0} %u), update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add",
       work({}, 256 * 1024, 256 * 4 + 2 * 256 * 1024 * f, 256 * 1024 * f)},
      // Reads nothing: each element written, one vector op each.
      {"iota", "  ROOT %op = s32[256,1024]{1,0} iota(), iota_dimension=1",
       work({}, 256 * 1024, 0, 256 * 1024 * 4.0)},
      // Both operands read, one byte of pred written per element, one vector op each.
      {"compare",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %y = f32[256,1024]{1,0} parameter(1)\n"
       "  ROOT %op = pred[256,1024]{1,0} compare(f32[256,1024]{1,0} %x, f32[256,1024]{1,0} %y), "
       "direction=LT",
       work({}, 256 * 1024, 2 * 256 * 1024 * f, 256 * 1024 * 1.0)},
      // A reduce fusion (kInput): the product is never written to HBM; only the fusion's
      // operands are read and its result written, and the multiply and the reduce's adds are
      // VPU work (the scalar constant's one op is below the tolerance).
      {"input_fusion",
       "  %x = f32[256,1024]{1,0} parameter(0)\n  %y = f32[256,1024]{1,0} parameter(1)\n"
       "  ROOT %op = f32[256]{0} fusion(f32[256,1024]{1,0} %x, f32[256,1024]{1,0} %y), "
       "kind=kInput, calls=%multiply_reduce",
       work({}, 2 * 256 * 1024, 2 * 256 * 1024 * f, 256 * f),
       "%multiply_reduce (p0: f32[256,1024], p1: f32[256,1024]) -> f32[256] {\n"
       "  %p0 = f32[256,1024]{1,0} parameter(0)\n  %p1 = f32[256,1024]{1,0} parameter(1)\n"
       "  %m = f32[256,1024]{1,0} multiply(f32[256,1024]{1,0} %p0, f32[256,1024]{1,0} %p1)\n"
       "  %zero = f32[] constant(0)\n"
       "  ROOT %r = f32[256]{0} reduce(f32[256,1024]{1,0} %m, f32[] %zero), dimensions={1}, "
       "to_apply=%add\n}\n\n"},
      // A custom fusion (kCustom) of a bf16 dot and a bias add: the dot's FLOPs on the MXU,
      // the add on the VPU, the three operands read and the sum written once.
      {"custom_fusion",
       "  %a = bf16[256,512]{1,0} parameter(0)\n  %b = bf16[512,256]{1,0} parameter(1)\n"
       "  %c = bf16[256,256]{1,0} parameter(2)\n"
       "  ROOT %op = bf16[256,256]{1,0} fusion(bf16[256,512]{1,0} %a, bf16[512,256]{1,0} %b, "
       "bf16[256,256]{1,0} %c), kind=kCustom, calls=%dot_bias",
       work({{2.0 * 256 * 512 * 256, bf16, dflt}}, 256 * 256,
            (256 * 512 + 512 * 256 + 256 * 256) * 2.0, 256 * 256 * 2.0),
       "%dot_bias (p0: bf16[256,512], p1: bf16[512,256], p2: bf16[256,256]) -> bf16[256,256] "
       "{\n  %p0 = bf16[256,512]{1,0} parameter(0)\n  %p1 = bf16[512,256]{1,0} parameter(1)\n"
       "  %p2 = bf16[256,256]{1,0} parameter(2)\n"
       "  %d = bf16[256,256]{1,0} dot(bf16[256,512]{1,0} %p0, bf16[512,256]{1,0} %p1), "
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
       "  ROOT %s = bf16[256,256]{1,0} add(bf16[256,256]{1,0} %d, bf16[256,256]{1,0} %p2)\n}\n\n"},
  };
}

class HloOpCostOf : public ::testing::TestWithParam<OpCase> {};

TEST_P(HloOpCostOf, IsTheTimeModelsXlaOpOfItsWork) {
  const OpCase& c = GetParam();
  const Ran r = RunTimingOnly(
      "HloModule m, num_partitions=4\n\n%add (a: f32[], b: f32[]) -> f32[] {\n"
      "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n%less (a: f32[], b: f32[]) -> pred[] {\n"
      "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %l = pred[] compare(f32[] %a, f32[] %b), direction=LT\n}\n\n" +
      c.computations + "ENTRY %e {\n" + c.body + "\n}\n");
  const config::Topology topology = topologies::LoadTopology("v5e-2x2");
  const double formula = testing::ModelSeconds(topology.chip(), c.work);
  EXPECT_NEAR(r.ops.at("op").total * 1e-12, formula, 1e-8) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Ops, HloOpCostOf, ::testing::ValuesIn(OpCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tpusim
