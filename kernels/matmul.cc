// Tiled matmul on the MXU with BlockSpec pipelining (docs/references.md §1, §5): grid
// (m/bm, n/bn, k/bk) with k last, so each output block stays in VMEM while its k-loop
// accumulates into an f32 scratch, and the pipeline prefetches the next a and b blocks
// while the MXU works on the current ones.

#include "kernels/matmul.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/errors.h"
#include "base/work.h"
#include "dsl/kernel.h"

namespace tpusim::kernels {
namespace {

using namespace dsl;
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Matrix ToMatrix(const Array& a) {
  Matrix m(a.shape()[0], a.shape()[1]);
  if (a.dtype() == DType::kF32) {
    std::memcpy(m.data(), a.data(), a.nbytes());
  } else {
    const auto* p = reinterpret_cast<const bf16*>(a.data());
    for (int64_t i = 0; i < a.size(); ++i)
      m.data()[i] = static_cast<float>(p[i]);
  }
  return m;
}

Array FromMatrix(const Matrix& m, DType dtype) {
  Array out({m.rows(), m.cols()}, dtype);
  if (dtype == DType::kF32) {
    std::memcpy(out.data(), m.data(), out.nbytes());
  } else {
    auto* p = reinterpret_cast<bf16*>(out.data());
    for (int64_t i = 0; i < out.size(); ++i)
      p[i] = bf16(m.data()[i]);
  }
  return out;
}

std::string Dims(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

KernelFn MatmulKernel(Precision precision, DType acc_dtype) {
  return [precision, acc_dtype](Kernel& k, const Refs&) {
    const auto [a, b, out, acc] = k.refs("a", "b", "out", "acc");
    const int kk = k.program_id(2);
    if (kk == 0) k.fill(acc, 0);
    k.dot(a, b, acc, /*accumulate=*/true, precision, acc_dtype);
    if (kk == k.num_programs(2) - 1) k.cast(out, acc);
  };
}

MatmulPlan PlanOf(const Params& params) {
  MatmulPlan request;
  request.m = params.Int("m");
  request.k = params.Int("k");
  request.n = params.Int("n");
  request.dtype = DTypeOf(params);
  request.precision = ParsePrecision(params.String("precision"));
  if (params.Has("bm")) request.bm = params.Int("bm");
  if (params.Has("bk")) request.bk = params.Int("bk");
  if (params.Has("bn")) request.bn = params.Int("bn");
  return PlanMatmul(request);
}

Workload Make(const Mesh& mesh, const Params& params) {
  const MatmulPlan plan = PlanOf(params);
  // Every chip computes the whole product from its own copy of a and b.
  Workload w{shard_map(mesh, {P{}, P{}}, {P{}}, MatmulCall(plan)), {}, {}};
  w.inputs = {EntryInput({plan.m, plan.k}, plan.dtype, params.seed, 0, params.functional),
              EntryInput({plan.k, plan.n}, plan.dtype, params.seed, 1, params.functional)};
  if (!params.functional) return w;
  if (plan.integer()) {
    w.expected.push_back(ExactIntegerProduct(w.inputs[0], w.inputs[1]));
    return w;  // exact: rtol = atol = 0
  }
  const Matrix product = ToMatrix(w.inputs[0]) * ToMatrix(w.inputs[1]);
  w.expected.push_back(FromMatrix(product, plan.dtype));
  // The simulator accumulates in f32 block by block, the reference in one pass: sums
  // differ by f32 rounding, which bf16 outputs can turn into one bf16 ulp (2^-8).
  w.rtol = plan.dtype == DType::kBF16 ? 1e-2 : 1e-4;
  w.atol = 1e-3;
  if (plan.dtype == DType::kF32 && plan.precision == Precision::kDefault) {
    // One bf16 pass rounds the f32 operands to bf16 (2^-8 relative each): each product is
    // off by ~2^-8 / 3 at random, so a sum of k of them by ~sqrt(k) x 1.3e-3; allow six
    // standard deviations.
    w.rtol = 1e-2;
    w.atol = 6 * 1.3e-3 * std::sqrt(static_cast<double>(plan.k));
  }
  return w;
}

Bound Roofline(const Mesh& mesh, const Params& params) {
  return MatmulRoofline(mesh, PlanOf(params));
}

double FlopsPerChip(const Mesh&, const Params& params) {
  return 2.0 * static_cast<double>(params.Int("m")) * static_cast<double>(params.Int("k")) *
         static_cast<double>(params.Int("n"));
}

const Registration registration(KernelInfo{
    "matmul",
    "tiled MXU matmul on each chip: BlockSpec pipelining, f32 VMEM accumulator, roofline bound",
    ParamList(MParam(), KParam(), NParam(),
              DTypeParam({DType::kBF16, DType::kF32, DType::kInt8, DType::kInt32}),
              PrecisionParam(), BmParam(), BkParam(), BnParam()),
    Make, Roofline, nullptr, FlopsPerChip});

}  // namespace

int64_t DefaultBlock(int64_t want, int64_t extent, int64_t quantum) {
  if (extent <= want) return extent;
  for (int64_t c = want / quantum * quantum; c >= quantum; c -= quantum) {
    if (extent % c == 0) return c;
  }
  return extent;
}

MatmulPlan PlanMatmul(MatmulPlan request) {
  MatmulPlan p = request;
  if (p.m <= 0 || p.k <= 0 || p.n <= 0) {
    throw ParamError({"m", "k", "n"}, "matmul needs m, k and n of at least 1, got m " +
                                          std::to_string(p.m) + ", k " + std::to_string(p.k) +
                                          ", n " + std::to_string(p.n) + ".");
  }
  // bm is a's second-minor dim (multiples of 8); bk and bn are minor dims (of 128).
  if (p.bm <= 0) p.bm = DefaultBlock(512, p.m, 8);
  if (p.bk <= 0) p.bk = DefaultBlock(1024, p.k, 128);
  if (p.bn <= 0) p.bn = DefaultBlock(1024, p.n, 128);
  const struct {
    const char* name;
    int64_t block, extent;
    const char* dim;
  } blocks[] = {{"bm", p.bm, p.m, "m"}, {"bk", p.bk, p.k, "k"}, {"bn", p.bn, p.n, "n"}};
  for (const auto& b : blocks) {
    if (b.block > b.extent) {
      throw ParamError({b.name}, std::string(b.name) + " " + std::to_string(b.block) +
                                     " must be between 1 and " + b.dim + " (" +
                                     std::to_string(b.extent) + ").");
    }
  }
  p.grid = {static_cast<int>(p.m / p.bm), static_cast<int>(p.n / p.bn),
            static_cast<int>(p.k / p.bk)};
  return p;
}

PallasCall MatmulCall(const MatmulPlan& p) {
  GridSpec grid;
  grid.grid = p.grid;
  grid.in_specs = {BlockSpec({p.bm, p.bk},
                             [](int i, int, int k) {
                               return BlockIndex{i, k};
                             }),
                   BlockSpec({p.bk, p.bn}, [](int, int j, int k) {
                     return BlockIndex{k, j};
                   })};
  grid.out_specs = {BlockSpec({p.bm, p.bn}, [](int i, int j, int) { return BlockIndex{i, j}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({p.bm, p.bn}, p.acc_dtype(), "acc")};
  PallasCall call = pallas_call("matmul", MatmulKernel(p.precision, p.acc_dtype()), grid,
                                {{{p.m, p.n}, p.out_dtype()}});
  call.in_names = {"a", "b"};
  call.out_names = {"out"};
  call.compiler_params.dimension_semantics = {"parallel", "parallel", "arbitrary"};
  return call;
}

std::vector<Param> RingMatmulParams(const RingMatmulNames& names,
                                    const std::vector<DType>& dtypes) {
  const std::string k = names.k, n = names.n;
  return ParamList(
      AxisParam().Description("the ring axis Y, which shards " + k + " and " + n),
      MParam().Description("B: rows of " + std::string(names.lhs) +
                           " and of the output, sharded over the other axes"),
      KParam().Description(k + ": the contracting dim"),
      NParam().Description(n + ": columns of " + std::string(names.rhs) + " and of the output"),
      DTypeParam(dtypes));
}

RingMatmulShards ShardRingMatmul(const Mesh& mesh, const std::string& axis,
                                 const MatmulProblem& problem, const RingMatmulNames& names) {
  RingMatmulShards s;
  s.ring = axis;
  s.y = mesh.AxisSize(axis);
  s.others = OtherAxes(mesh, axis);
  int64_t x = 1;
  for (const auto& name : s.others)
    x *= mesh.AxisSize(name);
  const std::string k = names.k, n = names.n;
  if (problem.m % x || problem.k % s.y || problem.n % s.y) {
    throw ParamError({"m", "k", "n"},
                     std::string(names.lhs) + "[" + std::to_string(problem.m) + ", " +
                         std::to_string(problem.k) + "] x " + names.rhs + "[" +
                         std::to_string(problem.k) + ", " + std::to_string(problem.n) +
                         "] does not shard evenly: B (m) must be a multiple of " +
                         std::to_string(x) + " (the other axes), and " + k + " (k) and " + n +
                         " (n) of " + std::to_string(s.y) + " (axis '" + axis + "').");
  }
  s.rows = problem.m / x;
  s.k_chunk = problem.k / s.y;
  s.n_chunk = problem.n / s.y;
  return s;
}

double MxuPeakSeconds(const Mesh& mesh, double flops, DType dtype) {
  const auto& chip = mesh.topology().chip();
  return flops * base::MxuPasses(chip, MxuInputOf(dtype), Precision::kDefault) /
         base::MxuPeakFlops(chip);
}

Bound MatmulRoofline(const Mesh& mesh, const MatmulPlan& p) {
  const auto& chip = mesh.topology().chip();
  Bound b;
  b.flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.k) * static_cast<double>(p.n);
  b.peak_flops = base::MxuPeakFlops(chip);
  b.hbm_bytes_per_s = chip.hbm().bandwidth_bytes_per_s();
  // The pipeline fetches a block when its index changes from one step to the next; the
  // grid runs (i, j, k) with k innermost. a's block (i, k) changes every step when k
  // loops (grid[2] > 1), else only with i; b's block (k, j) changes every step unless the
  // whole grid maps to one block of it. Counted in closed form: a grid of small blocks
  // has billions of steps.
  const uint64_t steps = static_cast<uint64_t>(p.grid[0]) * static_cast<uint64_t>(p.grid[1]) *
                         static_cast<uint64_t>(p.grid[2]);
  const uint64_t a_fetches = p.grid[2] > 1 ? steps : static_cast<uint64_t>(p.grid[0]);
  const uint64_t b_fetches = p.grid[2] > 1 || p.grid[1] > 1 ? steps : 1;
  const double es = SizeOf(p.dtype);
  const double a_bytes = static_cast<double>(p.m) * p.k * es;
  const double b_bytes = static_cast<double>(p.k) * p.n * es;
  const double a_reads = static_cast<double>(a_fetches * p.bm * p.bk) * es / a_bytes;
  const double b_reads = static_cast<double>(b_fetches * p.bk * p.bn) * es / b_bytes;
  b.hbm_bytes = a_reads * a_bytes + b_reads * b_bytes +
                static_cast<double>(p.m) * p.n * SizeOf(p.out_dtype());
  // A dot of f32 at HIGH or HIGHEST, or of integers, takes more than one bf16 pass.
  const double compute =
      b.flops * base::MxuPasses(chip, MxuInputOf(p.dtype), p.precision) / b.peak_flops;
  const double memory = b.hbm_bytes / b.hbm_bytes_per_s;
  b.seconds = std::max(compute, memory);
  char reads[96];
  std::snprintf(reads, sizeof reads, "a read %gx, b read %gx, out written once", a_reads, b_reads);
  b.blocks = {p.bm, p.bk, p.bn};
  b.formula = std::string("max(FLOPs/peak, HBM bytes/HBM bw) = ") +
              (compute >= memory ? "FLOPs/peak" : "HBM bytes/HBM bw") + "; blocks " +
              Dims(p.bm, p.bk, p.bn) + ": " + reads;
  return b;
}

}  // namespace tpusim::kernels
