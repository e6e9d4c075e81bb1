#include "sim/compute_models.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace tpusim::sim {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

uint64_t CyclesOf(double seconds, double clock_hz) {
  return static_cast<uint64_t>(std::ceil(seconds * clock_hz));
}

// tpusim's calibrated model: peak rates from the chip, achieved fractions and fixed costs
// from chip.cost (docs/time-model.md gives every formula and the calibration).
class Roofline final : public ComputeModel {
 public:
  explicit Roofline(const config::ChipConfig& chip) : chip_(chip), cost_(chip.cost()) {}

  ComputePlan Plan(const base::Work& work) const override {
    return std::visit([this](const auto& w) { return PlanOf(w); }, work);
  }

  std::vector<Parameter> parameters() const override {
    return {{"grid step", FormatNumber(cost_.grid_step_cycles()) + " cycles"},
            {"kernel MXU", FormatNumber(cost_.mxu_efficiency())},
            {"launch", FormatTime(NanosecondsToTime(cost_.op_launch_ns()))},
            {"XLA MXU", FormatNumber(cost_.xla_mxu_efficiency())},
            {"XLA HBM", FormatNumber(cost_.xla_hbm_efficiency())},
            {"XLA step", FormatNumber(cost_.xla_pipeline_step_bytes()) + " B"}};
  }

 private:
  // ceil(m/8) x ceil(k/S) x ceil(n/S) [8, S] x [S, S] products of 8 cycles on one of the
  // core's MXUs (docs/references.md §1), times the dot's passes, over the kernel efficiency.
  ComputePlan PlanOf(const base::KernelDot& d) const {
    const int64_t size = chip_.mxu_size();
    const int64_t products = CeilDiv(d.m, 8) * CeilDiv(d.k, size) * CeilDiv(d.n, size);
    const double one_pass = static_cast<double>(CeilDiv(products, chip_.mxu_count()) * 8);
    ComputePlan plan;
    plan.unit = ComputeUnit::kMxu;
    plan.cycles = static_cast<uint64_t>(
        std::ceil(one_pass * MxuPasses(chip_, d.input, d.precision) / cost_.mxu_efficiency()));
    return plan;
  }

  // One vreg (sublanes x lanes 32-bit values; 16-bit ones pack two) per cycle, plus the
  // 2-cycle latency (docs/references.md §1).
  ComputePlan PlanOf(const base::VectorOp& v) const {
    const uint64_t per_vreg =
        uint64_t{chip_.vpu_sublanes()} * chip_.vpu_lanes() * (v.element_bytes == 2 ? 2 : 1);
    constexpr uint64_t kLatency = 2;
    ComputePlan plan;
    plan.unit = ComputeUnit::kVpu;
    plan.cycles = (v.elements + per_vreg - 1) / per_vreg + kLatency;
    return plan;
  }

  ComputePlan PlanOf(const base::GridStep&) const {
    ComputePlan plan;
    plan.cycles = static_cast<uint64_t>(std::llround(cost_.grid_step_cycles()));
    return plan;
  }

  ComputePlan PlanOf(const base::KernelLaunch&) const {
    ComputePlan plan;
    plan.launch = NanosecondsToTime(cost_.op_launch_ns());
    return plan;
  }

  // An XLA op: its launch, then its dots (MXU) or vector work (VPU) at XLA's achieved fraction
  // of the peak while its HBM traffic streams at XLA's achieved fraction of the bandwidth;
  // the software pipeline over ceil(bytes / step) steps exposes min(compute, memory) / steps.
  ComputePlan PlanOf(const base::XlaOp& op) const {
    ComputePlan plan;
    if (op.empty()) return plan;  // nothing is launched
    plan.launch = NanosecondsToTime(cost_.op_launch_ns());
    double mxu = 0;
    for (const base::XlaDot& d : op.dots)
      mxu += d.flops * MxuPasses(chip_, d.input, d.precision);
    mxu /= MxuPeakFlops(chip_) * cost_.xla_mxu_efficiency();
    const double vpu = op.vector_ops / (static_cast<double>(chip_.vpu_sublanes()) *
                                        static_cast<double>(chip_.vpu_lanes()) * chip_.clock_hz());
    const double compute = std::max(mxu, vpu);
    plan.unit = op.dots.empty() ? ComputeUnit::kVpu : ComputeUnit::kMxu;
    plan.cycles = CyclesOf(compute, chip_.clock_hz());
    plan.hbm_bytes = static_cast<uint64_t>(std::llround(op.hbm_bytes()));
    plan.hbm_bytes_per_second = chip_.hbm().bandwidth_bytes_per_s() * cost_.xla_hbm_efficiency();
    const double step = cost_.xla_pipeline_step_bytes();
    if (step > 0 && plan.hbm_bytes > 0) {
      const double steps = std::max(1.0, std::ceil(static_cast<double>(plan.hbm_bytes) / step));
      const double memory = static_cast<double>(plan.hbm_bytes) / plan.hbm_bytes_per_second;
      plan.exposed =
          static_cast<Picoseconds>(std::llround(std::min(compute, memory) / steps * 1e12));
    }
    return plan;
  }

  config::ChipConfig chip_;
  config::ComputeCostConfig cost_;
};

ModelRegistry<ComputeModelInfo>& Models() {
  static ModelRegistry<ComputeModelInfo> models(
      "compute model",
      ComputeModelInfo{"roofline",
                       "kernel dots by MXU tile, vector ops by vreg, XLA ops at achieved "
                       "fractions of the peaks with a launch and a pipeline fill (the chip's "
                       "cost fields; docs/time-model.md)",
                       {},
                       [](const config::ChipConfig& chip, const ModelParameters&) {
                         return std::make_unique<Roofline>(chip);
                       }});
  return models;
}

}  // namespace

Picoseconds ComputePlan::Alone(double clock_hz) const {
  const Picoseconds unit_time = CyclesToTime(cycles, clock_hz);
  const Picoseconds memory = hbm_bytes ? TransferTime(hbm_bytes, hbm_bytes_per_second) : 0;
  return launch + std::max(unit_time, memory) + exposed;
}

void ComputeModels::Register(ComputeModelInfo model) {
  Models().Register(std::move(model));
}

const ComputeModelInfo* ComputeModels::Find(const std::string& name) {
  return Models().Find(name);
}

std::vector<const ComputeModelInfo*> ComputeModels::All() {
  return Models().All();
}

std::unique_ptr<ComputeModel> ComputeModels::Build(const config::ChipConfig& chip,
                                                   const std::string& what) {
  const std::string name = chip.cost().has_model() ? chip.cost().model() : "roofline";
  const ComputeModelInfo& model = Models().Require(name, what);
  return model.build(chip, CheckModelParameters(model.parameters, chip.cost().parameter(), what,
                                                "compute model", name));
}

}  // namespace tpusim::sim
