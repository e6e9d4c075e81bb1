// mlp: y = relu(X @ W1) @ W2 on one mesh axis (8-way on v5e-8x16's 'x'), X bf16[B, D],
// W1 bf16[D, H], W2 bf16[H, D], y bf16[B, D], in four layouts:
//   mlp/replicated: every device holds everything and computes all of y (no communication,
//                   every chip does all the FLOPs and holds all the weights);
//   mlp/dp:         X and y split on the batch, weights replicated (no communication);
//   mlp/fsdp:       X and y split on the batch, W1 and W2 split on their rows and
//                   all_gathered just before use (weights move, each chip stores 1/X);
//   mlp/tp:         W1 split on its columns and W2 on its rows (Megatron): each device
//                   computes its slice of the hidden layer, then psums its [B, D] partial.
// Parameters: m = B (default 1024), k = D (default 1024), n = H (default 4096), axis the
// axis.

#include <algorithm>
#include <string>
#include <vector>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"
#include "programs/host_reference.h"
#include "programs/program_entry.h"

namespace tpusim::programs {
namespace {

using namespace dsl;
using kernels::Params;
using kernels::Workload;

constexpr const char* kFamily = "mlp";

enum class Layout { kReplicated, kDp, kFsdp, kTp };

struct Mlp {
  std::string name, axis;
  int x = 1;
  int64_t b = 0, d = 0, h = 0;
};

Mlp MlpFor(const std::string& name, const Mesh& mesh, const Params& params, Layout layout) {
  Mlp p;
  p.name = name;
  p.axis = params.String("axis");
  p.x = AxisSizeFor(name, mesh, p.axis);
  p.b = params.Int("m");
  p.d = params.Int("k");
  p.h = params.Int("n");
  if (layout == Layout::kDp || layout == Layout::kFsdp)
    CheckDivides(name, "m", "B", p.b, p.x, p.axis);
  if (layout == Layout::kFsdp) {
    CheckDivides(name, "k", "D", p.d, p.x, p.axis);
    CheckDivides(name, "n", "H", p.h, p.x, p.axis);
  }
  if (layout == Layout::kTp) CheckDivides(name, "n", "H", p.h, p.x, p.axis);
  return p;
}

// What every layout's check needs of the MLP's inputs, computed in double precision.
struct Reference {
  std::vector<Array> inputs;
  Array y;            // rounded to bf16
  double max_y = 0;   // max |y| before the rounding
  double spread = 0;  // max of |h| @ |W2|
};

// `compare mlp` checks four layouts of the same inputs: the reference is computed once (the
// last inputs' one is kept, matched byte for byte), not once per layout.
const Reference& ReferenceFor(const std::vector<Array>& inputs) {
  thread_local Reference last;
  const bool same = last.inputs.size() == inputs.size() &&
                    std::equal(inputs.begin(), inputs.end(), last.inputs.begin(),
                               [](const Array& a, const Array& b) { return a.SameBytes(b); });
  if (same) return last;
  const HostMatrix x = ToHost(inputs[0]);
  const HostMatrix w1 = ToHost(inputs[1]);
  const HostMatrix w2 = ToHost(inputs[2]);
  const HostMatrix hidden = Relu(Rounded(x * w1, DType::kBF16));
  const HostMatrix y = hidden * w2;
  last.spread = MaxAbs(hidden.cwiseAbs() * w2.cwiseAbs());
  last.max_y = MaxAbs(y);
  last.y = FromHost(y, DType::kBF16);
  last.inputs = inputs;
  return last;
}

// The reference rounds the hidden layer to bf16 as the program stores it. A device's h
// may differ from it by one bf16 ulp (f32 accumulation in another order), which moves y
// by at most one ulp of |h| @ |W2|; y itself is rounded once more, and under TP each of
// the X partials is rounded to bf16 and the ring rounds each partial sum (X - 1 times),
// each bounded by |h| @ |W2| too.
Workload MlpWorkload(const Mlp& p, const Params& params, ShardMap program, Layout layout) {
  Workload w{std::move(program), {}, {}};
  w.inputs = {kernels::EntryInput({p.b, p.d}, DType::kBF16, params.seed, 0, params.functional),
              kernels::EntryInput({p.d, p.h}, DType::kBF16, params.seed, 1, params.functional),
              kernels::EntryInput({p.h, p.d}, DType::kBF16, params.seed, 2, params.functional)};
  w.out_types = {{{p.b, p.d}, DType::kBF16}};  // so compare knows the contract without a reference
  if (!params.functional) return w;
  const Reference& reference = ReferenceFor(w.inputs);
  w.expected = {reference.y};
  const double roundings = 1 + (layout == Layout::kTp ? 2 * p.x - 1 : 0);
  w.atol = Ulp(DType::kBF16) * (reference.max_y + roundings * reference.spread);
  return w;
}

Workload Make(const std::string& name, const Mesh& mesh, const Params& params, Layout layout) {
  const Mlp p = MlpFor(name, mesh, params, layout);
  const std::string axis = p.axis;
  const P batch{axis, nullptr};
  ProgramBody body;
  std::vector<PartitionSpec> in_specs;
  PartitionSpec out_spec;
  switch (layout) {
    case Layout::kReplicated:
    case Layout::kDp:
      in_specs = layout == Layout::kDp ? std::vector<PartitionSpec>{batch, P{}, P{}}
                                       : std::vector<PartitionSpec>{P{}, P{}, P{}};
      out_spec = layout == Layout::kDp ? batch : P{};
      body = [](ProgramContext& ctx, const std::vector<Value>& in) {
        return std::vector<Value>{ctx.dot(ctx.relu(ctx.dot(in[0], in[1])), in[2])};
      };
      break;
    case Layout::kFsdp:
      in_specs = {batch, P{axis, nullptr}, P{axis, nullptr}};
      out_spec = batch;
      body = [axis](ProgramContext& ctx, const std::vector<Value>& in) {
        Value w1 = ctx.all_gather(in[1], axis, /*axis=*/0, /*tiled=*/true);
        Value hidden = ctx.relu(ctx.dot(in[0], w1));
        w1 = Value();  // the gathered weights live only as long as their layer
        Value w2 = ctx.all_gather(in[2], axis, /*axis=*/0, /*tiled=*/true);
        return std::vector<Value>{ctx.dot(hidden, w2)};
      };
      break;
    case Layout::kTp:
      in_specs = {P{}, P{nullptr, axis}, P{axis, nullptr}};
      out_spec = P{};
      body = [axis](ProgramContext& ctx, const std::vector<Value>& in) {
        Value hidden = ctx.relu(ctx.dot(in[0], in[1]));
        return std::vector<Value>{ctx.psum(ctx.dot(hidden, in[2]), axis)};
      };
      break;
  }
  return MlpWorkload(p, params, shard_map(mesh, in_specs, {out_spec}, body, name), layout);
}

// max(compute, communication), per chip: its share of the 4 B D H FLOPs at the MXU peak
// (replicated does all of them on every chip), and the bytes its layout must move at the
// link bound (program_entry.h): FSDP gathers both weights (2 D H bf16 bytes each), TP
// all-reduces the [B, D] bf16 partial (2 x 2 B D bytes, as psum = 2 x psum_scatter);
// replicated and DP move nothing.
kernels::Bound MlpBound(const Mesh& mesh, const Params& params, Layout layout) {
  const Mlp p = MlpFor("mlp", mesh, params, layout);
  const double flops = 4.0 * p.b * p.d * p.h / (layout == Layout::kReplicated ? 1 : p.x);
  switch (layout) {
    case Layout::kReplicated:
      return ComputeOrLinkBound(mesh, flops, 0, "4 B D H / peak FLOP/s (no communication)");
    case Layout::kDp:
      return ComputeOrLinkBound(mesh, flops, 0, "4 B D H / (X peak FLOP/s) (no communication)");
    case Layout::kFsdp:
      return ComputeOrLinkBound(mesh, flops, LinkSeconds(mesh, p.axis, 2 * (2.0 * p.d * p.h)),
                                "max(4 B D H / (X C), 2 (2 D H bytes)(X-1)/X / W)");
    case Layout::kTp:
      break;
  }
  return ComputeOrLinkBound(mesh, flops, LinkSeconds(mesh, p.axis, 2 * (2.0 * p.b * p.d)),
                            "max(4 B D H / (X C), 2 (2 B D bytes)(X-1)/X / W)");
}

kernels::KernelInfo Info(const std::string& layout_name, const std::string& summary,
                         Layout layout) {
  const std::string name = std::string(kFamily) + "/" + layout_name;
  return ProgramEntry(
      kFamily, layout_name, summary,
      {kernels::AxisParam().Description("the mesh axis the layout shards over"),
       kernels::MParam().Description("B, the batch: rows of X and y").Default(1024),
       kernels::KParam().Description("D: columns of X and y").Default(1024),
       kernels::NParam().Description("H: the hidden layer's width").Default(4096)},
      [name, layout](const Mesh& mesh, const Params& params) {
        return Make(name, mesh, params, layout);
      },
      [layout](const Mesh& mesh, const Params& params) { return MlpBound(mesh, params, layout); });
}

const kernels::Registration replicated(
    Info("replicated", "relu(X @ W1) @ W2, everything on every chip (m = B, k = D, n = H)",
         Layout::kReplicated));
const kernels::Registration dp(Info("dp",
                                    "relu(X @ W1) @ W2, X split on the batch, weights replicated",
                                    Layout::kDp));
const kernels::Registration fsdp(
    Info("fsdp", "relu(X @ W1) @ W2, X on the batch, weights split on rows, all_gather before use",
         Layout::kFsdp));
const kernels::Registration tp(Info(
    "tp", "relu(X @ W1) @ W2, W1 column- and W2 row-split, psum of the partials", Layout::kTp));

}  // namespace
}  // namespace tpusim::programs
