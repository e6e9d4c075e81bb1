#pragma once

// The one place compute costs live: a kernel's dot (dsl/compute.cc), a pipeline's grid
// steps (dsl/pipeline.cc) and a program's XLA-style fused ops all charge from here, so
// they agree. docs/time-model.md gives the formulas and the calibration table.

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/dtype.h"
#include "topologies/topology.pb.h"

namespace tpusim::dsl {

// "DEFAULT", "HIGH", "HIGHEST" (also JAX's aliases "bfloat16", "bfloat16_3x", "float32");
// throws Error(kInvalidArgument) naming the accepted spellings.
Precision ParsePrecision(const std::string& name);

// bf16 MXU passes one dot of `operands` costs, as XLA runs it on TPU (docs/references.md §1,
// "Matmul precision"): bf16 one; f32 DEFAULT one, HIGH three, HIGHEST six; int8
// 1 / chip.cost.int8_mxu_rate; int32 chip.cost.int32_dot_passes.
double MxuPasses(const config::ChipConfig& chip, DType operands, Precision precision);

// The most simulated time one compute op may take: simulated time counts picoseconds in
// 64 bits (about 213 days), and a run adds up many ops.
inline constexpr double kMaxOpSeconds = 1e6;

// `cycles` of one op, rounded up, once checked: finite, not negative, and at most
// kMaxOpSeconds at `clock_hz`. Otherwise throws Error(kInvalidArgument) naming `what`
// ("a dot of ...") and `from`, the topology values its time comes from.
uint64_t CheckedOpCycles(double clock_hz, double cycles, const std::string& what,
                         const std::string& from);

// Cycles of an [m, k] x [k, n] dot on one core: ceil(m/8) x ceil(k/size) x ceil(n/size)
// [8, size] x [size, size] products of 8 cycles each, spread over the core's MXUs, times
// MxuPasses, over chip.cost.mxu_efficiency. Checked as CheckedOpCycles, naming the cost
// parameters.
uint64_t MxuDotCycles(const config::ChipConfig& chip, int64_t m, int64_t k, int64_t n,
                      DType operands, Precision precision);

// The fixed control cost of one grid step of a pipelined pallas_call grid or of
// emit_pipeline (chip.cost.grid_step_cycles).
uint64_t GridStepCycles(const config::ChipConfig& chip);

// bf16 FLOP/s of one core at the MXU peak: mxu_count x size^2 x 2 x clock.
double MxuPeakFlops(const config::ChipConfig& chip);

// What an XLA fused op achieves of the peaks; calibrated in docs/time-model.md.
inline constexpr double kXlaMxuFraction = 0.88;  // XLA's bf16 4096^3 and 8192^3 matmuls
inline constexpr double kXlaHbmFraction = 0.9;   // modelling choice, no public figure

// An XLA fused op at the roofline: max(MXU time, HBM time), with MXU time =
// mxu_flops x MxuPasses / (MxuPeakFlops x kXlaMxuFraction) and HBM time =
// hbm_bytes / (HBM bandwidth x kXlaHbmFraction).
double XlaOpSeconds(const config::ChipConfig& chip, double mxu_flops, DType operands,
                    Precision precision, double hbm_bytes);
// An elementwise (VPU) fused op: HBM-bound, hbm_bytes / (HBM bandwidth x kXlaHbmFraction).
double XlaElementwiseSeconds(const config::ChipConfig& chip, double hbm_bytes);

// The work of one XLA op (or fusion), as the program layer describes it: the dots it runs on
// the MXU, the elementwise operations it runs on the VPU, and the bytes it reads from and
// writes to HBM. A fusion's work is the sum over its inner ops, except HBM: only its
// operands and results touch HBM.
struct XlaWork {
  struct Dot {
    double flops;
    DType operands;
    Precision precision;
  };
  std::vector<Dot> dots;
  double vpu_ops = 0;    // elementwise operations (one per element per op)
  double hbm_bytes = 0;  // read + written

  void Add(const XlaWork& inner);  // dots and VPU work; HBM traffic is the caller's
  double mxu_flops() const;
};

// The roofline of `work`: max(MXU, VPU, HBM), each at XLA's achieved fraction. MXU as in
// XlaOpSeconds; VPU = vpu_ops / (sublanes x lanes x clock), one vreg per cycle (the VPU is
// never the roofline of a memory-bound op, but a transcendental-heavy fusion can be).
double XlaWorkSeconds(const config::ChipConfig& chip, const XlaWork& work);

}  // namespace tpusim::dsl
