#include "sim/compute_models.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/text.h"

namespace tpusim::sim {

namespace {

// A step of a grid whose operands are all ANY: its loop control alone (advance the grid
// indices, compare, branch) on the scalar core. No public figure; modelled as a few cycles,
// as a semaphore_read is (sim/core_thread.cc), so that no grid step is free.
constexpr uint64_t kGridLoopCycles = 4;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

uint64_t CyclesOf(double seconds, double clock_hz) {
  return static_cast<uint64_t>(std::ceil(seconds * clock_hz));
}

const char* InputName(base::MxuInput input) {
  switch (input) {
    case base::MxuInput::kBF16:
      return "bf16";
    case base::MxuInput::kF32:
      return "f32";
    case base::MxuInput::kInt8:
      return "int8";
    case base::MxuInput::kInt32:
      return "int32";
  }
  return "bf16";
}

// `seconds` of one piece of work, checked: not negative and at most kMaxWorkSeconds.
// Otherwise Error(kInvalidArgument) naming `what` ("a dot of ...") and `from`, the topology
// values its time comes from.
void CheckWorkSeconds(double seconds, const std::string& what, const std::string& from) {
  if (seconds >= 0 && seconds <= kMaxWorkSeconds) return;
  throw Error(ErrorKind::kInvalidArgument,
              what + " would take " + base::NumberText(seconds) +
                  " s of simulated time on one core, more than the " +
                  base::NumberText(kMaxWorkSeconds) +
                  " s one op may take (simulated time counts picoseconds in 64 bits). Its time "
                  "comes from " +
                  from + "; check them in the topology, or split the op into smaller ones.");
}

// tpusim's calibrated model: peak rates from the chip, achieved fractions and fixed costs
// from chip.cost (docs/time-model.md gives every formula and the calibration).
class Roofline final : public ComputeModel {
 public:
  explicit Roofline(const config::ChipConfig& chip) : chip_(chip), cost_(chip.cost()) {}

  ComputePlan Plan(const base::Work& work, std::string_view what) const override {
    return std::visit([&](const auto& w) { return PlanOf(w, what); }, work);
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
  ComputePlan PlanOf(const base::KernelDot& d, std::string_view) const {
    const int64_t size = chip_.mxu_size();
    // A product count past int64 is estimated in doubles, and fails the check below.
    int64_t products = 0;
    double one_pass = 0;
    if (__builtin_mul_overflow(CeilDiv(d.m, 8), CeilDiv(d.k, size), &products) ||
        __builtin_mul_overflow(products, CeilDiv(d.n, size), &products)) {
      one_pass =
          std::ceil(static_cast<double>(CeilDiv(d.m, 8)) * static_cast<double>(CeilDiv(d.k, size)) *
                    static_cast<double>(CeilDiv(d.n, size)) / chip_.mxu_count()) *
          8;
    } else {
      one_pass = static_cast<double>(CeilDiv(products, chip_.mxu_count()) * 8);
    }
    const double cycles =
        one_pass * MxuPasses(chip_, d.input, d.precision) / cost_.mxu_efficiency();
    if (!(cycles / chip_.clock_hz() <= kMaxWorkSeconds)) {
      std::string from =
          "chip.cost.mxu_efficiency (" + base::NumberText(cost_.mxu_efficiency()) + "), ";
      if (d.input == base::MxuInput::kInt8)
        from += "chip.cost.int8_mxu_rate (" + base::NumberText(cost_.int8_mxu_rate()) + "), ";
      if (d.input == base::MxuInput::kInt32) {
        from += "chip.cost.int32_dot_passes (" + base::NumberText(cost_.int32_dot_passes()) + "), ";
      }
      from += "chip.mxu_size (" + std::to_string(size) + "), chip.mxu_count (" +
              std::to_string(chip_.mxu_count()) + ") and chip.clock_hz (" +
              base::NumberText(chip_.clock_hz()) + ")";
      CheckWorkSeconds(cycles / chip_.clock_hz(),
                       "a dot of " + std::string(InputName(d.input)) + " [" + std::to_string(d.m) +
                           ", " + std::to_string(d.k) + "] x [" + std::to_string(d.k) + ", " +
                           std::to_string(d.n) + "]",
                       from);
    }
    ComputePlan plan;
    plan.unit = ComputeUnit::kMxu;
    plan.cycles = static_cast<uint64_t>(std::ceil(cycles));
    return plan;
  }

  // One vreg (sublanes x lanes 32-bit values; 16-bit ones pack two) per cycle, plus the
  // 2-cycle latency (docs/references.md §1).
  ComputePlan PlanOf(const base::VectorOp& v, std::string_view) const {
    const uint64_t per_vreg =
        uint64_t{chip_.vpu_sublanes()} * chip_.vpu_lanes() * (v.element_bytes == 2 ? 2 : 1);
    constexpr uint64_t kLatency = 2;
    ComputePlan plan;
    plan.unit = ComputeUnit::kVpu;
    plan.cycles = (v.elements + per_vreg - 1) / per_vreg + kLatency;
    return plan;
  }

  ComputePlan PlanOf(const base::GridStep& step, std::string_view) const {
    ComputePlan plan;
    plan.cycles = step.pipelined ? static_cast<uint64_t>(std::llround(cost_.grid_step_cycles()))
                                 : kGridLoopCycles;
    return plan;
  }

  ComputePlan PlanOf(const base::KernelLaunch&, std::string_view) const {
    ComputePlan plan;
    plan.launch = NanosecondsToTime(cost_.op_launch_ns());
    return plan;
  }

  // An XLA op: its launch, then its dots (MXU) or vector work (VPU) at XLA's achieved fraction
  // of the peak while its HBM traffic streams at XLA's achieved fraction of the bandwidth;
  // the software pipeline over ceil(bytes / step) steps exposes min(compute, memory) / steps.
  ComputePlan PlanOf(const base::XlaOp& op, std::string_view what) const {
    ComputePlan plan;
    if (op.empty()) return plan;  // nothing is launched
    plan.launch = NanosecondsToTime(cost_.op_launch_ns());
    double mxu = 0;
    for (const base::XlaDot& d : op.dots)
      mxu += d.flops * MxuPasses(chip_, d.input, d.precision);
    mxu /= MxuPeakFlops(chip_) * cost_.xla_mxu_efficiency();
    const double vpu = op.vector_ops / base::VpuElementsPerSecond(chip_);
    const double compute = std::max(mxu, vpu);
    const double hbm_rate = chip_.hbm().bandwidth_bytes_per_s() * cost_.xla_hbm_efficiency();
    if (!(std::max(compute, op.hbm_bytes() / hbm_rate) <= kMaxWorkSeconds)) {
      std::string from = "chip.hbm.bandwidth_bytes_per_s (" +
                         base::NumberText(chip_.hbm().bandwidth_bytes_per_s()) + ")";
      if (!op.dots.empty()) {
        from += " and the MXU peak (";
        if (chip_.tensor_cores() > 1)
          from += "chip.tensor_cores " + std::to_string(chip_.tensor_cores()) + ", ";
        from += "chip.mxu_count " + std::to_string(chip_.mxu_count()) + ", chip.mxu_size " +
                std::to_string(chip_.mxu_size()) + ", chip.clock_hz " +
                base::NumberText(chip_.clock_hz()) + ")";
      }
      CheckWorkSeconds(std::max(compute, op.hbm_bytes() / hbm_rate),
                       "the op '" + std::string(what) + "'", from);
    }
    plan.unit = op.dots.empty() ? ComputeUnit::kVpu : ComputeUnit::kMxu;
    plan.cycles = CyclesOf(compute, chip_.clock_hz());
    plan.hbm_bytes = static_cast<uint64_t>(std::llround(op.hbm_bytes()));
    plan.hbm_bytes_per_second = hbm_rate;
    const double step = cost_.xla_pipeline_step_bytes();
    if (step > 0 && plan.hbm_bytes > 0) {
      const double steps = std::max(1.0, std::ceil(static_cast<double>(plan.hbm_bytes) / step));
      const double memory = static_cast<double>(plan.hbm_bytes) / plan.hbm_bytes_per_second;
      plan.exposed =
          static_cast<Picoseconds>(std::llround(std::min(compute, memory) / steps * 1e12));
    }
    return plan;
  }

  // The chip's own (ComputeModels::Build): a copy each, two per chip of a pod, was the
  // largest thing a TensorCore allocated.
  const config::ChipConfig& chip_;
  const config::ComputeCostConfig& cost_;
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
