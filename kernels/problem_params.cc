#include "kernels/problem_params.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "dsl/dtype.h"

namespace tpusim::kernels {

namespace {

// The largest dimension or block size: grid indices and shapes are ints.
constexpr int64_t kMaxDim = 2147483647;

Param Dim(const std::string& name, const std::string& description) {
  return Param::Int(name, description).Unit("elements").Range(1, kMaxDim);
}

Param Block(const std::string& name, const std::string& description, const std::string& how) {
  return Dim(name, description).Auto(how);
}

}  // namespace

Param AxisParam() {
  return Param::String("axis", "mesh axis the collective runs over").Default("x");
}

Param Axis2Param() {
  return Param::String("axis2", "second mesh axis of a two-axis entry")
      .Auto("the first mesh axis other than axis");
}

Param BytesParam() {
  return Param::Bytes("bytes", "V, the size of the full (gathered) array: 4096, 64K, 16M, 1G")
      .Min(1);
}

Param DTypeParam(const std::vector<dsl::DType>& allowed, const std::string& why) {
  std::vector<std::string> names;
  for (const dsl::DType dtype : allowed)
    names.push_back(dsl::DTypeName(dtype));
  return Param::Enum("dtype", names, why.empty() ? "element type" : "element type; " + why)
      .Default(allowed.front());
}

Param PrecisionParam() {
  return Param::Enum("precision", {"DEFAULT", "HIGH", "HIGHEST"},
                     "dots on f32: DEFAULT (one bf16 pass), HIGH (three) or HIGHEST (six)")
      .Default("DEFAULT");
}

Param RingDirectionParam() {
  return Param::Enum("direction", {"right", "left"},
                     "the ring neighbour each device sends to (at axis index + 1, or - 1)")
      .Default("right");
}

Param MParam() {
  return Dim("m", "rows of A and of the output");
}
Param KParam() {
  return Dim("k", "the contracting dim");
}
Param NParam() {
  return Dim("n", "columns of B and of the output");
}

Param BmParam() {
  return Block("bm", "block rows", "up to 512, a divisor of m that keeps the (8, 128) rule");
}
Param BkParam() {
  return Block("bk", "block contracting dim",
               "up to 1024, a divisor of k that keeps the (8, 128) rule");
}
Param BnParam() {
  return Block("bn", "block columns", "up to 1024, a divisor of n that keeps the (8, 128) rule");
}

std::vector<Param> CollectiveParams(const std::vector<dsl::DType>& dtypes, const std::string& why) {
  return {AxisParam(), BytesParam(), DTypeParam(dtypes, why)};
}

std::vector<Param> MatmulParams(const std::vector<dsl::DType>& dtypes) {
  return {MParam(), KParam(), NParam(), DTypeParam(dtypes)};
}

dsl::DType DTypeOf(const Params& params) {
  return dsl::ParseDType(params.String("dtype"));
}

CollectiveProblem CollectiveProblemOf(const Params& params) {
  return {params.String("axis"), params.Bytes("bytes"), DTypeOf(params), params.functional,
          params.seed};
}

MatmulProblem MatmulProblemOf(const Params& params) {
  return {params.Int("m"), params.Int("k"),   params.Int("n"),
          DTypeOf(params), params.functional, params.seed};
}

int CheckCollectiveProblem(const dsl::Mesh& mesh, const CollectiveProblem& problem, int divisor) {
  const int x = mesh.AxisSize(problem.axis);
  const uint64_t esize = dsl::SizeOf(problem.dtype);
  const uint64_t quantum = static_cast<uint64_t>(x) * divisor * esize;
  if (problem.bytes % quantum != 0) {
    const uint64_t below = problem.bytes / quantum * quantum;
    const uint64_t above = below + quantum;
    throw ParamError({"bytes"}, "bytes " + std::to_string(problem.bytes) + " does not split into " +
                                    std::to_string(x * divisor) + " equal shards of whole " +
                                    dsl::DTypeName(problem.dtype) + " elements over axis '" +
                                    problem.axis + "' (size " + std::to_string(x) +
                                    "); use a multiple of " + std::to_string(quantum) +
                                    " bytes, e.g. " +
                                    (below > 0 ? std::to_string(below) + " or " : "") +
                                    std::to_string(above) + ".");
  }
  return x;
}

dsl::Array EntryInput(const dsl::Shape& shape, dsl::DType dtype, uint64_t seed, int index,
                      bool functional) {
  if (!functional) return dsl::Array::Placeholder(shape, dtype);
  const uint64_t stream = seed * 1000003 + static_cast<uint64_t>(index);
  if (dtype == dsl::DType::kInt8 || dtype == dsl::DType::kInt32) {
    return RandomIntegerArray(shape, dtype, stream);
  }
  return dsl::Array::Random(shape, dtype, stream);
}

dsl::Array MakeCollectiveInput(const CollectiveProblem& problem) {
  const int64_t elements = static_cast<int64_t>(problem.bytes / dsl::SizeOf(problem.dtype));
  return EntryInput({elements}, problem.dtype, problem.seed, 0, problem.functional);
}

dsl::Array RandomIntegerArray(const dsl::Shape& shape, dsl::DType dtype, uint64_t seed) {
  dsl::Array a(shape, dtype);
  const int64_t range = dtype == dsl::DType::kInt8 ? 127 : (int64_t{1} << 20);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < a.size(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    a.SetFlat(i,
              static_cast<double>(static_cast<int64_t>((state >> 33) % (2 * range + 1)) - range));
  }
  return a;
}

// Unsigned 64-bit sums are exact modulo 2^64, hence modulo 2^32.
dsl::Array ExactIntegerProduct(const dsl::Array& a, const dsl::Array& b) {
  using IntMatrix = Eigen::Matrix<uint64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto to_matrix = [](const dsl::Array& x) {
    IntMatrix m(x.shape()[0], x.shape()[1]);
    for (int64_t i = 0; i < x.size(); ++i)
      m.data()[i] = static_cast<uint64_t>(static_cast<int64_t>(x.GetFlat(i)));
    return m;
  };
  const IntMatrix product = to_matrix(a) * to_matrix(b);
  dsl::Array out({a.shape()[0], b.shape()[1]}, dsl::DType::kInt32);
  auto* p = reinterpret_cast<int32_t*>(out.data());
  for (int64_t i = 0; i < out.size(); ++i)
    p[i] = static_cast<int32_t>(static_cast<uint32_t>(product.data()[i]));
  return out;
}

void AddMatmulOperands(Workload& w, const MatmulProblem& problem) {
  const int64_t m = problem.m, k = problem.k, n = problem.n;
  dsl::Array a = EntryInput({m, k}, problem.dtype, problem.seed, 0, problem.functional);
  dsl::Array b = EntryInput({k, n}, problem.dtype, problem.seed, 1, problem.functional);
  if (!problem.functional) {
    w.inputs = {std::move(a), std::move(b)};
    return;
  }
  if (problem.dtype == dsl::DType::kInt8 || problem.dtype == dsl::DType::kInt32) {
    w.expected = {ExactIntegerProduct(a, b)};
    w.inputs = {std::move(a), std::move(b)};
    w.rtol = w.atol = 0;  // the MXU's integer dots are exact, wrapping as int32 does
    return;
  }
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Matrix am(m, k), bm(k, n);
  for (int64_t i = 0; i < a.size(); ++i)
    am.data()[i] = a.GetFlat(i);
  for (int64_t i = 0; i < b.size(); ++i)
    bm.data()[i] = b.GetFlat(i);
  const Matrix product = am * bm;
  dsl::Array expected({m, n}, problem.dtype);
  for (int64_t i = 0; i < expected.size(); ++i)
    expected.SetFlat(i, product.data()[i]);
  w.inputs = {std::move(a), std::move(b)};
  w.expected = {std::move(expected)};
  // The kernels' dots run at DEFAULT precision, one bf16 pass, so f32 operands are rounded
  // to bf16 too and the result differs from this reference by bf16 rounding (bf16 keeps 8
  // bits of mantissa: a couple of its ulps; docs/references.md §1, "Matmul precision").
  w.rtol = 2e-2;
  w.atol = 2e-2;
  if (problem.dtype == dsl::DType::kF32) {
    // f32 elements are not rounded to bf16 beforehand, so the pass rounds each (2^-8
    // relative): each product is off by ~2^-8 / 3 at random, a sum of k of them by
    // ~sqrt(k) x 1.3e-3; allow six standard deviations, as `matmul` does.
    w.atol = std::max(w.atol, 6 * 1.3e-3 * std::sqrt(static_cast<double>(k)));
  }
}

}  // namespace tpusim::kernels
