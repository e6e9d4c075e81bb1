// seed003: out = inputs @ weights on a 2-D mesh ('x', 'y'), v5e 2x2 in the issue:
// inputs bf16[2048, 2048] P('x', 'y'), weights bf16[2048, 1024] P('x', None), out
// P('x', None). Device (i, j) holds inputs[rows i, K-chunk j] and weights[K-block i, :];
// its rows of out are the sum over j of inputs[rows i, K-chunk j] @ weights[K-chunk j, :].
// Six versions of the same computation, as a user would write them in turn:
//   a  lax only: all_gather both operands, then one dot (no partial sums, X*Y-fold
//      redundant FLOPs along y);
//   b  lax: all_gather the weights over x, dynamic_slice K-chunk y, dot, psum over y;
//   c  b with preferred_element_type f32: the partials and the psum are f32;
//   d  b with Pallas kernels: all_gather_ring's pallas_call, dynamic_slice, the tiled
//      matmul pallas_call, all_reduce_ring's pallas_call;
//   e  d with the bidirectional all-gather kernel;
//   f  one fused kernel (agw_matmul_ar_fused): only the needed weight rows move, the MXU
//      multiplies while they arrive, and each column chunk is all-reduced over y while the
//      next one is multiplied.

#include <cmath>
#include <string>

#include "dsl/program/context.h"
#include "dsl/shard_map.h"
#include "kernels/agw_matmul.h"
#include "kernels/all_gather.h"
#include "kernels/matmul.h"
#include "kernels/problem_params.h"
#include "kernels/reduce_scatter.h"
#include "kernels/registry.h"
#include "programs/host_reference.h"
#include "programs/program_entry.h"

namespace tpusim::programs {
namespace {

using namespace dsl;
using kernels::Params;
using kernels::Workload;

constexpr const char* kFamily = "seed003";

// The global problem and its blocks on this mesh.
struct Seed {
  int64_t m = 0, k = 0, n = 0;
  int x = 1, y = 1;
  int64_t rows() const { return m / x; }  // rows of inputs and out per device
  int64_t kx() const { return k / x; }    // rows of weights per device
  int64_t ky() const { return k / y; }    // the K-chunk of inputs per device
};

Seed SeedFor(const std::string& name, const Mesh& mesh, const Params& params) {
  Seed s;
  s.m = params.Int("m");
  s.k = params.Int("k");
  s.n = params.Int("n");
  s.x = AxisSizeFor(name, mesh, "x", /*axis_is_param=*/false);
  s.y = AxisSizeFor(name, mesh, "y", /*axis_is_param=*/false);
  CheckDivides(name, "m", "M", s.m, s.x, "x");
  CheckDivides(name, "k", "K", s.k, s.x, "x");
  CheckDivides(name, "k", "K", s.k, s.y, "y");
  return s;
}

enum class Partials { kNone, kBf16, kF32 };

// inputs, weights, their product and the tolerance for a result in `out` dtype whose
// partial sums over y were rounded as `partials` says: one ulp of the result, plus one
// ulp of each of the Y partials when they are rounded to bf16 before the sum. f32 results
// differ from the exact product by f32 accumulation: six standard deviations of K
// roundings of products up to 1 (sqrt(K) x 2^-24 x K bounds it loosely and cheaply).
Workload SeedWorkload(const Seed& s, const Params& params, ShardMap program, DType out,
                      Partials partials) {
  Workload w{std::move(program), MatmulOperands(s.m, s.k, s.n, params.seed, params.functional), {}};
  w.out_types = {{{s.m, s.n}, out}};  // so compare knows the contract without a reference
  if (!params.functional) return w;
  const ChunkedProduct p = SumOfKChunks(w.inputs[0], w.inputs[1], s.y);
  w.expected = {FromHost(p.sum, out)};
  if (out == DType::kF32) {
    w.atol = 6 * std::sqrt(static_cast<double>(s.k)) * std::ldexp(1.0, -24) * s.k;
  } else {
    w.atol = Ulp(out) * MaxAbs(p.sum);
    if (partials == Partials::kBf16) w.atol += Ulp(DType::kBF16) * s.y * p.partial_max;
  }
  return w;
}

ShardMap SeedProgram(const Mesh& mesh, const std::string& name, ProgramBody body) {
  return shard_map(mesh, {P{"x", "y"}, P{"x", nullptr}}, {P{"x", nullptr}}, std::move(body), name);
}

// (b) and (c): the lax schedule, with the dot's result (and the psum) in `partial` dtype.
Workload LaxSliced(const std::string& name, const Mesh& mesh, const Params& params, DType partial) {
  const Seed s = SeedFor(name, mesh, params);
  auto body = [s, partial](ProgramContext& ctx, const std::vector<Value>& in) {
    Value weights = ctx.all_gather(in[1], "x", /*axis=*/0, /*tiled=*/true);
    Value rows = ctx.dynamic_slice(weights, {ctx.axis_index("y") * s.ky(), 0}, {s.ky(), s.n});
    return std::vector<Value>{ctx.psum(ctx.dot(in[0], rows, partial), "y")};
  };
  return SeedWorkload(s, params, SeedProgram(mesh, name, body), partial,
                      partial == DType::kBF16 ? Partials::kBf16 : Partials::kF32);
}

Workload LaxOnly(const Mesh& mesh, const Params& params) {
  const std::string name = "seed003/a";
  const Seed s = SeedFor(name, mesh, params);
  auto body = [](ProgramContext& ctx, const std::vector<Value>& in) {
    Value rows = ctx.all_gather(in[0], "y", /*axis=*/1, /*tiled=*/true);
    Value weights = ctx.all_gather(in[1], "x", /*axis=*/0, /*tiled=*/true);
    return std::vector<Value>{ctx.dot(rows, weights)};
  };
  return SeedWorkload(s, params, SeedProgram(mesh, name, body), DType::kBF16, Partials::kNone);
}

// (d) and (e): the same steps as (b), each a Pallas kernel from kernels/.
Workload ComposedPallas(const std::string& name, const Mesh& mesh, const Params& params,
                        bool bidirectional) {
  const Seed s = SeedFor(name, mesh, params);
  const ShapeDtype weights_block{{s.kx(), s.n}, DType::kBF16};
  const PallasCall gather = bidirectional ? kernels::BidiAllGatherCall("x", s.x, weights_block)
                                          : kernels::RingAllGatherCall("x", s.x, weights_block);
  kernels::MatmulPlan local;  // the per-device problem, default blocks
  local.m = s.rows();
  local.k = s.ky();
  local.n = s.n;
  const PallasCall matmul = kernels::MatmulCall(kernels::PlanMatmul(local));
  const PallasCall all_reduce =
      kernels::RingAllReduceCall(mesh, "y", {{s.rows(), s.n}, DType::kBF16});
  auto body = [s, gather, matmul, all_reduce](ProgramContext& ctx, const std::vector<Value>& in) {
    Value weights = ctx.pallas_call(gather, {in[1]})[0];
    Value rows = ctx.dynamic_slice(weights, {ctx.axis_index("y") * s.ky(), 0}, {s.ky(), s.n});
    Value partial = ctx.pallas_call(matmul, {in[0], rows})[0];
    return ctx.pallas_call(all_reduce, {partial});
  };
  return SeedWorkload(s, params, SeedProgram(mesh, name, body), DType::kBF16, Partials::kBf16);
}

Workload Fused(const Mesh& mesh, const Params& params) {
  const std::string name = "seed003/f";
  const Seed s = SeedFor(name, mesh, params);
  kernels::AgwMatmulProblem problem;
  // Copies, not assignments from literals: GCC 12 at -O3 misreports the latter (-Wrestrict).
  static const std::string kX = "x", kY = "y";
  problem.x_axis = kX;
  problem.y_axis = kY;
  problem.m = s.m;
  problem.k = s.k;
  problem.n = s.n;
  problem.dtype = DType::kBF16;
  const PallasCall fused = kernels::AgwMatmulCall(mesh, problem, /*fused=*/true);
  auto body = [fused](ProgramContext& ctx, const std::vector<Value>& in) {
    return ctx.pallas_call(fused, in);
  };
  // The kernel's partials travel in f32; the one rounding is the bf16 result's.
  return SeedWorkload(s, params, SeedProgram(mesh, name, body), DType::kBF16, Partials::kF32);
}

// Every version does at least each device's share of the FLOPs, 2 (M/X)(K/Y) N, at the
// MXU peak (docs/references.md §1); (a) does Y times that. The bound is compute-only on
// purpose: the layout is the same for all six, and how much they move is each schedule's
// choice ((f) moves only the weight rows a device needs, (a) no partial sums), so a
// communication term taken from one schedule's collectives would not bound the others.
// The family's common floor is the compute.
kernels::Bound SeedBound(const Mesh& mesh, const Params& params) {
  const Seed s = SeedFor("seed003", mesh, params);
  return ComputeOrLinkBound(
      mesh,
      2.0 * static_cast<double>(s.rows()) * static_cast<double>(s.ky()) * static_cast<double>(s.n),
      0, "2 (M/X)(K/Y) N / peak FLOP/s (compute only)");
}

kernels::KernelInfo Seed003(const std::string& version, const std::string& summary, MakeFn make) {
  return ProgramEntry(
      kFamily, version, summary,
      {kernels::MParam().Description("M: rows of inputs and out").Default(2048),
       kernels::KParam().Description("K: the contracting dim").Default(2048),
       kernels::NParam().Description("N: columns of weights and out").Default(1024)},
      std::move(make), SeedBound);
}

const kernels::Registration a(Seed003("a", "lax only: all_gather both operands, then dot",
                                      LaxOnly));
const kernels::Registration b(
    Seed003("b", "lax: all_gather weights over x, dynamic_slice K-chunk y, dot, psum over y",
            [](const Mesh& mesh, const Params& params) {
              return LaxSliced("seed003/b", mesh, params, DType::kBF16);
            }));
const kernels::Registration c(
    Seed003("c", "(b) with preferred_element_type f32: f32 partials and psum, f32 out",
            [](const Mesh& mesh, const Params& params) {
              return LaxSliced("seed003/c", mesh, params, DType::kF32);
            }));
const kernels::Registration d(Seed003(
    "d", "Pallas kernels composed: ring all-gather, dynamic_slice, tiled matmul, all-reduce",
    [](const Mesh& mesh, const Params& params) {
      return ComposedPallas("seed003/d", mesh, params, false);
    }));
const kernels::Registration e(Seed003("e", "(d) with the bidirectional all-gather kernel",
                                      [](const Mesh& mesh, const Params& params) {
                                        return ComposedPallas("seed003/e", mesh, params, true);
                                      }));
const kernels::Registration f(Seed003(
    "f", "one fused kernel: weight rows move while the MXU multiplies, all-reduce overlapped",
    Fused));

}  // namespace
}  // namespace tpusim::programs
