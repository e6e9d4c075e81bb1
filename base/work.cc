#include "base/work.h"

#include <algorithm>

#include "topologies/topology.pb.h"

namespace tpusim::base {

void XlaOp::Add(const XlaOp& inner) {
  dots.insert(dots.end(), inner.dots.begin(), inner.dots.end());
  vector_ops += inner.vector_ops;
}

double XlaOp::mxu_flops() const {
  double flops = 0;
  for (const XlaDot& d : dots)
    flops += d.flops;
  return flops;
}

double MxuPasses(const config::ChipConfig& chip, MxuInput input, Precision precision) {
  switch (input) {
    case MxuInput::kBF16:
      return 1;
    case MxuInput::kF32:
      return precision == Precision::kHighest ? 6 : precision == Precision::kHigh ? 3 : 1;
    case MxuInput::kInt8:
      return 1 / chip.cost().int8_mxu_rate();
    case MxuInput::kInt32:
      return chip.cost().int32_dot_passes();
  }
  return 1;
}

double MxuPeakFlops(const config::ChipConfig& chip) {
  return chip.tensor_cores() * chip.mxu_count() * static_cast<double>(chip.mxu_size()) *
         chip.mxu_size() * 2 * chip.clock_hz();
}

double VpuElementsPerSecond(const config::ChipConfig& chip) {
  return chip.tensor_cores() * static_cast<double>(chip.vpu_sublanes()) *
         static_cast<double>(chip.vpu_lanes()) * chip.clock_hz();
}

double PeakSeconds(const config::ChipConfig& chip, const XlaOp& op) {
  double mxu = 0;
  for (const XlaDot& d : op.dots)
    mxu += d.flops * MxuPasses(chip, d.input, d.precision);
  mxu /= MxuPeakFlops(chip);
  const double vpu = op.vector_ops / VpuElementsPerSecond(chip);
  return std::max({mxu, vpu, op.hbm_bytes() / chip.hbm().bandwidth_bytes_per_s()});
}

}  // namespace tpusim::base
