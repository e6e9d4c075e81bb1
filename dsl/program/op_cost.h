#pragma once

// What a program's array op costs: XLA's fused op at the roofline of the chip's MXU
// FLOP/s and HBM bandwidth, at an achieved fraction of each peak. This is the one place
// the program layer takes its fractions from; it follows dsl/cost.h's XlaOpSeconds
// (same formula and fractions) and becomes a call to it once that lands.

#include "dsl/dtype.h"
#include "topologies/topology.pb.h"

namespace tpusim::dsl {

// XLA's bf16 4096^3 / 8192^3 matmuls reach 88% of the MXU peak; 90% of HBM bandwidth is
// a modelling choice (no public figure). See dsl/cost.h when merged.
inline constexpr double kProgramMxuFraction = 0.88;
inline constexpr double kProgramHbmFraction = 0.9;

// max(mxu_flops x passes / (MXU peak x fraction), hbm_bytes / (HBM bandwidth x fraction)),
// with the MXU peak mxu_count x size^2 x 2 x clock (docs/references.md §1) and passes the bf16
// MXU passes of `operands` at `precision` (f32: DEFAULT 1, HIGH 3, HIGHEST 6).
inline double ProgramOpSeconds(const config::ChipConfig& chip, double mxu_flops, DType operands,
                               Precision precision, double hbm_bytes) {
  double passes = 1;
  if (operands == DType::kF32 || operands == DType::kInt32) {
    passes = precision == Precision::kHighest ? 6 : precision == Precision::kHigh ? 3 : 1;
  }
  const double peak = static_cast<double>(chip.mxu_count()) * chip.mxu_size() * chip.mxu_size() *
                      2.0 * chip.clock_hz();
  const double mxu = mxu_flops * passes / (peak * kProgramMxuFraction);
  const double hbm = hbm_bytes / (chip.hbm().bandwidth_bytes_per_s() * kProgramHbmFraction);
  return mxu > hbm ? mxu : hbm;
}

}  // namespace tpusim::dsl
