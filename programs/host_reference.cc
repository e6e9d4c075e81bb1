#include "programs/host_reference.h"

#include <algorithm>
#include <cmath>

#include "dsl/shard_map.h"  // tpusim::Error
#include "kernels/params.h"
#include "kernels/problem_params.h"

namespace tpusim::programs {

std::vector<dsl::Array> MatmulOperands(int64_t m, int64_t k, int64_t n, uint64_t seed,
                                       bool functional) {
  return {kernels::EntryInput({m, k}, dsl::DType::kBF16, seed, 0, functional),
          kernels::EntryInput({k, n}, dsl::DType::kBF16, seed, 1, functional)};
}

HostMatrix ToHost(const dsl::Array& a) {
  HostMatrix m(a.shape()[0], a.shape()[1]);
  for (int64_t i = 0; i < a.size(); ++i)
    m.data()[i] = a.GetFlat(i);
  return m;
}

dsl::Array FromHost(const HostMatrix& m, dsl::DType dtype) {
  dsl::Array out({m.rows(), m.cols()}, dtype);
  for (int64_t i = 0; i < out.size(); ++i)
    out.SetFlat(i, m.data()[i]);
  return out;
}

HostMatrix Relu(const HostMatrix& m) {
  return m.cwiseMax(0.0);
}

HostMatrix Rounded(const HostMatrix& m, dsl::DType dtype) {
  return ToHost(FromHost(m, dtype));
}

double MaxAbs(const HostMatrix& m) {
  return m.size() ? m.cwiseAbs().maxCoeff() : 0.0;
}

ChunkedProduct SumOfKChunks(const dsl::Array& a, const dsl::Array& b, int chunks) {
  const HostMatrix x = ToHost(a);
  const HostMatrix y = ToHost(b);
  const int64_t chunk = x.cols() / chunks;
  ChunkedProduct p{HostMatrix::Zero(x.rows(), y.cols())};
  for (int i = 0; i < chunks; ++i) {
    const HostMatrix part = x.middleCols(i * chunk, chunk) * y.middleRows(i * chunk, chunk);
    p.partial_max = std::max(p.partial_max, MaxAbs(part));
    p.sum += part;
  }
  return p;
}

double Ulp(dsl::DType dtype) {
  return dtype == dsl::DType::kBF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -23);
}

void CheckDivides(const std::string& program, const std::string& param,
                  const std::string& dimension, int64_t extent, int parts,
                  const std::string& axis) {
  if (extent > 0 && extent % parts == 0) return;
  throw kernels::ParamError(
      {param}, program + ": " + param + " (" + dimension + ") = " + std::to_string(extent) +
                   " does not split into " + std::to_string(parts) + " equal blocks over axis '" +
                   axis + "'; give a positive multiple of " + std::to_string(parts) + ".");
}

int AxisSizeFor(const std::string& program, const dsl::Mesh& mesh, const std::string& axis,
                bool axis_is_param) {
  for (const auto& name : mesh.axis_names()) {
    if (name == axis) return mesh.AxisSize(axis);
  }
  std::string axes;
  for (const auto& name : mesh.axis_names()) {
    axes += axes.empty() ? "'" : ", '";
    axes += name;
    axes += "'";
  }
  const std::string message = program + " runs over mesh axis '" + axis + "', which " +
                              mesh.Describe() + " does not have; its axes are " + axes + ". ";
  if (!axis_is_param) {
    throw Error(ErrorKind::kInvalidArgument, message + "Run it on a slice that has one.");
  }
  throw kernels::ParamError({"axis"}, message + "Set axis to one of them, or use another slice.");
}

}  // namespace tpusim::programs
