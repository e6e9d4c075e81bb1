#pragma once

// Work a core is asked to do, as a description: what kernels and programs hand the model
// (CorePort::Execute). The model's compute model (sim/compute_models.h) turns it into time
// on the core's units and bookings of its chip's HBM port; docs/time-model.md gives the
// formulas. Kernels and programs describe work, they never compute its time.
//
// The MXU facts every bound needs (passes per dot, the peak) are here too: they are the
// chip's, from its topology, not the time model's.

#include <cstdint>
#include <variant>
#include <vector>

namespace tpusim::config {
class ChipConfig;  // topologies/topology.proto
}

namespace tpusim::base {

// A dot's operands as the MXU takes them: bf16 (f16 too: no f16 path is published), f32,
// int8, or a wider integer, which takes int32's path.
enum class MxuInput { kBF16, kF32, kInt8, kInt32 };
// jax.lax.Precision: how many bf16 passes an f32 dot takes (docs/references.md §1).
enum class Precision { kDefault, kHigh, kHighest };

// One instruction of kernel code on the MXU: an [m, k] x [k, n] dot.
struct KernelDot {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  MxuInput input = MxuInput::kBF16;
  Precision precision = Precision::kDefault;
};

// One elementwise instruction of kernel code on the VPU: `elements` results of
// `element_bytes` each (16-bit values pack two to a 32-bit lane).
struct VectorOp {
  uint64_t elements = 0;
  uint32_t element_bytes = 4;
};

// The control work of one step of a grid or emit_pipeline. A step that pipelines at least
// one operand does index maps, DMA descriptors, semaphore waits and loop control; one whose
// operands are all ANY (a kernel that moves its own data) does the loop control alone.
struct GridStep {
  bool pipelined = true;
};

// The launch of a pallas_call on the core.
struct KernelLaunch {};

// A dot inside an XLA op: its FLOPs (2 x batch x M x N x K) and how the MXU runs it.
struct XlaDot {
  double flops = 0;
  MxuInput input = MxuInput::kBF16;
  Precision precision = Precision::kDefault;
};

// One compiled XLA op, a fusion included: the dots it runs on the MXU, the elementwise
// operations it runs on the VPU (one per element per operation), and the bytes it reads from
// and writes to HBM. It is launched once.
struct XlaOp {
  std::vector<XlaDot> dots;
  double vector_ops = 0;
  double hbm_read_bytes = 0;
  double hbm_write_bytes = 0;

  // A fusion's inner op: its dots and vector work join this op's; its HBM traffic does not
  // (inside a fusion, values stay on chip).
  void Add(const XlaOp& inner);
  double mxu_flops() const;
  double hbm_bytes() const { return hbm_read_bytes + hbm_write_bytes; }
  // No dots, no vector work, no traffic: nothing is launched (a constant, a bitcast).
  bool empty() const { return dots.empty() && vector_ops == 0 && hbm_bytes() == 0; }
};

using Work = std::variant<KernelDot, VectorOp, GridStep, KernelLaunch, XlaOp>;

// bf16 MXU passes of one dot, as XLA runs dots on TPU (docs/references.md §1, "Matmul
// precision"): bf16 one; f32 DEFAULT one, HIGH three, HIGHEST six; int8
// 1 / chip.cost.int8_mxu_rate; int32 chip.cost.int32_dot_passes.
double MxuPasses(const config::ChipConfig& chip, MxuInput input, Precision precision);

// bf16 FLOP/s of one chip at the MXU peak, every TensorCore's MXUs (an XLA op on a megacore
// chip uses both cores): tensor_cores x mxu_count x size^2 x 2 x clock.
double MxuPeakFlops(const config::ChipConfig& chip);
// 32-bit elements per second through every TensorCore's VPU: one vreg per cycle each.
double VpuElementsPerSecond(const config::ChipConfig& chip);

// An XLA op at the chip's peak rates alone (no launch, no achieved fractions): the longest
// of its MXU, VPU and HBM times. A lower bound, and a way to rank pieces of work without
// running them (which branch of a conditional is slowest).
double PeakSeconds(const config::ChipConfig& chip, const XlaOp& op);

}  // namespace tpusim::base
