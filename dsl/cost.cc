#include "dsl/cost.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"

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

uint64_t MxuDotCycles(const config::ChipConfig& chip, int64_t m, int64_t k, int64_t n,
                      DType operands, Precision precision) {
  const int64_t size = chip.mxu_size();
  // One product: an [8, size] by [size, size] tile, 8 cycles on one MXU (docs/references.md §1).
  const int64_t products = CeilDiv(m, 8) * CeilDiv(k, size) * CeilDiv(n, size);
  const double one_pass = static_cast<double>(CeilDiv(products, chip.mxu_count()) * 8);
  const double cycles =
      one_pass * MxuPasses(chip, operands, precision) / chip.cost().mxu_efficiency();
  return static_cast<uint64_t>(std::ceil(cycles));
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

}  // namespace tpusim::dsl
