#include "tools/tpusim/run_memory.h"

#include <string>

#include "base/errors.h"
#include "base/time.h"

namespace tpusim::cli {

namespace {

bool IsInteger(dsl::DType dtype) {
  return dtype == dsl::DType::kInt8 || dtype == dsl::DType::kInt32;
}

// Doubles throughout: a sum of huge sizes saturates instead of wrapping.
double Bytes(const dsl::Shape& shape, dsl::DType dtype) {
  double elements = 1;
  for (const int64_t d : shape)
    elements *= static_cast<double>(d);
  return elements * dsl::SizeOf(dtype);
}

// What the host reference computes in, per element: f32, or 64 bits for integers.
double Widened(const dsl::Shape& shape, dsl::DType dtype) {
  return Bytes(shape, dtype) / dsl::SizeOf(dtype) * (IsInteger(dtype) ? 8 : 4);
}

struct Output {
  dsl::ShapeDtype global;
  dsl::Shape block;  // one device's
};

std::vector<Output> Outputs(const kernels::Workload& workload) {
  const dsl::ShardMap& program = workload.program;
  const dsl::Mesh& mesh = program.mesh();
  std::vector<Output> outputs;
  if (program.is_kernel()) {
    const auto& blocks = program.call().out_shape;
    for (size_t i = 0; i < blocks.size() && i < program.out_specs().size(); ++i) {
      const dsl::Shape global = program.out_specs()[i].GlobalShape(mesh, blocks[i].shape);
      outputs.push_back({{global, blocks[i].dtype}, blocks[i].shape});
    }
    return outputs;
  }
  std::vector<dsl::ShapeDtype> globals = workload.out_types;
  if (globals.empty()) {
    for (const auto& expected : workload.expected)
      globals.push_back({expected.shape(), expected.dtype()});
  }
  for (size_t i = 0; i < globals.size(); ++i) {
    dsl::Shape block = globals[i].shape;  // at most the global array
    if (i < program.out_specs().size()) {
      try {
        block = program.out_specs()[i].BlockShape(mesh, globals[i].shape, "output");
      } catch (const Error&) {
        // The run reports a spec that does not split; the estimate keeps the upper bound.
      }
    }
    outputs.push_back({globals[i], block});
  }
  return outputs;
}

}  // namespace

RunMemory EstimateRunMemory(const kernels::Workload& workload) {
  const dsl::ShardMap& program = workload.program;
  const dsl::Mesh& mesh = program.mesh();
  const double devices = mesh.devices();
  RunMemory need;
  for (size_t i = 0; i < workload.inputs.size(); ++i) {
    const dsl::Array& input = workload.inputs[i];
    need.host += Bytes(input.shape(), input.dtype()) + Widened(input.shape(), input.dtype());
    if (i < program.in_specs().size()) {
      const dsl::Shape block = program.in_specs()[i].BlockShape(mesh, input.shape(), "input");
      need.chips += devices * Bytes(block, input.dtype());
    }
  }
  for (const Output& out : Outputs(workload)) {
    const dsl::DType dtype = out.global.dtype;
    need.host += Bytes(out.global.shape, dtype) + Widened(out.global.shape, dtype);
    // In HBM and read back on every chip, then assembled once.
    need.chips += 2 * devices * Bytes(out.block, dtype) + Bytes(out.global.shape, dtype);
  }
  return need;
}

void RequireRunMemory(const kernels::Workload& workload, bool built) {
  const RunMemory need = EstimateRunMemory(workload);
  const double total = built ? need.chips : need.host + need.chips;
  const double most = static_cast<double>(~uint64_t{0});
  const auto bytes = [most](double b) {
    return b < most ? static_cast<uint64_t>(b) : ~uint64_t{0};
  };
  const std::string chips = std::to_string(workload.program.mesh().devices());
  const std::string what =
      "a functional run of " + workload.program.name() + " on " + chips + " chips (" +
      (built ? ""
             : "its inputs and host reference: " + base::FormatBytes(bytes(need.host)) + "; ") +
      "every chip's input and output blocks: " + base::FormatBytes(bytes(need.chips)) + ")";
  try {
    dsl::RequireHostMemory(bytes(total), what);
  } catch (const Error& e) {
    // The library says to run it timing-only; on the command line that is a flag.
    throw Error(e.kind(), std::string(e.what()) + " (flag --timing-only)");
  }
}

}  // namespace tpusim::cli
