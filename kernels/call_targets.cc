// The library kernels that programs call by name: ctx.Call("pallas_call", operands,
// {{"call_target_name", NAME}, ...}), as an XLA HLO custom-call names its target
// (dsl/program/op_registry.h). Each target builds exactly the pallas_call its typed
// builder builds for the operand types, so a call by name times and computes as the typed
// ctx.pallas_call(...) does. A target's attributes are its kernel's own parameter
// declarations (KernelInfo::params in the registry), those the operands do not give:
// declared once, so a kernel and its call by name cannot disagree.
//   all_gather_ring, all_gather_bidi  x (any rank) -> every device's x along dim 0
//                                     (RingAllGatherCall / BidiAllGatherCall)
//   all_reduce_ring                   x (any rank) -> the sum of x over the axis
//                                     (RingAllReduceCall)
//   matmul                            a [M, K], b [K, N] -> a @ b on this chip
//                                     (MatmulCall(PlanMatmul))
//   agw_matmul_ar, agw_matmul_ar_fused  inputs [M/X, K/Y], weights [K/X, N] -> out [M/X, N]
//                                     (AgwMatmulCall)
// A kernel's `axis` is spelled axis_name, as JAX and XLA spell a collective's axis, and is
// required: a call by name says which of its mesh's axes it runs over.

#include "kernels/call_targets.h"

#include <functional>
#include <string>

#include "base/text.h"
#include "dsl/program/op_registry.h"
#include "kernels/agw_matmul.h"
#include "kernels/all_gather.h"
#include "kernels/matmul.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"

namespace tpusim::kernels {
namespace {

using dsl::AttrSpec;
using dsl::OpTyping;
using dsl::PallasCall;
using dsl::ShapeDtype;

// The operands of target `name`, checked: `count` of them, each of rank `rank` when given.
const std::vector<ShapeDtype>& Operands(const OpTyping& t, const std::string& name, size_t count,
                                        const std::string& what, int rank = -1) {
  bool ok = t.operands.size() == count;
  for (const auto& operand : t.operands)
    ok = ok && (rank < 0 || static_cast<int>(operand.shape.size()) == rank);
  if (!ok) {
    std::string given;
    for (const auto& operand : t.operands)
      base::AppendListItem(given, ", ", dsl::TypeString(operand.dtype, operand.shape));
    dsl::ThrowOpError("pallas_call " + name, "takes " + what + "; got (" + given + ").");
  }
  return t.operands;
}

const std::string& AxisName(const OpTyping& t) {
  return t.attrs.at("axis_name").AsString();
}

// An optional attribute (a parameter the kernel may choose, Auto()): its value, or `otherwise`.
int64_t IntOr(const OpTyping& t, const char* name, int64_t otherwise) {
  const auto it = t.attrs.find(name);
  return it == t.attrs.end() ? otherwise : it->second.AsInt();
}

}  // namespace

std::vector<AttrSpec> KernelAttributes(const std::string& kernel,
                                       const std::vector<std::string>& names) {
  const KernelInfo* info = Registry::Get().Find(kernel);
  if (!info) {
    throw Error(ErrorKind::kKernelMisuse, "pallas_call target '" + kernel +
                                              "' takes its attributes from the kernel of that "
                                              "name, which is not registered.");
  }
  std::vector<AttrSpec> attributes;
  for (const auto& name : names) {
    const Param* param = info->FindParam(name);
    if (!param) {
      throw Error(ErrorKind::kKernelMisuse, "pallas_call target '" + kernel +
                                                "' takes the attribute '" + name +
                                                "', which its kernel does not declare.");
    }
    attributes.push_back(name == "axis" ? AttrSpec::Of(param->Required(), "axis_name")
                                        : AttrSpec::Of(*param));
  }
  return attributes;
}

namespace {

// The attributes of `kernel`'s target, derived when first asked for.
std::function<std::vector<AttrSpec>()> FromKernel(std::string kernel,
                                                  std::vector<std::string> names) {
  return [kernel = std::move(kernel), names = std::move(names)] {
    return KernelAttributes(kernel, names);
  };
}

// The kernels' builders report a value they cannot use as a ParamError naming their
// parameter; called by name, the values are the call's operands and attributes, so the
// error is the call's.
template <class Build>
PallasCall Built(const std::string& target, Build build) {
  try {
    return build();
  } catch (const ParamError& e) {
    dsl::ThrowOpError("pallas_call " + target, e.what());
  }
}

dsl::CallTarget AllGather(const std::string& name, bool bidirectional) {
  dsl::CallTarget target;
  target.name = name;
  target.summary = std::string(bidirectional ? "bidirectional" : "one-way") +
                   " ring all-gather of x along dimension 0 (tiled)";
  target.derived_attributes = FromKernel(name, {"axis"});
  target.build = [name, bidirectional](const OpTyping& t) {
    const ShapeDtype& x = Operands(t, name, 1, "one operand, x")[0];
    const int n = t.mesh.AxisSize(AxisName(t));
    return bidirectional ? BidiAllGatherCall(AxisName(t), n, x)
                         : RingAllGatherCall(AxisName(t), n, x);
  };
  return target;
}

dsl::CallTarget AllReduce() {
  dsl::CallTarget target;
  target.name = "all_reduce_ring";
  target.summary = "ring all-reduce (reduce-scatter, then all-gather) of x over an axis";
  target.derived_attributes = FromKernel("all_reduce_ring", {"axis"});
  target.build = [](const OpTyping& t) {
    const ShapeDtype& x = Operands(t, "all_reduce_ring", 1, "one operand, x")[0];
    return RingAllReduceCall(t.mesh, AxisName(t), x);
  };
  return target;
}

dsl::CallTarget Matmul() {
  dsl::CallTarget target;
  target.name = "matmul";
  target.summary = "tiled MXU matmul a @ b on this chip, f32 accumulation in VMEM";
  target.derived_attributes = FromKernel("matmul", {"bm", "bk", "bn", "precision"});
  target.build = [](const OpTyping& t) {
    const auto& in = Operands(t, "matmul", 2, "a [M, K] and b [K, N] of one dtype", 2);
    if (in[0].shape[1] != in[1].shape[0] || in[0].dtype != in[1].dtype) {
      dsl::ThrowOpError("pallas_call matmul", "needs a [M, K] and b [K, N] of one dtype, but got " +
                                                  dsl::TypeString(in[0].dtype, in[0].shape) +
                                                  " and " +
                                                  dsl::TypeString(in[1].dtype, in[1].shape) + ".");
    }
    MatmulPlan problem;
    problem.m = in[0].shape[0];
    problem.k = in[0].shape[1];
    problem.n = in[1].shape[1];
    problem.bm = IntOr(t, "bm", 0);  // 0: the kernel's default blocks
    problem.bk = IntOr(t, "bk", 0);
    problem.bn = IntOr(t, "bn", 0);
    problem.dtype = in[0].dtype;
    problem.precision = t.attrs.at("precision").AsPrecision();
    return Built("matmul", [&problem] { return MatmulCall(PlanMatmul(problem)); });
  };
  return target;
}

dsl::CallTarget AgwMatmul(bool fused) {
  const std::string name = fused ? "agw_matmul_ar_fused" : "agw_matmul_ar";
  dsl::CallTarget target;
  target.name = name;
  target.summary = fused ? "inputs @ weights, weight rows moving while the MXU multiplies and "
                           "each column chunk all-reduced over axis2 while the next is multiplied"
                         : "inputs @ weights: all_gather the weights over axis_name, multiply, "
                           "all-reduce over axis2";
  target.derived_attributes = FromKernel(name, {"axis", "axis2", "bn"});
  target.build = [name, fused](const OpTyping& t) {
    const auto& in = Operands(t, name, 2, "inputs [M/X, K/Y] and weights [K/X, N]", 2);
    AgwMatmulProblem problem;
    problem.x_axis = AxisName(t);
    if (const auto it = t.attrs.find("axis2"); it != t.attrs.end())
      problem.y_axis = it->second.AsString();
    const std::vector<std::string> others = OtherAxes(t.mesh, problem.x_axis);
    const std::string& y_axis =
        problem.y_axis.empty() && !others.empty() ? others[0] : problem.y_axis;
    const int x = t.mesh.AxisSize(problem.x_axis);
    const int y = y_axis.empty() ? 1 : t.mesh.AxisSize(y_axis);
    problem.m = in[0].shape[0] * x;
    problem.k = in[1].shape[0] * x;
    problem.n = in[1].shape[1];
    if (in[0].shape[1] * y != problem.k || in[0].dtype != in[1].dtype) {
      dsl::ThrowOpError("pallas_call " + name,
                        "the inputs' block " + dsl::TypeString(in[0].dtype, in[0].shape) +
                            " and the weights' block " + dsl::TypeString(in[1].dtype, in[1].shape) +
                            " do not split one K of one dtype: inputs hold K/" + std::to_string(y) +
                            " columns, weights K/" + std::to_string(x) + " rows.");
    }
    problem.column_chunk = IntOr(t, "bn", 0);  // 0: the kernel's chunks
    problem.dtype = in[0].dtype;
    return Built(name, [&t, &problem, fused] { return AgwMatmulCall(t.mesh, problem, fused); });
  };
  return target;
}

const dsl::CallTargetRegistration all_gather_ring(AllGather("all_gather_ring", false));
const dsl::CallTargetRegistration all_gather_bidi(AllGather("all_gather_bidi", true));
const dsl::CallTargetRegistration all_reduce_ring(AllReduce());
const dsl::CallTargetRegistration matmul(Matmul());
const dsl::CallTargetRegistration agw_matmul_ar(AgwMatmul(false));
const dsl::CallTargetRegistration agw_matmul_ar_fused(AgwMatmul(true));

}  // namespace
}  // namespace tpusim::kernels
