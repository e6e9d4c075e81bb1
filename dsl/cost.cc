#include "dsl/cost.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "base/text.h"

namespace tpusim::dsl {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

Precision ParsePrecision(const std::string& name) {
  if (name == "DEFAULT" || name == "default" || name == "bfloat16") return Precision::kDefault;
  if (name == "HIGH" || name == "high" || name == "bfloat16_3x") return Precision::kHigh;
  if (name == "HIGHEST" || name == "highest" || name == "float32") return Precision::kHighest;
  throw Error(ErrorKind::kInvalidArgument,
              "unknown precision '" + name +
                  "'; use DEFAULT (one bf16 pass), HIGH (three) or HIGHEST (six), as "
                  "jax.lax.Precision.");
}

double MxuPasses(const config::ChipConfig& chip, DType operands, Precision precision) {
  switch (operands) {
    case DType::kBF16:
    case DType::kF16:  // no f16 MXU path is published: taken as bf16
      return 1;
    case DType::kF32:
      return precision == Precision::kHighest ? 6 : precision == Precision::kHigh ? 3 : 1;
    case DType::kInt8:
      return 1 / chip.cost().int8_mxu_rate();
    case DType::kInt32:
    case DType::kBool:
    case DType::kUInt32:
    case DType::kInt64:  // integer dots beyond int8: the int32 path
      return chip.cost().int32_dot_passes();
  }
  return 1;
}

uint64_t CheckedOpCycles(double clock_hz, double cycles, const std::string& what,
                         const std::string& from) {
  const double seconds = cycles / clock_hz;
  if (cycles >= 0 && seconds <= kMaxOpSeconds) return static_cast<uint64_t>(std::ceil(cycles));
  throw Error(ErrorKind::kInvalidArgument,
              what + " would take " + base::NumberText(seconds) +
                  " s of simulated time on one core, more than the " +
                  base::NumberText(kMaxOpSeconds) +
                  " s one op may take (simulated time counts picoseconds in 64 bits). Its time "
                  "comes from " +
                  from + "; check them in the topology, or split the op into smaller ones.");
}

uint64_t MxuDotCycles(const config::ChipConfig& chip, int64_t m, int64_t k, int64_t n,
                      DType operands, Precision precision) {
  const int64_t size = chip.mxu_size();
  // One product: an [8, size] by [size, size] tile, 8 cycles on one MXU (docs/references.md
  // §1). A count past int64 is estimated in doubles, and fails the check below.
  int64_t products = 0;
  double one_pass = 0;
  if (__builtin_mul_overflow(CeilDiv(m, 8), CeilDiv(k, size), &products) ||
      __builtin_mul_overflow(products, CeilDiv(n, size), &products)) {
    one_pass =
        std::ceil(static_cast<double>(CeilDiv(m, 8)) * static_cast<double>(CeilDiv(k, size)) *
                  static_cast<double>(CeilDiv(n, size)) / chip.mxu_count()) *
        8;
  } else {
    one_pass = static_cast<double>(CeilDiv(products, chip.mxu_count())) * 8;
  }
  const double cycles =
      one_pass * MxuPasses(chip, operands, precision) / chip.cost().mxu_efficiency();
  if (cycles / chip.clock_hz() <= kMaxOpSeconds) return static_cast<uint64_t>(std::ceil(cycles));
  std::string from =
      "chip.cost.mxu_efficiency (" + base::NumberText(chip.cost().mxu_efficiency()) + "), ";
  if (operands == DType::kInt8)
    from += "chip.cost.int8_mxu_rate (" + base::NumberText(chip.cost().int8_mxu_rate()) + "), ";
  if (operands == DType::kInt32) {
    from +=
        "chip.cost.int32_dot_passes (" + base::NumberText(chip.cost().int32_dot_passes()) + "), ";
  }
  from += "chip.mxu_size (" + std::to_string(chip.mxu_size()) + "), chip.mxu_count (" +
          std::to_string(chip.mxu_count()) + ") and chip.clock_hz (" +
          base::NumberText(chip.clock_hz()) + ")";
  return CheckedOpCycles(chip.clock_hz(), cycles,
                         "a dot of " + std::string(DTypeName(operands)) + " [" + std::to_string(m) +
                             ", " + std::to_string(k) + "] x [" + std::to_string(k) + ", " +
                             std::to_string(n) + "]",
                         from);
}

uint64_t GridStepCycles(const config::ChipConfig& chip) {
  return static_cast<uint64_t>(std::llround(chip.cost().grid_step_cycles()));
}

double MxuPeakFlops(const config::ChipConfig& chip) {
  return chip.mxu_count() * static_cast<double>(chip.mxu_size()) * chip.mxu_size() * 2 *
         chip.clock_hz();
}

double XlaOpSeconds(const config::ChipConfig& chip, double mxu_flops, DType operands,
                    Precision precision, double hbm_bytes) {
  const double mxu =
      mxu_flops * MxuPasses(chip, operands, precision) / (MxuPeakFlops(chip) * kXlaMxuFraction);
  return std::max(mxu, XlaElementwiseSeconds(chip, hbm_bytes));
}

double XlaElementwiseSeconds(const config::ChipConfig& chip, double hbm_bytes) {
  return hbm_bytes / (chip.hbm().bandwidth_bytes_per_s() * kXlaHbmFraction);
}

void XlaWork::Add(const XlaWork& inner) {
  dots.insert(dots.end(), inner.dots.begin(), inner.dots.end());
  vpu_ops += inner.vpu_ops;
}

double XlaWork::mxu_flops() const {
  double flops = 0;
  for (const Dot& d : dots)
    flops += d.flops;
  return flops;
}

double XlaWorkSeconds(const config::ChipConfig& chip, const XlaWork& work) {
  double mxu = 0;
  for (const XlaWork::Dot& d : work.dots)
    mxu += d.flops * MxuPasses(chip, d.operands, d.precision);
  mxu /= MxuPeakFlops(chip) * kXlaMxuFraction;
  const double vpu = work.vpu_ops / (static_cast<double>(chip.vpu_sublanes()) *
                                     static_cast<double>(chip.vpu_lanes()) * chip.clock_hz());
  return std::max({mxu, vpu, XlaElementwiseSeconds(chip, work.hbm_bytes)});
}

}  // namespace tpusim::dsl
